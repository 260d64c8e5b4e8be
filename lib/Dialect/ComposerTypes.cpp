//===- ComposerTypes.cpp - composer dialect types -------------------------===//

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace composer;

#define GET_TYPEDEF_CLASSES
#include "composer/Dialect/ComposerTypes.cpp.inc"

void ComposerDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "composer/Dialect/ComposerTypes.cpp.inc"
      >();
}

bool composer::isValidDtype(Type type) {
  if (isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(type))
    return true;
  if (auto intType = dyn_cast<IntegerType>(type)) {
    unsigned width = intType.getWidth();
    if (intType.isSignless())
      return width == 1 || width == 8 || width == 16 || width == 32 ||
             width == 64;
    return intType.isUnsigned() && width == 8;
  }
  return false;
}

// Syntax: `!composer.tensor` (nothing known) | `<*x DTYPE>` |
// `<(DIM x)* DTYPE>`, where DIM is an integer or `?` and DTYPE a type or `unk`
// (unknown, as in torch-mlir; `?` would be ambiguous with a dimension).
Type TorchTensorType::parse(AsmParser &parser) {
  MLIRContext *ctx = parser.getContext();
  if (failed(parser.parseOptionalLess()))
    return TorchTensorType::get(ctx);
  bool hasRank = true;
  SmallVector<int64_t> sizes;
  SMLoc sizesLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalStar())) {
    hasRank = false;
    if (parser.parseXInDimensionList())
      return {};
  } else if (parser.parseDimensionList(sizes, /*allowDynamic=*/true,
                                       /*withTrailingX=*/true)) {
    return {};
  }
  Type dtype;
  if (failed(parser.parseOptionalKeyword("unk"))) {
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseType(dtype))
      return {};
    if (!isValidDtype(dtype)) {
      parser.emitError(loc, "expected a tensor dtype (f16, bf16, f32, f64, "
                            "i1, i8, i16, i32, i64, ui8) or 'unk', got ")
          << dtype;
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  if (llvm::any_of(sizes, [](int64_t size) {
        return size < 0 && size != kUnknownSize;
      })) {
    parser.emitError(sizesLoc, "negative dimension size");
    return {};
  }
  return TorchTensorType::get(ctx, hasRank, sizes, dtype);
}

void TorchTensorType::print(AsmPrinter &printer) const {
  if (!getHasRank() && !getDtype())
    return;
  printer << '<';
  if (!getHasRank()) {
    printer << "*x";
  } else {
    for (int64_t size : getSizes()) {
      if (size == kUnknownSize)
        printer << '?';
      else
        printer << size;
      printer << 'x';
    }
  }
  if (getDtype())
    printer << getDtype();
  else
    printer << "unk";
  printer << '>';
}

TorchTensorType TorchTensorType::meet(TorchTensorType other) const {
  Type dtype = getDtype() ? getDtype() : other.getDtype();
  if (getDtype() && other.getDtype() && getDtype() != other.getDtype())
    return {};
  if (!getHasRank())
    return TorchTensorType::get(getContext(), other.getHasRank(),
                                other.getSizes(), dtype);
  if (!other.getHasRank())
    return TorchTensorType::get(getContext(), true, getSizes(), dtype);
  if (getRank() != other.getRank())
    return {};
  SmallVector<int64_t> sizes;
  for (auto [lhs, rhs] : llvm::zip_equal(getSizes(), other.getSizes())) {
    if (lhs != kUnknownSize && rhs != kUnknownSize && lhs != rhs)
      return {};
    sizes.push_back(lhs == kUnknownSize ? rhs : lhs);
  }
  return TorchTensorType::get(getContext(), true, sizes, dtype);
}

TorchTensorType TorchTensorType::join(TorchTensorType other) const {
  Type dtype = getDtype() == other.getDtype() ? getDtype() : Type();
  if (!getHasRank() || !other.getHasRank() || getRank() != other.getRank())
    return TorchTensorType::get(getContext(), false, {}, dtype);
  SmallVector<int64_t> sizes;
  for (auto [lhs, rhs] : llvm::zip_equal(getSizes(), other.getSizes()))
    sizes.push_back(lhs == rhs ? lhs : kUnknownSize);
  return TorchTensorType::get(getContext(), true, sizes, dtype);
}
