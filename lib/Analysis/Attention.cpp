//===- Attention.cpp - scaled dot-product attention, however written ------===//

#include "composer/Analysis/Attention.h"
#include "composer/Analysis/Matchers.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace composer {

namespace {

/// How far the analysis follows values between the ops of one attention.
constexpr unsigned kMaxChainLength = 16;

/// The elements of an int[] operand: prim::ListConstruct's operands or a
/// constant list's integers.
std::optional<SmallVector<OpFoldResult>> getListElements(Value list) {
  if (auto construct = getGeneric(list, "prim::ListConstruct"))
    return SmallVector<OpFoldResult>(construct->getOperands());
  if (auto constant = list.getDefiningOp<ConstantOp>())
    if (auto array = dyn_cast<ArrayAttr>(constant.getValue()))
      return SmallVector<OpFoldResult>(array.getValue());
  return std::nullopt;
}

/// The last elements of an int[] operand, as far as the graph tells them:
/// `complete` when `elements` is the whole list. Lists built by
/// concatenation (`list(t.size()[:-1]) + [heads, head_dim]`) end in the
/// known elements of their last part; a part of unknown length (a size
/// list, a slice of one) hides everything before it.
struct ListSuffix {
  SmallVector<OpFoldResult> elements;
  bool complete = false;
};

std::optional<ListSuffix> getListSuffix(Value list, unsigned depth = 0) {
  if (!isa<ListType>(list.getType()) || depth > kMaxChainLength)
    return std::nullopt;
  if (std::optional<SmallVector<OpFoldResult>> elements = getListElements(list))
    return ListSuffix{std::move(*elements), /*complete=*/true};
  if (auto copy = getGeneric(list, AtenKind::list);
      copy && copy->getNumOperands() == 1)
    return getListSuffix(copy->getOperand(0), depth + 1);
  auto concat = getGeneric(list, AtenKind::add);
  if (!concat || concat->getNumOperands() != 2)
    return ListSuffix();
  std::optional<ListSuffix> tail =
      getListSuffix(concat->getOperand(1), depth + 1);
  if (!tail || !tail->complete)
    return tail;
  std::optional<ListSuffix> head =
      getListSuffix(concat->getOperand(0), depth + 1);
  if (!head)
    return std::nullopt;
  llvm::append_range(head->elements, tail->elements);
  return head;
}

std::optional<int64_t> getFoldedInt(OpFoldResult element) {
  if (auto attr = dyn_cast<Attribute>(element)) {
    auto integer = dyn_cast<IntegerAttr>(attr);
    return integer ? std::optional(integer.getInt()) : std::nullopt;
  }
  return getConstantInt(cast<Value>(element));
}

/// The head count and layout of the scores `operand` (q, or k^T) is read
/// into: `operand` followed back through transposes, permutes, casts and
/// scalings to the view/reshape that splits heads out, whose sizes give H
/// at the position the heads end up in (dimension 1 of a rank-4 operand,
/// a factor of dimension 0 of a rank-3 one).
std::optional<AttentionHeads> findHeadCount(Value operand) {
  // The ops from the view to `operand`, last first.
  SmallVector<Operation *> moves;
  Value value = operand;
  std::optional<ListSuffix> sizes;
  for (unsigned step = 0; step < kMaxChainLength && !sizes; ++step) {
    Operation *def = value.getDefiningOp();
    if (!def || def->getNumOperands() == 0)
      return std::nullopt;
    if (isa<ViewOp, ReshapeOp>(def) ||
        isGenericOf(def, {AtenKind::view, AtenKind::reshape})) {
      if (def->getNumOperands() < 2)
        return std::nullopt;
      sizes = getListSuffix(def->getOperand(1));
      if (!sizes)
        return std::nullopt;
      break;
    }
    if (isGenericOf(def, {AtenKind::transpose, AtenKind::permute}))
      moves.push_back(def);
    else if (!isa<ContiguousOp, ToDtypeOp, MulOp>(def) &&
             !isGenericOf(def,
                          {AtenKind::contiguous, AtenKind::to, AtenKind::mul,
                           AtenKind::div, AtenKind::clone, AtenKind::type_as}))
      return std::nullopt;
    value = def->getOperand(0);
  }
  if (!sizes)
    return std::nullopt;
  // The view's rank: its list's length, or else a permute's on the way.
  int64_t rank = sizes->complete ? int64_t(sizes->elements.size()) : 0;
  for (Operation *move : moves)
    if (!sizes->complete && cast<GenericOp>(move).isKind(AtenKind::permute))
      if (std::optional<SmallVector<OpFoldResult>> perm =
              getListElements(move->getOperand(1)))
        rank = perm->size();
  if ((rank != 4 && rank != 3) || int64_t(sizes->elements.size()) > rank)
    return std::nullopt;
  // The known elements are the last ones; the unknown ones before them are
  // left empty.
  SmallVector<OpFoldResult> known(rank - sizes->elements.size(),
                                  OpFoldResult());
  llvm::append_range(known, sizes->elements);
  // Which view dimension each position of `operand` holds.
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  auto normalize = [&](OpFoldResult dim) -> std::optional<int64_t> {
    std::optional<int64_t> index = getFoldedInt(dim);
    if (!index || *index < -rank || *index >= rank)
      return std::nullopt;
    return *index < 0 ? *index + rank : *index;
  };
  for (Operation *move : llvm::reverse(moves)) {
    if (cast<GenericOp>(move).isKind(AtenKind::transpose)) {
      std::optional<int64_t> a = normalize(move->getOperand(1));
      std::optional<int64_t> b = normalize(move->getOperand(2));
      if (!a || !b)
        return std::nullopt;
      std::swap(order[*a], order[*b]);
      continue;
    }
    std::optional<SmallVector<OpFoldResult>> perm =
        getListElements(move->getOperand(1));
    if (!perm || int64_t(perm->size()) != rank)
      return std::nullopt;
    SmallVector<int64_t> permuted;
    for (OpFoldResult dim : *perm) {
      std::optional<int64_t> index = normalize(dim);
      if (!index)
        return std::nullopt;
      permuted.push_back(order[*index]);
    }
    order = permuted;
  }
  // A constant below 1 (view's -1) leaves the count to run time.
  auto fromSize = [](OpFoldResult size) -> std::optional<HeadCount> {
    if (!size)
      return std::nullopt;
    if (std::optional<int64_t> constant = getFoldedInt(size))
      return *constant >= 1 ? std::optional(HeadCount{constant, Value()})
                            : std::nullopt;
    auto value = cast<Value>(size);
    if (isa<IntType>(value.getType()))
      return HeadCount{std::nullopt, value};
    return std::nullopt;
  };
  if (rank == 4) {
    std::optional<HeadCount> heads = fromSize(known[order[1]]);
    if (!heads)
      heads = HeadCount{std::nullopt, Value(), /*fromScores=*/true};
    return AttentionHeads{*heads, HeadLayout::Split};
  }
  // Merged: B * H, as an int product (scripted) or aten::Int of a tensor
  // product (traced); H is the factor that is not a size.
  auto product = dyn_cast_if_present<Value>(known[order[0]]);
  if (!product)
    return std::nullopt;
  if (auto toInt = getGeneric(product, AtenKind::Int);
      toInt && toInt->getNumOperands() >= 1)
    product = toInt->getOperand(0);
  Operation *mul = product.getDefiningOp();
  if (!mul || mul->getNumOperands() < 2 ||
      !(isa<MulOp>(mul) || isGenericOf(mul, {AtenKind::mul})))
    return std::nullopt;
  Value lhs = mul->getOperand(0), rhs = mul->getOperand(1);
  for (auto [factor, other] : {std::pair(rhs, lhs), std::pair(lhs, rhs)}) {
    if (std::optional<int64_t> constant = getConstantInt(factor);
        constant && *constant >= 1)
      return AttentionHeads{HeadCount{constant, Value()}, HeadLayout::Merged};
    if (isSizeDerived(other) && !isSizeDerived(factor) &&
        isa<IntType>(factor.getType()))
      return AttentionHeads{HeadCount{std::nullopt, factor},
                            HeadLayout::Merged};
  }
  return std::nullopt;
}

/// H from scores typed [B, H, Tq, Tk] (composer-refine-types' shapes).
std::optional<AttentionHeads> getTypedHeadCount(Value scores) {
  auto type = dyn_cast<TorchTensorType>(scores.getType());
  if (!type || !type.getHasRank() || type.getRank() != 4 ||
      type.getSizes()[1] == TorchTensorType::kUnknownSize)
    return std::nullopt;
  return AttentionHeads{HeadCount{type.getSizes()[1], Value()},
                        HeadLayout::Split};
}

/// Follows `logits` back to the product of q and k: through additive masks,
/// masked_fill and where masks, scalings and casts. Fills `site`'s product,
/// scalings and masks.
bool findScores(Value logits, AttentionSite &site, unsigned depth = 0) {
  Operation *def = logits.getDefiningOp();
  if (!def || depth > kMaxChainLength)
    return false;
  if (isAttentionProduct(def)) {
    site.scoresProduct = def;
    return true;
  }
  auto isTensor = [](Value value) {
    return isa<TorchTensorType>(value.getType());
  };
  // Either operand of an add or a product may carry the scores.
  // Generic ops are checked for the operands read: their verifier checks
  // only the kind.
  if (isa<AddOp, MulOp>(def) ||
      (isGenericOf(def, {AtenKind::add, AtenKind::mul}) &&
       def->getNumOperands() >= 2)) {
    bool isAdd = isa<AddOp>(def) || isGenericOf(def, {AtenKind::add});
    for (unsigned i : {0u, 1u}) {
      AttentionSite found = site;
      if (!isTensor(def->getOperand(i)) ||
          !findScores(def->getOperand(i), found, depth + 1))
        continue;
      if (isAdd)
        found.masks.push_back(
            {AttentionMaskKind::Additive, &def->getOpOperand(1 - i)});
      else
        found.scalings.push_back(def);
      site = std::move(found);
      return true;
    }
    return false;
  }
  if (isGenericOf(def, {AtenKind::masked_fill, AtenKind::masked_fill_}) &&
      def->getNumOperands() >= 2) {
    site.masks.push_back({AttentionMaskKind::Select, &def->getOpOperand(1)});
    return findScores(def->getOperand(0), site, depth + 1);
  }
  if (isGenericOf(def, {AtenKind::where}) && def->getNumOperands() == 3) {
    site.masks.push_back({AttentionMaskKind::Select, &def->getOpOperand(0)});
    return findScores(def->getOperand(1), site, depth + 1);
  }
  if (isGenericOf(def, {AtenKind::div, AtenKind::true_divide}))
    site.scalings.push_back(def);
  if (isa<ToDtypeOp, ContiguousOp>(def) ||
      (isGenericOf(def, {AtenKind::div, AtenKind::true_divide, AtenKind::to,
                         AtenKind::type_as, AtenKind::contiguous,
                         AtenKind::to_float}) &&
       def->getNumOperands() >= 1))
    return findScores(def->getOperand(0), site, depth + 1);
  return false;
}

/// findValueProduct, `depth` ops from the softmax.
Operation *findValueProductFrom(Value probabilities, unsigned depth) {
  if (depth > kMaxChainLength)
    return nullptr;
  for (OpOperand &use : probabilities.getUses()) {
    Operation *user = use.getOwner();
    if (isAttentionProduct(user) && use.getOperandNumber() == 0)
      return user;
    if (isa<YieldOp>(user) && isa<IfOp>(user->getParentOp()))
      if (Operation *product = findValueProductFrom(
              user->getParentOp()->getResult(use.getOperandNumber()),
              depth + 1))
        return product;
    if ((isa<DropoutOp, ToDtypeOp, ContiguousOp>(user) ||
         isGenericOf(user, {AtenKind::dropout, AtenKind::to, AtenKind::type_as,
                            AtenKind::contiguous})) &&
        use.getOperandNumber() == 0)
      if (Operation *product =
              findValueProductFrom(user->getResult(0), depth + 1))
        return product;
  }
  return nullptr;
}

/// Whether `value` is a table of the model's state that no input reaches:
/// a buffer or parameter, sliced, indexed or computed from (rotary
/// embeddings' cos and sin, by position).
bool isStateTable(Value value) {
  SmallVector<std::pair<Value, unsigned>> worklist = {{value, 0}};
  bool readsState = false;
  llvm::SmallPtrSet<Value, 16> seen;
  while (!worklist.empty()) {
    auto [current, depth] = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    Operation *def = current.getDefiningOp();
    if (!def || depth > kMaxChainLength)
      return false;
    if (isa<GetParamOp>(def)) {
      readsState = true;
      continue;
    }
    // Sizes are ints: slicing a table to the sequence length reads no input.
    for (Value operand : def->getOperands())
      if (isa<TorchTensorType>(operand.getType()))
        worklist.push_back({operand, depth + 1});
  }
  return readsState;
}

/// Whether q (or k^T) carries rotary position embeddings: after layout
/// ops, x * cos + rotate(x) * sin with cos and sin state tables.
bool carriesRotaryEmbedding(Value operand) {
  for (unsigned depth = 0; depth <= kMaxChainLength; ++depth) {
    Operation *def = operand.getDefiningOp();
    if (!def || def->getNumOperands() == 0)
      return false;
    if (isa<AddOp>(def) ||
        (isGenericOf(def, {AtenKind::add}) && def->getNumOperands() >= 2)) {
      auto isTableProduct = [](Value term) {
        Operation *mul = term.getDefiningOp();
        return mul && mul->getNumOperands() >= 2 &&
               (isa<MulOp>(mul) || isGenericOf(mul, {AtenKind::mul})) &&
               (isStateTable(mul->getOperand(0)) ||
                isStateTable(mul->getOperand(1)));
      };
      return isTableProduct(def->getOperand(0)) &&
             isTableProduct(def->getOperand(1));
    }
    if (!(isa<ViewOp, ReshapeOp, ContiguousOp, ToDtypeOp>(def) ||
          isGenericOf(def, {AtenKind::transpose, AtenKind::permute,
                            AtenKind::contiguous, AtenKind::to, AtenKind::div,
                            AtenKind::mul})))
      return false;
    operand = def->getOperand(0);
  }
  return false;
}

/// nn.MultiheadAttention, scripted: its fused fast path (which takes no
/// bias) runs when a condition holds, and `site`'s op-by-op path otherwise,
/// in the else region of a composer.if around `site` whose then region has
/// the fused op, or (TorchScript's early return) whose condition another
/// composer.if with the fused op computes. Returns those fused ops.
SmallVector<GenericOp> findFusedFastPaths(Operation *site) {
  SmallVector<GenericOp> fused;
  auto collect = [&](Region &region) {
    region.walk([&](GenericOp op) {
      if (op.isKind(AtenKind::_native_multi_head_attention))
        fused.push_back(op);
    });
  };
  for (Operation *parent = site->getParentOp(); parent;
       parent = parent->getParentOp()) {
    auto ifOp = dyn_cast<IfOp>(parent);
    if (!ifOp || !ifOp.getElseRegion().isAncestor(site->getParentRegion()))
      continue;
    collect(ifOp.getThenRegion());
    if (auto returned = ifOp.getCondition().getDefiningOp<IfOp>())
      for (Region &region : returned->getRegions())
        collect(region);
  }
  return fused;
}

/// Ops a causal mask passes through on its way to masked_fill / where.
bool isMaskTransform(Operation *op) {
  return isa<ToDtypeOp>(op) ||
         isGenericOf(op, {AtenKind::bitwise_not, AtenKind::logical_not,
                          AtenKind::eq, AtenKind::ne, AtenKind::to,
                          AtenKind::type_as});
}

} // namespace

