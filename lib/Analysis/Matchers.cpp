//===- Matchers.cpp - reading constants and generic nodes -----------------===//

#include "composer/Analysis/Matchers.h"

using namespace mlir;

namespace composer {

GenericOp getGeneric(Value value, AtenKind kind) {
  auto op = value.getDefiningOp<GenericOp>();
  return op && op.isKind(kind) ? op : GenericOp();
}

bool isGenericOf(Operation *op, std::initializer_list<AtenKind> kinds) {
  auto generic = dyn_cast_or_null<GenericOp>(op);
  return generic && llvm::any_of(kinds, [&](AtenKind kind) {
           return generic.isKind(kind);
         });
}

GenericOp getGeneric(Value value, StringRef kind) {
  auto op = value.getDefiningOp<GenericOp>();
  return op && op.getKind() == kind ? op : GenericOp();
}

bool isGenericOf(Operation *op, std::initializer_list<StringRef> kinds) {
  auto generic = dyn_cast_or_null<GenericOp>(op);
  return generic && llvm::is_contained(kinds, generic.getKind());
}

std::optional<int64_t> getConstantInt(Value value) {
  Operation *def = value.getDefiningOp();
  if (auto constant = dyn_cast_or_null<ConstantOp>(def)) {
    if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
      return integer.getInt();
    auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (elements && elements.isSplat() &&
        isa<IntegerType>(elements.getElementType()) &&
        elements.getType().getRank() == 0)
      return elements.getSplatValue<APInt>().getSExtValue();
    return std::nullopt;
  }
  if (isGenericOf(def, {AtenKind::Int}) ||
      isGenericOf(def, {"prim::NumToTensor"}))
    return getConstantInt(def->getOperand(0));
  return std::nullopt;
}

bool isZeroDimConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto elements =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  return elements && elements.getType().getRank() == 0;
}

bool isSizeOf(Value value, Value tensor, int64_t dim,
              std::optional<int64_t> rank) {
  GenericOp size = getGeneric(value, AtenKind::size);
  if (!size || size->getNumOperands() != 2 || size->getOperand(0) != tensor)
    return false;
  std::optional<int64_t> index = getConstantInt(size->getOperand(1));
  if (!index)
    return false;
  if (rank) {
    if (*index < 0)
      *index += *rank;
    if (dim < 0)
      dim += *rank;
  }
  return *index == dim;
}

static bool isSizeDerived(Value value, unsigned depth) {
  Operation *def = value.getDefiningOp();
  if (!def || depth > 4)
    return false;
  if (isGenericOf(def, {AtenKind::size}))
    return true;
  if (isGenericOf(def, {AtenKind::getitem, AtenKind::Int}) ||
      isGenericOf(def, {"prim::ListUnpack", "prim::NumToTensor"}))
    return isSizeDerived(def->getOperand(0), depth + 1);
  return false;
}

bool isSizeDerived(Value value) { return isSizeDerived(value, 0); }

} // namespace composer
