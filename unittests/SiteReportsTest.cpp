//===- SiteReportsTest.cpp - site reports as data through the C++ API -----===//
//
// The numbers Model::getSiteReports gives are those of the remarks lit tests
// check (test/passes/BlurPool.mlir): changed, skipped by reason with every
// skipped site's location, per pass run.
//
//===----------------------------------------------------------------------===//

#include "composer/API.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace composer;

namespace {

/// test/passes/BlurPool.mlir's first model, its convolutions located in
/// model.py: a 3-channel stem (skipped: in_channels < min-channels), a
/// strided conv and a max pool (both blurred), a stride-1 conv (no site).
constexpr const char *kModel = R"mlir(
module {
  composer.parameter @stem.weight : !composer.tensor<16x3x3x3xf32>
  composer.parameter @conv.weight : !composer.tensor<32x16x3x3xf32>
  composer.parameter @tail.weight : !composer.tensor<32x32x3x3xf32>
  func.func @forward(%x: !composer.tensor) -> !composer.tensor {
    %none = composer.constant(none) : !composer.none
    %sw = composer.get_param @stem.weight : !composer.tensor
    %s = composer.conv2d %x, %sw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor loc("model.py":3:9)
    %w = composer.get_param @conv.weight : !composer.tensor
    %y = composer.conv2d %s, %w, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor loc("model.py":4:9)
    %r = composer.relu %y : (!composer.tensor) -> !composer.tensor
    %p = composer.max_pool2d %r {ceil_mode = false, dilation = array<i64: 1, 1>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (!composer.tensor) -> !composer.tensor loc("model.py":6:9)
    %tw = composer.get_param @tail.weight : !composer.tensor
    %z = composer.conv2d %p, %tw, %none {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (!composer.tensor, !composer.tensor, !composer.none) -> !composer.tensor loc("model.py":7:9)
    return %z : !composer.tensor
  }
}
)mlir";

class SiteReportsTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("composer-site-reports",
                                                    "mlir", path));
    std::error_code error;
    llvm::raw_fd_ostream(path, error) << kModel;
    ASSERT_FALSE(error);
  }
  void TearDown() override { llvm::sys::fs::remove(path); }

  llvm::SmallString<128> path;
};

/// "model.py:LINE" for a file-line-column location, else "?".
std::string fileLine(mlir::Location loc) {
  auto fileLoc = mlir::dyn_cast<mlir::FileLineColLoc>(loc);
  if (!fileLoc)
    return "?";
  return fileLoc.getFilename().str() + ":" + std::to_string(fileLoc.getLine());
}

TEST_F(SiteReportsTest, EachRunHasItsCountsReasonsAndSites) {
  auto model = Model::load(path);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  EXPECT_TRUE(model->getSiteReports().empty());
  // A nested pass manager's adaptor is no run; canonicalize reports
  // nothing.
  ASSERT_FALSE(bool(model->runPipeline("builtin.module(composer-blurpool,"
                                       "composer-blurpool,"
                                       "func.func(canonicalize))")));
  llvm::ArrayRef<PassSiteReport> runs = model->getSiteReports();
  ASSERT_EQ(runs.size(), 3u);

  // REPORT: remark: composer-blurpool: 2 sites blurred, 1 skipped
  // REPORT: note: 1 skipped: in_channels < min-channels
  const PassSiteReport &first = runs[0];
  EXPECT_EQ(first.pass, "composer-blurpool");
  EXPECT_FALSE(first.failed);
  ASSERT_EQ(first.reports.size(), 1u);
  const SiteCounts &blurred = first.reports[0];
  EXPECT_EQ(blurred.what, "sites blurred");
  EXPECT_EQ(blurred.changed, 2u);
  EXPECT_EQ(blurred.inBranches, 0u);
  ASSERT_EQ(blurred.skipped.size(), 1u);
  EXPECT_EQ(blurred.skipped[0].reason, "in_channels < min-channels");
  ASSERT_EQ(blurred.skipped[0].sites.size(), 1u);
  EXPECT_EQ(fileLine(blurred.skipped[0].sites[0]), "model.py:3");
  EXPECT_EQ(first.getNumChanged(), 2u);
  EXPECT_EQ(first.getNumSkipped(), 1u);

  // TWICE: warning: composer-blurpool: 0 sites blurred, 3 skipped, by
  // first occurrence: the stem, then the conv and the pool.
  const PassSiteReport &second = runs[1];
  EXPECT_EQ(second.pass, "composer-blurpool");
  ASSERT_EQ(second.reports.size(), 1u);
  const SiteCounts &again = second.reports[0];
  EXPECT_EQ(again.changed, 0u);
  EXPECT_EQ(again.getNumSkipped(), 3u);
  ASSERT_EQ(again.skipped.size(), 2u);
  EXPECT_EQ(again.skipped[0].reason, "in_channels < min-channels");
  EXPECT_EQ(again.skipped[1].reason, "already blurred");
  ASSERT_EQ(again.skipped[1].sites.size(), 2u);
  EXPECT_EQ(fileLine(again.skipped[1].sites[0]), "model.py:4");
  EXPECT_EQ(fileLine(again.skipped[1].sites[1]), "model.py:6");

  EXPECT_EQ(runs[2].pass, "canonicalize");
  EXPECT_FALSE(runs[2].failed);
  EXPECT_TRUE(runs[2].reports.empty());
}

TEST_F(SiteReportsTest, AFailedRunIsMarkedAndEndsThePipeline) {
  auto model = Model::load(path);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  ASSERT_FALSE(bool(model->runPipeline("builtin.module(composer-blurpool)")));
  ASSERT_EQ(model->getSiteReports().size(), 1u);
  // Each runPipeline's runs replace the last one's.
  llvm::Error error = model->runPipeline(
      "builtin.module(composer-refine-types{input-specs=bad},"
      "composer-blurpool)");
  EXPECT_TRUE(bool(error));
  llvm::consumeError(std::move(error));
  llvm::ArrayRef<PassSiteReport> runs = model->getSiteReports();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].pass, "composer-refine-types");
  EXPECT_TRUE(runs[0].failed);
  EXPECT_TRUE(runs[0].reports.empty());
}

} // namespace
