//===- DialectTest.cpp - composer dialect C++ API -------------------------===//

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace composer;

namespace {

class DialectTest : public ::testing::Test {
protected:
  DialectTest() { ctx.loadDialect<ComposerDialect>(); }

  TorchTensorType tensor(std::optional<ArrayRef<int64_t>> sizes, Type dtype) {
    return TorchTensorType::get(&ctx, sizes.has_value(),
                                sizes ? *sizes : ArrayRef<int64_t>(), dtype);
  }

  MLIRContext ctx;
  Builder b{&ctx};
};

constexpr int64_t kUnknown = TorchTensorType::kUnknownSize;

TEST_F(DialectTest, MeetCombinesWhatEitherSideKnows) {
  auto partial = tensor(ArrayRef<int64_t>{kUnknown, 3}, Type());
  auto other = tensor(ArrayRef<int64_t>{8, kUnknown}, b.getF32Type());
  TorchTensorType met = partial.meet(other);
  ASSERT_TRUE(met);
  EXPECT_TRUE(met.hasStaticShape());
  EXPECT_EQ(met.getSizes(), ArrayRef<int64_t>({8, 3}));
  EXPECT_EQ(met.getDtype(), b.getF32Type());
}

TEST_F(DialectTest, MeetWithUnrankedKeepsTheShape) {
  auto ranked = tensor(ArrayRef<int64_t>{2, 4}, Type());
  auto unranked = tensor(std::nullopt, b.getBF16Type());
  TorchTensorType met = unranked.meet(ranked);
  ASSERT_TRUE(met);
  EXPECT_EQ(met.getSizes(), ArrayRef<int64_t>({2, 4}));
  EXPECT_EQ(met.getDtype(), b.getBF16Type());
}

TEST_F(DialectTest, MeetRejectsContradictions) {
  auto a = tensor(ArrayRef<int64_t>{2, 3}, b.getF32Type());
  EXPECT_FALSE(a.meet(tensor(ArrayRef<int64_t>{2, 4}, Type())));
  EXPECT_FALSE(a.meet(tensor(ArrayRef<int64_t>{2, 3, 1}, Type())));
  EXPECT_FALSE(a.meet(tensor(std::nullopt, b.getF16Type())));
}

TEST_F(DialectTest, ValidDtypes) {
  EXPECT_TRUE(isValidDtype(b.getF32Type()));
  EXPECT_TRUE(isValidDtype(b.getBF16Type()));
  EXPECT_TRUE(isValidDtype(b.getI1Type()));
  EXPECT_TRUE(isValidDtype(IntegerType::get(&ctx, 8, IntegerType::Unsigned)));
  EXPECT_FALSE(isValidDtype(IntegerType::get(&ctx, 16, IntegerType::Unsigned)));
  EXPECT_FALSE(isValidDtype(b.getIntegerType(7)));
  EXPECT_FALSE(isValidDtype(b.getIndexType()));
}

TEST_F(DialectTest, CompatibleTypes) {
  auto known = tensor(ArrayRef<int64_t>{1, 3}, b.getF32Type());
  EXPECT_TRUE(areCompatibleTypes(known, TorchTensorType::get(&ctx)));
  EXPECT_FALSE(
      areCompatibleTypes(known, tensor(ArrayRef<int64_t>{1, 4}, Type())));
  EXPECT_FALSE(areCompatibleTypes(known, IntType::get(&ctx)));
  EXPECT_TRUE(areCompatibleTypes(IntType::get(&ctx), IntType::get(&ctx)));
}

} // namespace
