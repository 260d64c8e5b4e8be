//===- APITest.cpp - load, transform and save through the C++ API ---------===//
//
// Uses real TorchScript models exported at test time by Debian's
// python3-torch (test/e2e_lib/models.py), and checks what the API writes in
// that stock PyTorch.
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
#include <sstream>

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

/// Runs a Python script (with torch) with arguments; returns its exit status.
int runPython(const std::string &name, const std::string &script,
              const std::string &arguments) {
  std::string path = tempPath(name);
  std::ofstream(path) << script;
  std::string command =
      std::string(COMPOSER_PYTHON) + " " + path + " " + arguments;
  return std::system(command.c_str());
}

/// Whether this process has a LibTorch library mapped.
bool libTorchIsMapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("libtorch") != std::string::npos;
}

TEST_F(APITest, LoadDeclaresEveryStateDictEntry) {
  auto model = Model::load(exportModel("unet", "script"));
  ASSERT_TRUE(bool(model)) << errorText(model.takeError());
  mlir::ModuleOp module = model->getModule();
  unsigned params = 0, buffers = 0;
  module.walk([&](ParameterOp) { ++params; });
  module.walk([&](BufferOp) { ++buffers; });
  // UNet: 5 blocks x (2 convs + 2 BN affine pairs), a transposed conv and
  // the upsampling's 1x1 conv with bias, 1 head conv with bias; 10 BNs with
  // 3 buffers each.
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

/// A small scripted model with a blur site of each kind: a strided
/// convolution with 16 input channels, and a max pool.
std::string exportBlurSitesModel() {
  std::string path = tempPath("blur-sites.pt");
  if (llvm::sys::fs::exists(path))
    return path;
  const char *script = R"(
import sys
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.down = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        x = torch.relu(self.down(torch.relu(self.stem(x))))
        return self.head(self.pool(x).mean(dim=(2, 3)))

torch.manual_seed(0)
torch.jit.script(Net().eval()).save(sys.argv[1])
)";
  EXPECT_EQ(runPython("blur_sites.py", script, path), 0);
  return path;
}

unsigned countBlurs(mlir::ModuleOp module) {
  unsigned blurs = 0;
  module.walk([&](BlurPool2dOp) { ++blurs; });
  return blurs;
}

TEST_F(APITest, SaveLowersMethodOpsAndPyTorchLoadsTheResult) {
  auto model = Model::load(exportBlurSitesModel());
  ASSERT_TRUE(bool(model)) << errorText(model.takeError());
  ASSERT_FALSE(bool(model->runPipeline("builtin.module(composer-blurpool)")));
  EXPECT_EQ(countBlurs(model->getModule()), 2u);
  // What MlirWorkNeverMapsLibTorch checks shows where LibTorch is loaded.
  EXPECT_TRUE(libTorchIsMapped());

  // Saved as composer-opt saves by default: blurs lowered to aten ops.
  std::string pt = tempPath("blurred.pt");
  ASSERT_FALSE(bool(model->save(pt)));
  const char *check = R"(
import sys
import torch
model = torch.jit.load(sys.argv[1]).eval()
filters = [k for k in model.state_dict() if "blurpool" in k]
assert len(filters) == 2, filters
code = model.code
assert "composer" not in code, code
out = model(torch.randn(2, 3, 16, 16))
assert out.shape == (2, 4), out.shape
)";
  EXPECT_EQ(runPython("check_blurred.py", check, pt), 0);

  // The lowering worked on a copy: the model keeps its method ops.
  EXPECT_EQ(countBlurs(model->getModule()), 2u);

  // Unlowered, TorchScript cannot hold them.
  SaveOptions unlowered;
  unlowered.lowerTo = LowerTo::None;
  std::string rejected = tempPath("unlowered.pt");
  llvm::Error error = model->save(rejected, unlowered);
  ASSERT_TRUE(bool(error));
  std::string message = errorText(std::move(error));
  EXPECT_NE(message.find("blur_pool2d"), std::string::npos) << message;
  EXPECT_FALSE(llvm::sys::fs::exists(rejected));
}

TEST_F(APITest, SaveLowersToRuntimeOpsOnRequest) {
  if (!COMPOSER_HAS_RUNTIME)
    GTEST_SKIP() << "built without the runtime library, whose operator "
                    "schemas the export needs (COMPOSER_BUILD_RUNTIME=OFF)";
  auto model = Model::load(exportBlurSitesModel());
  ASSERT_TRUE(bool(model)) << errorText(model.takeError());
  ASSERT_FALSE(bool(model->runPipeline("builtin.module(composer-blurpool)")));
  SaveOptions runtime;
  runtime.lowerTo = LowerTo::Runtime;
  std::string pt = tempPath("runtime.pt");
  ASSERT_FALSE(bool(model->save(pt, runtime)));
  // The saved code calls the runtime ops (loading it needs their library).
  const char *check = R"(
import sys
import zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    code = "".join(archive.read(n).decode() for n in archive.namelist()
                   if "/code/" in n and n.endswith(".py"))
assert "ops.composer.blur_max_pool2d(" in code, code
assert "ops.composer.blur_pool2d(" in code, code
)";
  EXPECT_EQ(runPython("check_runtime.py", check, pt), 0);
}

TEST_F(APITest, EveryTorchScriptExtensionReadsAndWritesTorchScript) {
  std::string pt = exportModel("unet", "script");
  for (const char *extension : {".pth", ".torchscript"}) {
    std::string copy = tempPath(std::string("unet-copy") + extension);
    ASSERT_FALSE(llvm::sys::fs::copy_file(pt, copy));
    auto model = Model::load(copy);
    ASSERT_TRUE(bool(model)) << errorText(model.takeError());
    std::string out = tempPath(std::string("unet-out") + extension);
    ASSERT_FALSE(bool(model->save(out)));
    auto reloaded = Model::load(out);
    ASSERT_TRUE(bool(reloaded)) << errorText(reloaded.takeError());
  }
}

TEST_F(APITest, MissingOperatorLibraryIsAnErrorNamingIt) {
  LoadOptions options;
  options.operatorLibraries.push_back(tempPath("no-such-ops.so"));
  auto model = Model::load(exportModel("unet", "script"), options);
  ASSERT_FALSE(bool(model));
  std::string message = errorText(model.takeError());
  EXPECT_NE(message.find("cannot load operator library"), std::string::npos)
      << message;
  EXPECT_NE(message.find("no-such-ops.so"), std::string::npos) << message;
}

// Work on .mlir loads no LibTorch: the API reaches it only through the
// TorchScript plugin. Checked in a fresh process (other tests load .pt).
TEST_F(APITest, MlirWorkNeverMapsLibTorch) {
  std::string mlir = tempPath("forward.mlir");
  std::ofstream(mlir) << R"(
func.func @forward(%x: !composer.tensor) -> !composer.tensor {
  return %x : !composer.tensor
}
)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        int status = 0;
        auto model = Model::load(mlir);
        if (!model) {
          llvm::consumeError(model.takeError());
          status = 2;
        } else if (llvm::Error error =
                       model->runPipeline("builtin.module(canonicalize)")) {
          llvm::consumeError(std::move(error));
          status = 3;
        } else if (llvm::Error error =
                       model->save(tempPath("forward.out.mlir"))) {
          llvm::consumeError(std::move(error));
          status = 4;
        } else if (libTorchIsMapped()) {
          status = 1;
        }
        // The child exits here, before the suite's teardown.
        llvm::sys::fs::remove_directories(tempDir);
        std::exit(status);
      },
      ::testing::ExitedWithCode(0), "");
}

} // namespace
