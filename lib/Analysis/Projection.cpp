//===- Projection.cpp - learned linear maps, however written --------------===//

#include "composer/Analysis/Projection.h"
#include "composer/Analysis/Matchers.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace composer {

namespace {

/// Whether `value` is the constant 1 (an int or a float).
bool isOne(Value value) {
  if (std::optional<int64_t> integer = getConstantInt(value))
    return *integer == 1;
  auto constant = value.getDefiningOp<ConstantOp>();
  auto number = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  return number && number.getValueAsDouble() == 1.0;
}

GenericOp asAddmm(Operation *op) {
  auto generic = dyn_cast_or_null<GenericOp>(op);
  if (!generic || !generic.isKind(AtenKind::addmm) ||
      generic->getNumOperands() != 5 || generic->getNumResults() != 1 ||
      !isOne(generic->getOperand(3)) || !isOne(generic->getOperand(4)))
    return GenericOp();
  return generic;
}

/// The input and size list of a view or reshape.
std::optional<std::pair<Value, Value>> getViewOperands(Operation *op) {
  if (auto view = dyn_cast_or_null<ViewOp>(op))
    return std::make_pair(view.getSelf(), view.getSize());
  if (auto reshape = dyn_cast_or_null<ReshapeOp>(op))
    return std::make_pair(reshape.getSelf(), reshape.getShape());
  return std::nullopt;
}

/// The elements of a prim::ListConstruct, or empty.
OperandRange getListElements(Value list) {
  if (GenericOp construct = getGeneric(list, "prim::ListConstruct"))
    return construct->getOperands();
  return OperandRange(nullptr, 0);
}

/// Whether `list` is [-1, x.size(-1)]: x flattened to 2-D.
bool isFlattenedSizes(Value list, Value x, std::optional<int64_t> rank) {
  OperandRange elements = getListElements(list);
  if (elements.size() != 2)
    return false;
  std::optional<int64_t> rows = getConstantInt(elements[0]);
  return rows && *rows == -1 && isSizeOf(elements[1], x, -1, rank);
}

/// Whether `list` is x's sizes but the last, followed by one size: as a
/// trace records it, [x.size(0), .., x.size(n-2), out], or as a script
/// computes it, list(x.size()[:-1]) + [out]. Sets `rank` to n if known.
bool isLeadingSizesPlusOne(Value list, Value x, std::optional<int64_t> &rank) {
  OperandRange elements = getListElements(list);
  if (!elements.empty()) {
    rank = elements.size();
    for (auto [index, element] : llvm::enumerate(elements.drop_back()))
      if (!isSizeOf(element, x, index, rank))
        return false;
    return true;
  }
  GenericOp concat = getGeneric(list, AtenKind::add);
  if (!concat || concat->getNumOperands() != 2 ||
      getListElements(concat->getOperand(1)).size() != 1)
    return false;
  Value leading = concat->getOperand(0);
  if (GenericOp copy = getGeneric(leading, AtenKind::list))
    leading = copy->getOperand(0);
  GenericOp slice = getGeneric(leading, AtenKind::slice);
  if (!slice || slice->getNumOperands() != 4)
    return false;
  GenericOp sizes = getGeneric(slice->getOperand(0), AtenKind::size);
  std::optional<int64_t> start = getConstantInt(slice->getOperand(1));
  std::optional<int64_t> end = getConstantInt(slice->getOperand(2));
  return sizes && sizes->getNumOperands() == 1 && sizes->getOperand(0) == x &&
         (isa<TorchNoneType>(slice->getOperand(1).getType()) ||
          (start && *start == 0)) &&
         end && *end == -1 && isOne(slice->getOperand(3));
}

std::optional<int64_t> getKnownRank(Value value) {
  auto type = dyn_cast<TorchTensorType>(value.getType());
  if (!type || !type.getHasRank())
    return std::nullopt;
  return type.getRank();
}

/// Adds to `ops` the generic nodes that compute `lists` from sizes (ints
/// and lists, never a tensor: x and what computes it stay) and are read
/// only by `ops` or by each other, then sorts `ops` into block order.
void addShapeOps(SmallVectorImpl<Operation *> &ops, ArrayRef<Value> lists) {
  llvm::SetVector<Operation *> candidates;
  SmallVector<Value> worklist(lists.begin(), lists.end());
  Block *block = ops.front()->getBlock();
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (isa<TorchTensorType>(value.getType()))
      continue;
    auto generic = value.getDefiningOp<GenericOp>();
    if (!generic || generic->getBlock() != block || !candidates.insert(generic))
      continue;
    llvm::append_range(worklist, generic->getOperands());
  }
  llvm::SmallPtrSet<Operation *, 16> kept(ops.begin(), ops.end());
  kept.insert(candidates.begin(), candidates.end());
  // Drop what something else reads, until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : candidates)
      if (kept.contains(op) && llvm::any_of(op->getUsers(), [&](Operation *u) {
            return !kept.contains(u);
          })) {
        kept.erase(op);
        changed = true;
      }
  }
  for (Operation *op : candidates)
    if (kept.contains(op))
      ops.push_back(op);
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
}

