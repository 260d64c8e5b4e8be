//===- APITest.cpp - load, transform and save through the C++ API ---------===//
//
// Uses real TorchScript models exported at test time by Debian's
// python3-torch (test/e2e_lib/models.py).
//
//===----------------------------------------------------------------------===//

#include "composer/API.h"
#include "composer/Dialect/Composer.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

using namespace composer;

namespace {

std::string tempDir;

std::string tempPath(llvm::StringRef name) {
  llvm::SmallString<256> path(tempDir);
  llvm::sys::path::append(path, name);
  return std::string(path);
}

/// Exports a model of test/e2e_lib/models.py to `<tempDir>/<name>-<mode>.pt`.
std::string exportModel(const std::string &name, const std::string &mode) {
  std::string path = tempPath(name + "-" + mode + ".pt");
  if (llvm::sys::fs::exists(path))
    return path;
  std::string command = std::string(COMPOSER_PYTHON) + " " +
                        COMPOSER_MODELS_SCRIPT + " " + name + " " + mode + " " +
                        path;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

class APITest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::SmallString<256> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("composer-api", dir));
    tempDir = std::string(dir);
  }
  static void TearDownTestSuite() {
    llvm::sys::fs::remove_directories(tempDir);
  }
};

std::string errorText(llvm::Error error) {
  return llvm::toString(std::move(error));
}

TEST_F(APITest, LoadDeclaresEveryStateDictEntry) {
  auto model = Model::load(exportModel("unet", "script"));
  ASSERT_TRUE(bool(model)) << errorText(model.takeError());
  mlir::ModuleOp module = model->getModule();
  unsigned params = 0, buffers = 0;
  module.walk([&](ParameterOp) { ++params; });
  module.walk([&](BufferOp) { ++buffers; });
  // UNet: 5 blocks x (2 convs + 2 BN affine pairs), 2 transposed convs with
  // bias, 1 head conv with bias; 10 BNs with 3 buffers each.
  EXPECT_EQ(params, 5u * (2 + 4) + 2 * 2 + 2);
  EXPECT_EQ(buffers, 10u * 3);
  auto weight = module.lookupSymbol<ParameterOp>("down1.0.weight");
  ASSERT_TRUE(weight);
  EXPECT_EQ(weight.getTensorType().getSizes(),
            llvm::ArrayRef<int64_t>({8, 3, 3, 3}));
  EXPECT_TRUE(module.lookupSymbol<BufferOp>("down1.1.running_mean"));
  EXPECT_TRUE(module.lookupSymbol<mlir::func::FuncOp>("forward"));
}

TEST_F(APITest, PipelineRefinesShapesAndSaveWritesLoadableFiles) {
  auto model = Model::load(exportModel("unet", "trace"));
  ASSERT_TRUE(bool(model)) << errorText(model.takeError());
  ASSERT_FALSE(bool(model->runPipeline(
      "builtin.module(composer-refine-types{input-specs=2x3x32x32xf32})")));
  auto forward = model->getModule().lookupSymbol<mlir::func::FuncOp>("forward");
  auto result = llvm::cast<TorchTensorType>(forward.getResultTypes()[0]);
  EXPECT_EQ(result.getSizes(), llvm::ArrayRef<int64_t>({2, 2, 32, 32}));

  std::string pt = tempPath("unet-refined.pt");
  std::string mlir = tempPath("unet-refined.mlir");
  ASSERT_FALSE(bool(model->save(pt)));
  ASSERT_FALSE(bool(model->save(mlir)));
  auto reloaded = Model::load(pt);
  ASSERT_TRUE(bool(reloaded)) << errorText(reloaded.takeError());
  auto fromText = Model::load(mlir);
  ASSERT_TRUE(bool(fromText)) << errorText(fromText.takeError());
  // The .mlir names its source model, so it can be written as .pt again.
  ASSERT_FALSE(bool(fromText->save(tempPath("unet-from-mlir.pt"))));
  EXPECT_TRUE(llvm::sys::fs::exists(tempPath("unet-from-mlir.pt")));
}

TEST_F(APITest, MissingFileIsAnErrorNamingIt) {
  auto model = Model::load(tempPath("does-not-exist.pt"));
  ASSERT_FALSE(bool(model));
  std::string message = errorText(model.takeError());
  EXPECT_NE(message.find("does-not-exist.pt"), std::string::npos) << message;
  EXPECT_NE(message.find("no such file"), std::string::npos) << message;
}

TEST_F(APITest, GarbageFileIsAnError) {
  std::string path = tempPath("garbage.pt");
  std::ofstream(path) << "this is not a zip archive";
  auto model = Model::load(path);
  ASSERT_FALSE(bool(model));
  std::string message = errorText(model.takeError());
  EXPECT_NE(message.find("cannot load TorchScript model"), std::string::npos)
      << message;
}

TEST_F(APITest, BadPipelineIsAnError) {
  auto model = Model::load(exportModel("unet", "script"));
  ASSERT_TRUE(bool(model)) << errorText(model.takeError());
  std::string message =
      errorText(model->runPipeline("builtin.module(no-such-pass)"));
  EXPECT_NE(message.find("no-such-pass"), std::string::npos) << message;
}

TEST_F(APITest, FailedSaveLeavesNoFile) {
  auto model = Model::load(exportModel("unet", "script"));
  ASSERT_TRUE(bool(model)) << errorText(model.takeError());
  std::string path = tempPath("no-such-dir/out.pt");
  llvm::Error error = model->save(path);
  ASSERT_TRUE(bool(error));
  EXPECT_NE(errorText(std::move(error)).find("cannot write"),
            std::string::npos);
  EXPECT_FALSE(llvm::sys::fs::exists(path));
}

} // namespace