bool isAttentionProduct(Operation *op) {
  // A generic op's verifier checks its kind only: a product has both factors.
  return isa_and_nonnull<MatmulOp>(op) ||
         (isGenericOf(op, {AtenKind::matmul, AtenKind::bmm}) &&
          op->getNumOperands() >= 2);
}

Operation *findValueProduct(Value probabilities) {
  return findValueProductFrom(probabilities, 0);
}

std::optional<AttentionHeads> findAttentionHeads(Operation *scoresProduct) {
  std::optional<AttentionHeads> heads;
  for (std::optional<AttentionHeads> candidate :
       {findHeadCount(scoresProduct->getOperand(0)),
        findHeadCount(scoresProduct->getOperand(1)),
        getTypedHeadCount(scoresProduct->getResult(0))})
    if (candidate && (!heads || heads->count.fromScores))
      heads = candidate;
  return heads;
}

FailureOr<AttentionSite> matchAttention(SoftmaxOp softmax,
                                        std::string &reason) {
  reason.clear();
  AttentionSite site;
  site.softmax = softmax;
  site.valueProduct = findValueProduct(softmax.getResult());
  if (!site.valueProduct)
    return failure();
  auto refuse = [&](StringRef why) {
    reason = why.str();
    return failure();
  };
  auto type = dyn_cast<TorchTensorType>(softmax.getSelf().getType());
  int64_t dim = softmax.getDim();
  if (dim != -1 && !(type && type.getHasRank() && dim == type.getRank() - 1))
    return refuse("the softmax is not over the last dimension");
  if (!findScores(softmax.getSelf(), site))
    return refuse("the scores are not a matmul of q and k");
  site.hasRotaryEmbedding = carriesRotaryEmbedding(site.getQuery()) ||
                            carriesRotaryEmbedding(site.getKeyTransposed());
  site.heads = findAttentionHeads(site.scoresProduct);
  site.fusedFastPaths = findFusedFastPaths(softmax);
  return site;
}

std::vector<AttentionSite> findAttentionSites(Operation *root) {
  std::vector<AttentionSite> sites;
  std::string reason;
  root->walk([&](SoftmaxOp softmax) {
    if (FailureOr<AttentionSite> site = matchAttention(softmax, reason);
        succeeded(site))
      sites.push_back(std::move(*site));
  });
  return sites;
}

std::optional<StateMask> traceStateMask(const AttentionMask &mask) {
  StateMask state;
  Value value = mask.operand->get();
  if (mask.kind == AttentionMaskKind::Select) {
    while (Operation *def = value.getDefiningOp()) {
      if (!isMaskTransform(def) || def->getNumOperands() == 0 ||
          state.transforms.size() > kMaxChainLength)
        break;
      state.transforms.push_back(def);
      value = def->getOperand(0);
    }
  }
  state.sliced = value;
  while (auto slice = getGeneric(value, AtenKind::slice)) {
    if (slice->getNumOperands() != 5)
      break;
    state.slices.push_back(slice);
    value = slice->getOperand(0);
  }
  state.read = value.getDefiningOp<GetParamOp>();
  if (!state.read)
    return std::nullopt;
  return state;
}

} // namespace composer