std::optional<Projection> matchAddmm(GenericOp addmm) {
  Projection projection;
  projection.product = addmm;
  projection.bias = addmm->getOperand(0);
  projection.weight = addmm->getOperand(2);
  projection.layout = WeightLayout::InOut;
  projection.ops.push_back(addmm);
  Value matrix = addmm->getOperand(1);
  Value product = addmm->getResult(0);
  Operation *flatten = matrix.getDefiningOp();
  auto flattenOperands = getViewOperands(flatten);
  Operation *unflatten = product.hasOneUse() ? *product.user_begin() : nullptr;
  auto unflattenOperands = getViewOperands(unflatten);
  // Both views, or neither: a 2-D input.
  if (!flattenOperands || !unflattenOperands || !matrix.hasOneUse() ||
      flatten->getBlock() != addmm->getBlock() ||
      unflatten->getBlock() != addmm->getBlock()) {
    projection.input = matrix;
    projection.result = product;
    return projection;
  }
  auto [x, flatSizes] = *flattenOperands;
  Value outSizes = unflattenOperands->second;
  std::optional<int64_t> rank = getKnownRank(x);
  if (!isLeadingSizesPlusOne(outSizes, x, rank) ||
      !isFlattenedSizes(flatSizes, x, rank)) {
    projection.input = matrix;
    projection.result = product;
    return projection;
  }
  projection.input = x;
  projection.result = unflatten->getResult(0);
  projection.ops.push_back(flatten);
  projection.ops.push_back(unflatten);
  addShapeOps(projection.ops, {flatSizes, outSizes});
  return projection;
}

} // namespace

bool Projection::readsAllOfInput() const {
  return llvm::all_of(input.getUsers(), [&](Operation *user) {
    return llvm::is_contained(ops, user);
  });
}

bool isProjectionProduct(Operation *op) {
  return isa_and_nonnull<LinearOp>(op) || asAddmm(op);
}

std::optional<Projection> matchProjectionAt(Operation *product) {
  if (auto linear = dyn_cast_or_null<LinearOp>(product)) {
    Projection projection;
    projection.input = linear.getInput();
    projection.weight = linear.getWeight();
    projection.bias = linear.getBias();
    projection.result = linear.getResult();
    projection.product = linear;
    projection.ops.push_back(linear);
    return projection;
  }
  if (GenericOp addmm = asAddmm(product))
    return matchAddmm(addmm);
  return std::nullopt;
}

std::optional<Projection> matchProjection(Value result) {
  Operation *def = result.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (isProjectionProduct(def)) {
    std::optional<Projection> projection = matchProjectionAt(def);
    return projection && projection->result == result ? projection
                                                      : std::nullopt;
  }
  auto operands = getViewOperands(def);
  if (!operands)
    return std::nullopt;
  std::optional<Projection> projection =
      matchProjectionAt(operands->first.getDefiningOp());
  return projection && projection->result == result ? projection : std::nullopt;
}

SmallVector<Projection> findProjectionsOf(Value input) {
  SmallVector<Projection> projections;
  for (Operation *user : input.getUsers()) {
    // A linear reads x itself; a Conv1D reads it through its flatten view.
    Operation *product = user;
    if (getViewOperands(user) && user->getResult(0).hasOneUse())
      product = *user->getResult(0).user_begin();
    if (!isProjectionProduct(product))
      continue;
    std::optional<Projection> projection = matchProjectionAt(product);
    if (projection && projection->input == input &&
        !llvm::any_of(projections, [&](const Projection &known) {
          return known.product == projection->product;
        }))
      projections.push_back(*projection);
  }
  return projections;
}

} // namespace composer
