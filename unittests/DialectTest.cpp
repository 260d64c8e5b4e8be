//===- DialectTest.cpp - composer dialect C++ API -------------------------===//

#include "composer/Dialect/Composer.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

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

using torch_upstream::MemoryFormat;
using torch_upstream::ScalarType;

TEST_F(DialectTest, DtypesAndScalarTypesCorrespond) {
  for (int64_t code = 0; code <= int64_t(ScalarType::BFloat16); ++code) {
    auto scalarType = static_cast<ScalarType>(code);
    Type dtype = getDtypeType(&ctx, scalarType);
    // The dialect has a dtype exactly for the scalar types with a name.
    EXPECT_EQ(bool(dtype),
              !torch_upstream::getScalarTypeName(scalarType).empty())
        << "code " << code;
    if (!dtype)
      continue;
    EXPECT_TRUE(isValidDtype(dtype));
    EXPECT_EQ(getScalarType(dtype), scalarType);
    std::string printed;
    llvm::raw_string_ostream(printed) << dtype;
    EXPECT_EQ(printed, torch_upstream::getScalarTypeName(scalarType));
  }
  EXPECT_EQ(getScalarType(b.getIndexType()), std::nullopt);
  EXPECT_EQ(getScalarType(Type()), std::nullopt);
}

TEST_F(DialectTest, TorchEnumAttributesPrintByName) {
  auto dtype = ScalarTypeAttr::get(&ctx, ScalarType::BFloat16);
  EXPECT_EQ(dtype.getValue(), ScalarType::BFloat16);
  std::string printed;
  llvm::raw_string_ostream(printed) << Attribute(dtype);
  EXPECT_EQ(printed, "#composer.dtype<bf16>");
  EXPECT_EQ(parseAttribute(printed, &ctx), dtype);

  auto format = MemoryFormatAttr::get(&ctx, MemoryFormat::ChannelsLast);
  printed.clear();
  llvm::raw_string_ostream(printed) << Attribute(format);
  EXPECT_EQ(printed, "#composer.memory_format<channels_last>");
  EXPECT_EQ(parseAttribute(printed, &ctx), format);
}

/// The ops of a small graph, by name, for the interface tests.
class OpInterfacesTest : public DialectTest {
protected:
  void SetUp() override {
    module = parseSourceString<ModuleOp>(R"mlir(
      func.func @f(%x: !composer.tensor<1x3x8x8xf32>,
                   %w: !composer.tensor<4x3x3x3xf32>,
                   %filter: !composer.tensor<4x1x3x3xf32>)
          -> !composer.tensor {
        %none = composer.constant(none) : !composer.none
        %conv = composer.conv2d %x, %w, %none {stride = array<i64: 2, 2>,
            padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>,
            groups = 1 : i64}
            : (!composer.tensor<1x3x8x8xf32>, !composer.tensor<4x3x3x3xf32>,
               !composer.none) -> !composer.tensor
        %relu = composer.relu %conv : (!composer.tensor) -> !composer.tensor
        %sum = composer.add %relu, %conv {alpha = 1 : i64}
            : (!composer.tensor, !composer.tensor) -> !composer.tensor
        %blur = composer.blur_pool2d %sum, %filter {stride = array<i64: 1, 1>}
            : (!composer.tensor, !composer.tensor<4x1x3x3xf32>) -> !composer.tensor
        %flat = composer.flatten %blur {start_dim = 1 : i64, end_dim = -1 : i64}
            : (!composer.tensor) -> !composer.tensor
        return %flat : !composer.tensor
      }
    )mlir",
                                         &ctx);
    ASSERT_TRUE(module);
    module->walk(
        [&](Operation *op) { ops[op->getName().getStringRef()] = op; });
  }

  OwningOpRef<ModuleOp> module;
  llvm::StringMap<Operation *> ops;
};

TEST_F(OpInterfacesTest, ConvolutionLike) {
  auto conv = dyn_cast<ConvolutionLike>(ops["composer.conv2d"]);
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv.getStride(), ArrayRef<int64_t>({2, 2}));
  EXPECT_EQ(conv.getPadding(), ArrayRef<int64_t>({1, 1}));
  EXPECT_EQ(conv.getGroups(), 1);
  EXPECT_FALSE(conv.isTransposed());
  EXPECT_EQ(conv.getNumSpatialDims(), 2u);
  EXPECT_EQ(&conv.getInputMutable(), &conv->getOpOperand(0));
  conv.setStride({1, 1});
  EXPECT_EQ(cast<Conv2dOp>(conv).getStride(), ArrayRef<int64_t>({1, 1}));
  EXPECT_FALSE(isa<ConvolutionLike>(ops["composer.relu"]));
}

TEST_F(OpInterfacesTest, MethodOpsAndLayoutTraits) {
  EXPECT_TRUE(isa<MethodOp>(ops["composer.blur_pool2d"]));
  EXPECT_FALSE(isa<MethodOp>(ops["composer.conv2d"]));

  Operation *relu = ops["composer.relu"], *add = ops["composer.add"];
  EXPECT_TRUE(relu->hasTrait<composer::OpTrait::PreservesLayout>());
  EXPECT_TRUE(ops["composer.blur_pool2d"]
                  ->hasTrait<composer::OpTrait::PreservesLayout>());
  EXPECT_FALSE(
      ops["composer.flatten"]->hasTrait<composer::OpTrait::PreservesLayout>());
  EXPECT_TRUE(isLayoutSource(relu->getOpOperand(0)));
  EXPECT_TRUE(isLayoutSource(add->getOpOperand(0)));
  EXPECT_TRUE(isLayoutSource(add->getOpOperand(1)));
  // The filter is not where blur_pool2d's layout comes from.
  EXPECT_FALSE(isLayoutSource(ops["composer.blur_pool2d"]->getOpOperand(1)));
  EXPECT_FALSE(isLayoutSource(ops["composer.flatten"]->getOpOperand(0)));
}

TEST_F(OpInterfacesTest, InferTorchType) {
  SymbolTableCollection symbolTables;
  auto infer = [&](StringRef name) {
    return cast<InferTorchTypeOpInterface>(ops[name]).inferResultType(
        symbolTables);
  };
  EXPECT_EQ(infer("composer.conv2d"),
            tensor(ArrayRef<int64_t>{1, 4, 4, 4}, b.getF32Type()));
  // relu and add take their operands' types, unknown here until refined.
  EXPECT_EQ(infer("composer.relu"), TorchTensorType::get(&ctx));
  EXPECT_EQ(infer("composer.add"), TorchTensorType::get(&ctx));
  // Method ops have rules too (sizes reach the FLOP count past them); the
  // blur's input is unknown here until refined.
  EXPECT_EQ(infer("composer.blur_pool2d"), TorchTensorType::get(&ctx));
}

} // namespace
