//===- ALiBi.cpp - attention with linear biases ---------------------------===//
//
// ALiBi (Press et al. 2021) as METHODS.md states it, on attention found from
// the graph in any model: a softmax over the last dimension of scores
// computed from matmul(q, k^T) (scaled, masked by masked_fill or where, or
// plus an additive mask) whose probabilities feed matmul(., v). Before the
// softmax the pass adds -m_h |i - j|, i and j built at run time from the
// scores' sizes, so nothing depends on a maximum sequence length. Learned
// position embeddings (an embedding of torch.arange positions added to
// another value) leave the graph, and fixed-size causal masks (a buffer
// sliced to the sequence length) become tril(ones) of the scores' size;
// export checks that such a buffer holds lower-triangular ones
// (lib/TorchScript/State.cpp, initializer "tril_ones"). Everything is built
// from aten ops, so there is nothing to lower.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "Report.h"
#include "composer/Analysis/Matchers.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

namespace composer {
#define GEN_PASS_DEF_ALIBI
#include "composer/Passes/Passes.h.inc"
} // namespace composer

using namespace mlir;
using namespace composer;

namespace {

/// Marks a softmax the pass gave a bias, which keeps it idempotent.
constexpr StringLiteral kAlibiAttrName = "composer.alibi";
/// The initializers export checks a causal-mask buffer and a
/// position-index buffer against (StatePaths.h).
constexpr StringRef kCausalMaskInit = kTrilOnesInit;
constexpr StringRef kPositionIdsInit = kArangeInit;
constexpr StringRef kTokenTypesInit = kZerosInit;
/// How far the pass follows values between the ops of one attention.
constexpr unsigned kMaxChainLength = 16;

/// Press et al.'s slopes, m_h = 2^(-8h/H) for h = 1..H when H is a power of
/// two; otherwise the slopes of the closest lower power of two n, then every
/// other slope of 2n (h = 1, 3, ...) until there are H.
SmallVector<double> getAlibiSlopes(int64_t heads) {
  int64_t lower = int64_t(llvm::bit_floor(uint64_t(heads)));
  SmallVector<double> slopes;
  for (int64_t h = 1; h <= lower; ++h)
    slopes.push_back(std::exp2(-8.0 * double(h) / double(lower)));
  for (int64_t h = 1; int64_t(slopes.size()) < heads; h += 2)
    slopes.push_back(std::exp2(-8.0 * double(h) / double(2 * lower)));
  return slopes;
}

/// Whether `value` is a size of a tensor (aten::size, an element of its
/// list, or the same as a 0-d tensor): the batch a product with the head
/// count is taken with.
bool isSizeDerived(Value value, unsigned depth = 0) {
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

/// Whether `value` is None or the constant `expected`.
bool isNoneOrInt(Value value, int64_t expected) {
  if (isa<TorchNoneType>(value.getType()))
    return true;
  std::optional<int64_t> constant = getConstantInt(value);
  return constant && *constant == expected;
}

/// The head count of an attention: a constant, an int the graph computes
/// (a module attribute, say), or, for scores known to be [B, H, Tq, Tk]
/// whose view leaves H to run time (`view(B, T, -1, D)`, sizes listed as
/// `list(x.size()[:-1]) + [H, D]` with H unknown), the scores' size(-3).
struct HeadCount {
  std::optional<int64_t> constant;
  Value value;
  bool fromScores = false;
};

/// How scores hold heads: [B, H, Tq, Tk] (split), or [B*H, Tq, Tk] (merged,
/// as nn.MultiheadAttention's bmm has them, batch-major).
enum class HeadLayout { Split, Merged };

/// Sites the pass could not rewrite, with the reason: attention it could not
/// bias, position embeddings it could not remove. Any of them makes the
/// whole pass refuse (ALiBiPass::runOnOperation).
struct Refusal {
  Location site;
  std::string reason;
};
using Refusals = SmallVector<Refusal>;

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
  if (auto copy = getGeneric(list, AtenKind::list))
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
std::optional<std::pair<HeadCount, HeadLayout>> findHeadCount(Value operand) {
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
    return std::make_pair(*heads, HeadLayout::Split);
  }
  // Merged: B * H, as an int product (scripted) or aten::Int of a tensor
  // product (traced); H is the factor that is not a size.
  auto product = dyn_cast_if_present<Value>(known[order[0]]);
  if (!product)
    return std::nullopt;
  if (auto toInt = getGeneric(product, AtenKind::Int))
    product = toInt->getOperand(0);
  Operation *mul = product.getDefiningOp();
  if (!mul || !(isa<MulOp>(mul) || isGenericOf(mul, {AtenKind::mul})))
    return std::nullopt;
  Value lhs = mul->getOperand(0), rhs = mul->getOperand(1);
  for (auto [factor, other] : {std::pair(rhs, lhs), std::pair(lhs, rhs)}) {
    if (std::optional<int64_t> constant = getConstantInt(factor);
        constant && *constant >= 1)
      return std::make_pair(HeadCount{constant, Value()}, HeadLayout::Merged);
    if (isSizeDerived(other) && !isSizeDerived(factor) &&
        isa<IntType>(factor.getType()))
      return std::make_pair(HeadCount{std::nullopt, factor},
                            HeadLayout::Merged);
  }
  return std::nullopt;
}

/// H from scores typed [B, H, Tq, Tk] (composer-refine-types' shapes).
std::optional<std::pair<HeadCount, HeadLayout>>
getTypedHeadCount(Value scores) {
  auto type = dyn_cast<TorchTensorType>(scores.getType());
  if (!type || !type.getHasRank() || type.getRank() != 4 ||
      type.getSizes()[1] == TorchTensorType::kUnknownSize)
    return std::nullopt;
  return std::make_pair(HeadCount{type.getSizes()[1], Value()},
                        HeadLayout::Split);
}

/// What the pass found between a softmax and the q k^T matmul.
struct Scores {
  Operation *matmul = nullptr;
  /// The mask operands of masked_fill / where ops on the way.
  SmallVector<OpOperand *> masks;
  /// Additive masks read from a buffer (left alone, reported).
  SmallVector<Value> additiveMasks;
};

bool isMatmul(Operation *op) {
  return isa_and_nonnull<MatmulOp>(op) ||
         isGenericOf(op, {AtenKind::matmul, AtenKind::bmm});
}

/// Follows `logits` back to the matmul of q and k: through additive masks,
/// masked_fill and where masks, scalings and casts.
bool findScores(Value logits, Scores &scores, unsigned depth = 0) {
  Operation *def = logits.getDefiningOp();
  if (!def || depth > kMaxChainLength)
    return false;
  if (isMatmul(def)) {
    scores.matmul = def;
    return true;
  }
  auto isTensor = [](Value value) {
    return isa<TorchTensorType>(value.getType());
  };
  // Either operand of an add or a product may carry the scores.
  if (isa<AddOp, MulOp>(def) ||
      isGenericOf(def, {AtenKind::add, AtenKind::mul})) {
    for (unsigned i : {0u, 1u}) {
      Scores found = scores;
      if (!isTensor(def->getOperand(i)) ||
          !findScores(def->getOperand(i), found, depth + 1))
        continue;
      Value other = def->getOperand(1 - i);
      if (isa<AddOp>(def) || isGenericOf(def, {AtenKind::add}))
        found.additiveMasks.push_back(other);
      scores = std::move(found);
      return true;
    }
    return false;
  }
  if (isGenericOf(def, {AtenKind::masked_fill, AtenKind::masked_fill_})) {
    scores.masks.push_back(&def->getOpOperand(1));
    return findScores(def->getOperand(0), scores, depth + 1);
  }
  if (isGenericOf(def, {AtenKind::where}) && def->getNumOperands() == 3) {
    scores.masks.push_back(&def->getOpOperand(0));
    return findScores(def->getOperand(1), scores, depth + 1);
  }
  if (isa<ToDtypeOp, ContiguousOp>(def) ||
      isGenericOf(def, {AtenKind::div, AtenKind::true_divide, AtenKind::to,
                        AtenKind::type_as, AtenKind::contiguous,
                        AtenKind::to_float}))
    return findScores(def->getOperand(0), scores, depth + 1);
  return false;
}

/// Whether the probabilities `probs` are multiplied with v: operand 0 of a
/// matmul, after dropout or casts, possibly through a composer.if.
bool feedsValueMatmul(Value probs, unsigned depth = 0) {
  if (depth > kMaxChainLength)
    return false;
  for (OpOperand &use : probs.getUses()) {
    Operation *user = use.getOwner();
    if (isMatmul(user) && use.getOperandNumber() == 0)
      return true;
    if (isa<YieldOp>(user) && isa<IfOp>(user->getParentOp()) &&
        feedsValueMatmul(user->getParentOp()->getResult(use.getOperandNumber()),
                         depth + 1))
      return true;
    if ((isa<DropoutOp, ToDtypeOp, ContiguousOp>(user) ||
         isGenericOf(user, {AtenKind::dropout, AtenKind::to, AtenKind::type_as,
                            AtenKind::contiguous})) &&
        use.getOperandNumber() == 0 &&
        feedsValueMatmul(user->getResult(0), depth + 1))
      return true;
  }
  return false;
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
    if (!def)
      return false;
    if (isa<AddOp>(def) || isGenericOf(def, {AtenKind::add})) {
      auto isTableProduct = [](Value term) {
        Operation *mul = term.getDefiningOp();
        return mul && (isa<MulOp>(mul) || isGenericOf(mul, {AtenKind::mul})) &&
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

/// Whether `value` can be read at `op`: defined in a region around it,
/// before it.
bool isAvailableAt(Value value, Operation *op) {
  Block *block = value.getParentBlock();
  Operation *ancestor = block->findAncestorOpInBlock(*op);
  if (!ancestor)
    return false;
  Operation *def = value.getDefiningOp();
  return !def || def->isBeforeInBlock(ancestor);
}

/// Erases `op` and the constants only it used.
void eraseWithConstants(PatternRewriter &rewriter, Operation *op) {
  SetVector<Operation *> constants;
  for (Value operand : op->getOperands())
    if (auto constant = operand.getDefiningOp<ConstantOp>())
      constants.insert(constant);
  rewriter.eraseOp(op);
  for (Operation *constant : constants)
    if (constant->use_empty())
      rewriter.eraseOp(constant);
}

/// Whether `logits` already carry a bias of the form this pass adds:
/// scores + (slopes * |j - i|), i and j from torch.arange (also in a model
/// this pass wrote and export saved, where `composer.alibi` is gone).
bool hasDistanceBias(Value logits) {
  if (auto reshape = getGeneric(logits, AtenKind::reshape))
    logits = reshape->getOperand(0);
  auto add = logits.getDefiningOp<AddOp>();
  if (!add)
    return false;
  Value bias = add.getOther();
  if (auto cast = getGeneric(bias, AtenKind::type_as))
    bias = cast->getOperand(0);
  Operation *mul = bias.getDefiningOp();
  if (!mul || !(isa<MulOp>(mul) || isGenericOf(mul, {AtenKind::mul})))
    return false;
  return llvm::any_of(mul->getOperands(), [](Value factor) {
    auto abs = getGeneric(factor, AtenKind::abs);
    auto sub =
        abs ? getGeneric(abs->getOperand(0), AtenKind::sub) : GenericOp();
    if (!sub)
      return false;
    return llvm::all_of(sub->getOperands().take_front(2), [](Value position) {
      if (auto unsqueeze = getGeneric(position, AtenKind::unsqueeze))
        position = unsqueeze->getOperand(0);
      return static_cast<bool>(getGeneric(position, AtenKind::arange));
    });
  });
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

/// Makes the condition of the composer.if that runs `fused` false wherever
/// it is read (it is also TorchScript's early-return flag), so the op-by-op
/// path always runs.
void disableFastPath(GenericOp fused, PatternRewriter &rewriter) {
  auto ifOp = dyn_cast<IfOp>(fused->getParentOp());
  if (!ifOp || !ifOp.getThenRegion().isAncestor(fused->getParentRegion()))
    return;
  Value condition = ifOp.getCondition();
  if (condition.getDefiningOp<ConstantOp>())
    return;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfterValue(condition);
  Value never = AtenBuilder(rewriter, ifOp.getLoc()).boolean(false);
  rewriter.replaceAllUsesWith(condition, never);
}

/// Ops a causal mask passes through on its way to masked_fill / where.
bool isMaskTransform(Operation *op) {
  return isa<ToDtypeOp>(op) ||
         isGenericOf(op, {AtenKind::bitwise_not, AtenKind::logical_not,
                          AtenKind::eq, AtenKind::ne, AtenKind::to,
                          AtenKind::type_as});
}

/// The fixed-size causal masks the pass rebuilds from the sequence length.
class CausalMasks {
public:
  CausalMasks(SymbolTableCollection &symbolTables, SiteReport &report)
      : symbolTables(symbolTables), report(report) {}

  /// If `maskUse` (masked_fill's mask, where's condition) reads a buffer
  /// sliced to the scores' size, `buffer[..., r0:, c0:]`, reads
  /// tril(ones(Tq, Tk), r0 - c0) of the size of `scored` (the tensor
  /// masked) instead and records that the buffer must be lower-triangular
  /// ones. Masks computed otherwise already fit any length.
  void rewrite(OpOperand *maskUse, Value scored, PatternRewriter &rewriter) {
    Operation *consumer = maskUse->getOwner();
    // From the mask back to the buffer: transforms, then slices.
    SmallVector<Operation *> transforms;
    Value value = maskUse->get();
    while (Operation *def = value.getDefiningOp()) {
      if (!isMaskTransform(def) || transforms.size() > kMaxChainLength)
        break;
      transforms.push_back(def);
      value = def->getOperand(0);
    }
    Value sliced = value;
    SmallVector<GenericOp> slices;
    while (auto slice = getGeneric(value, AtenKind::slice)) {
      if (slice->getNumOperands() != 5)
        break;
      slices.push_back(slice);
      value = slice->getOperand(0);
    }
    auto read = value.getDefiningOp<GetParamOp>();
    if (!read)
      return;
    auto skip = [&](StringRef reason) { report.skip(consumer, reason); };
    auto buffer =
        dyn_cast_or_null<BufferOp>(lookupStateDecl(read, symbolTables));
    if (!buffer)
      return skip("the mask is a parameter, not a buffer");
    TorchTensorType type = buffer.getTensorType();
    std::optional<torch_upstream::ScalarType> dtype =
        getScalarType(type.getDtype());
    int64_t rank = type.getRank();
    if (!dtype || rank < 2 ||
        llvm::any_of(type.getSizes().drop_back(2),
                     [](int64_t size) { return size != 1; }))
      return skip("the mask buffer is not [1, ..., 1, N, M]");
    if (Attribute init = buffer.getInitializerAttr();
        init && init != rewriter.getStringAttr(kCausalMaskInit))
      return skip("the mask buffer has an initializer of its own");
    Value rowStart, colStart;
    for (GenericOp slice : slices) {
      std::optional<int64_t> dim = getConstantInt(slice->getOperand(1));
      if (dim && *dim < 0)
        *dim += rank;
      if (!dim || *dim < 0 || *dim >= rank ||
          !isNoneOrInt(slice->getOperand(4), 1))
        return skip("the mask buffer is sliced other than with step 1");
      Value start = slice->getOperand(2);
      if (*dim < rank - 2) {
        if (!isNoneOrInt(start, 0))
          return skip("the mask buffer is sliced in a leading dimension");
        continue;
      }
      Value &kept = *dim == rank - 2 ? rowStart : colStart;
      if (kept)
        return skip("the mask buffer is sliced twice in one dimension");
      kept = start;
    }

    // tril(ones([1, ..., Tq, Tk]), rowStart - colStart), then the
    // transforms again, at the consumer.
    Location loc = consumer->getLoc();
    MLIRContext *ctx = rewriter.getContext();
    rewriter.setInsertionPoint(consumer);
    AtenBuilder aten(rewriter, loc);
    auto intType = IntType::get(ctx);
    auto startOf = [&](Value start) -> Value {
      if (!start || isNoneOrInt(start, 0))
        return Value();
      return start;
    };
    rowStart = startOf(rowStart);
    colStart = startOf(colStart);
    Value diagonal;
    if (!colStart)
      diagonal = rowStart ? rowStart : aten.integer(0);
    else
      diagonal =
          aten.node(AtenKind::sub,
                    {rowStart ? rowStart : aten.integer(0), colStart}, intType);
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < rank - 2; ++i)
      sizes.push_back(aten.integer(1));
    sizes.push_back(
        aten.node(AtenKind::size, {scored, aten.integer(-2)}, intType));
    sizes.push_back(
        aten.node(AtenKind::size, {scored, aten.integer(-1)}, intType));
    Value shape =
        aten.node("prim::ListConstruct", sizes, ListType::get(ctx, intType));
    Value ones =
        aten.node(AtenKind::ones,
                  {shape, aten.integer(int64_t(*dtype)), aten.none(),
                   aten.node("prim::device", {scored}, DeviceType::get(ctx)),
                   aten.none()},
                  TorchTensorType::get(ctx));
    Value mask = aten.node(AtenKind::tril, {ones, diagonal}, sliced.getType());
    IRMapping mapping;
    mapping.map(sliced, mask);
    for (Operation *transform : llvm::reverse(transforms))
      rewriter.clone(*transform, mapping);
    rewriter.modifyOpInPlace(consumer, [&] {
      maskUse->set(mapping.lookupOrDefault(maskUse->get()));
    });

    // The old chain goes once nothing reads it; the buffer stays, checked
    // at export.
    SmallVector<Operation *> chain(transforms.begin(), transforms.end());
    llvm::append_range(chain, slices);
    chain.push_back(read);
    for (Operation *op : chain) {
      if (!op->use_empty())
        break;
      eraseWithConstants(rewriter, op);
    }
    rewriter.modifyOpInPlace(buffer, [&] {
      buffer.setInitializerAttr(rewriter.getStringAttr(kCausalMaskInit));
    });
    report.match(consumer);
  }

  /// Reports an additive mask read from a buffer, which the pass leaves.
  void reportAdditive(Value mask, Operation *site) {
    Value value = mask;
    while (auto slice = getGeneric(value, AtenKind::slice))
      value = slice->getOperand(0);
    if (value.getDefiningOp<GetParamOp>())
      report.skip(site, "an additive mask read from a buffer is left as it is");
  }

private:
  SymbolTableCollection &symbolTables;
  SiteReport &report;
};

/// The slopes -m_h as a [H] float32 tensor on `device`: a constant list
/// when H is known, otherwise computed from the int H as Press et al.'s
/// rule in closed form: with n = 2^floor(log2 H), head i (from 0) has
/// m = 2^(-8 e / n), e = i + 1 below n and i - n + 1/2 from n on.
Value buildNegativeSlopes(AtenBuilder &aten, OpBuilder &builder,
                          HeadCount heads, Value device) {
  MLIRContext *ctx = builder.getContext();
  auto tensorType = TorchTensorType::get(ctx);
  Value f32 = aten.integer(int64_t(torch_upstream::ScalarType::Float));
  if (heads.constant) {
    SmallVector<Attribute> values;
    for (double slope : getAlibiSlopes(*heads.constant))
      values.push_back(builder.getF64FloatAttr(-slope));
    Value list = builder.create<ConstantOp>(
        device.getLoc(), ListType::get(ctx, TorchFloatType::get(ctx)),
        builder.getArrayAttr(values));
    return aten.node(AtenKind::tensor, {list, f32, device, aten.boolean(false)},
                     tensorType);
  }
  Value count = aten.node(AtenKind::scalar_tensor,
                          {heads.value, f32, aten.none(), device, aten.none()},
                          tensorType);
  // H + 1/2 keeps log2 off the integers, where rounding could floor it
  // one below.
  Value lower = aten.node(
      AtenKind::exp2,
      {aten.node(
          AtenKind::floor,
          {aten.node(AtenKind::log2,
                     {aten.node(AtenKind::add,
                                {count, aten.floating(0.5), aten.integer(1)},
                                tensorType)},
                     tensorType)},
          tensorType)},
      tensorType);
  Value index = aten.node(AtenKind::arange,
                          {heads.value, f32, aten.none(), device, aten.none()},
                          tensorType);
  Value below = aten.node(
      AtenKind::add, {index, aten.floating(1.0), aten.integer(1)}, tensorType);
  Value above = aten.node(
      AtenKind::add,
      {aten.node(AtenKind::sub, {index, lower, aten.integer(1)}, tensorType),
       aten.floating(0.5), aten.integer(1)},
      tensorType);
  Value exponent = aten.node(
      AtenKind::where,
      {aten.node(AtenKind::lt, {index, lower}, tensorType), below, above},
      tensorType);
  Value scaled = aten.node(
      AtenKind::div,
      {aten.node(AtenKind::mul, {exponent, aten.floating(-8.0)}, tensorType),
       lower},
      tensorType);
  return aten.node(AtenKind::neg,
                   {aten.node(AtenKind::exp2, {scaled}, tensorType)},
                   tensorType);
}

/// Adds -m_h |i - j| to the scores `logits` ([B, H, Tq, Tk] or [B*H, Tq,
/// Tk]); queries are the last Tq of the Tk positions.
Value buildBiasedLogits(PatternRewriter &rewriter, Location loc, Value logits,
                        HeadCount heads, HeadLayout layout) {
  MLIRContext *ctx = rewriter.getContext();
  AtenBuilder aten(rewriter, loc);
  auto tensorType = TorchTensorType::get(ctx);
  auto intType = IntType::get(ctx);
  auto intListType = ListType::get(ctx, intType);
  Value queries =
      aten.node(AtenKind::size, {logits, aten.integer(-2)}, intType);
  Value keys = aten.node(AtenKind::size, {logits, aten.integer(-1)}, intType);
  Value device = aten.node("prim::device", {logits}, DeviceType::get(ctx));
  Value f32 = aten.integer(int64_t(torch_upstream::ScalarType::Float));
  if (heads.fromScores)
    heads.value =
        aten.node(AtenKind::size, {logits, aten.integer(-3)}, intType);
  Value first = aten.node(AtenKind::sub, {keys, queries}, intType);
  Value i = aten.node(AtenKind::arange,
                      {first, keys, f32, aten.none(), device, aten.none()},
                      tensorType);
  Value j =
      aten.node(AtenKind::arange, {keys, f32, aten.none(), device, aten.none()},
                tensorType);
  Value distance = aten.node(
      AtenKind::abs,
      {aten.node(
          AtenKind::sub,
          {j, aten.node(AtenKind::unsqueeze, {i, aten.integer(1)}, tensorType),
           aten.integer(1)},
          tensorType)},
      tensorType);
  Value slopes = aten.node(AtenKind::view,
                           {buildNegativeSlopes(aten, rewriter, heads, device),
                            aten.intList({-1, 1, 1})},
                           tensorType);
  Value bias = aten.node(
      AtenKind::type_as,
      {aten.node(AtenKind::mul, {slopes, distance}, tensorType), logits},
      tensorType);
  auto add = [&](Value scores) -> Value {
    return rewriter.create<AddOp>(loc, scores.getType(), scores, bias,
                                  rewriter.getI64IntegerAttr(1), UnitAttr());
  };
  if (layout == HeadLayout::Split)
    return add(logits);
  // [B*H, Tq, Tk] -> [B, H, Tq, Tk] and back.
  Value headCount =
      heads.constant ? aten.integer(*heads.constant) : heads.value;
  Value split =
      aten.node(AtenKind::reshape,
                {logits, aten.node("prim::ListConstruct",
                                   {aten.integer(-1), headCount, queries, keys},
                                   intListType)},
                tensorType);
  return aten.node(
      AtenKind::reshape,
      {add(split), aten.node("prim::ListConstruct",
                             {aten.integer(-1), queries, keys}, intListType)},
      logits.getType());
}

/// An attention's softmax, given ALiBi's bias.
struct BiasAttention : OpRewritePattern<SoftmaxOp> {
  BiasAttention(MLIRContext *ctx, SiteReport &report, CausalMasks &masks,
                Refusals &refusals)
      : OpRewritePattern(ctx), report(report), masks(masks),
        refusals(refusals) {}

  LogicalResult matchAndRewrite(SoftmaxOp softmax,
                                PatternRewriter &rewriter) const override {
    // Sites are softmaxes whose probabilities weigh values; others (a
    // classifier's) go unreported.
    if (!feedsValueMatmul(softmax.getResult()))
      return failure();
    if (softmax->hasAttr(kAlibiAttrName) ||
        hasDistanceBias(softmax.getSelf())) {
      report.skip(softmax, "already has an ALiBi bias");
      return failure();
    }
    auto skip = [&](StringRef reason) {
      report.skip(softmax, reason);
      refusals.push_back({softmax.getLoc(), reason.str()});
      return failure();
    };
    auto type = dyn_cast<TorchTensorType>(softmax.getSelf().getType());
    int64_t dim = softmax.getDim();
    if (dim != -1 && !(type && type.getHasRank() && dim == type.getRank() - 1))
      return skip("the softmax is not over the last dimension");
    Scores scores;
    if (!findScores(softmax.getSelf(), scores))
      return skip("the scores are not a matmul of q and k");
    // A second position encoding beside the rotary one means nothing.
    if (carriesRotaryEmbedding(scores.matmul->getOperand(0)) ||
        carriesRotaryEmbedding(scores.matmul->getOperand(1)))
      return skip("q and k carry rotary position embeddings (products with "
                  "position tables); ALiBi would add a second position "
                  "encoding");
    // The first count the graph states; the scores' size(-3) only where
    // none does.
    std::optional<std::pair<HeadCount, HeadLayout>> heads;
    for (auto candidate : {findHeadCount(scores.matmul->getOperand(0)),
                           findHeadCount(scores.matmul->getOperand(1)),
                           getTypedHeadCount(scores.matmul->getResult(0))})
      if (candidate && (!heads || heads->first.fromScores))
        heads = candidate;
    if (!heads)
      return skip("the head count is unknown (q and k are not views with a "
                  "heads dimension)");
    auto [count, layout] = *heads;
    if (count.value && !isAvailableAt(count.value, softmax))
      return skip("the head count is computed where the softmax cannot read "
                  "it");

    Location loc = softmax.getLoc();
    rewriter.setInsertionPoint(softmax);
    Value biased =
        buildBiasedLogits(rewriter, loc, softmax.getSelf(), count, layout);
    rewriter.modifyOpInPlace(softmax, [&] {
      softmax.getSelfMutable().assign(biased);
      softmax->setAttr(kAlibiAttrName, rewriter.getUnitAttr());
    });
    // The fused path of nn.MultiheadAttention would skip the bias: the
    // op-by-op path always runs.
    for (GenericOp fused : findFusedFastPaths(softmax))
      disableFastPath(fused, rewriter);
    for (OpOperand *mask : scores.masks) {
      Operation *consumer = mask->getOwner();
      Value scored =
          consumer->getOperand(mask->getOperandNumber() == 0 ? 1 : 0);
      masks.rewrite(mask, scored, rewriter);
    }
    for (Value additive : scores.additiveMasks)
      masks.reportAdditive(additive, softmax);
    report.match(softmax);
    return success();
  }

  SiteReport &report;
  CausalMasks &masks;
  Refusals &refusals;
};

/// Ops a position index or embedding passes through unchanged in value.
bool isPositionReshape(Operation *op) {
  return isa<ViewOp, ReshapeOp, ToDtypeOp, ContiguousOp>(op) ||
         isGenericOf(op,
                     {AtenKind::unsqueeze, AtenKind::view, AtenKind::reshape,
                      AtenKind::expand, AtenKind::expand_as, AtenKind::to,
                      AtenKind::type_as, AtenKind::contiguous});
}

/// The indices of an embedding, after reshapes that keep their values.
Value getEmbeddingIndices(GenericOp embedding) {
  Value indices = embedding->getOperand(1);
  while (Operation *def = indices.getDefiningOp()) {
    if (!isPositionReshape(def))
      break;
    indices = def->getOperand(0);
  }
  return indices;
}

/// Indices an embedding reads from a slice of an index buffer of the model,
/// `self.position_ids[:, :T]` or `self.token_type_ids[:, :T]` (BERT's
/// layout).
struct IndexBufferSlice {
  /// Null if the indices are no slices of a buffer.
  BufferOp buffer;
  GetParamOp read;
  /// Outermost first.
  SmallVector<GenericOp> slices;
  /// Whether the pass can reason about it: an integer [1, N] or [N] buffer,
  /// leading dimensions taken whole and the last from 0 with step 1 to
  /// `end`, into a 2-D table of known rows.
  bool wellFormed = false;
  Value end;
  int64_t size = 0;
  int64_t tableRows = 0;
};

IndexBufferSlice getIndexBufferSlice(GenericOp embedding,
                                     SymbolTableCollection &symbolTables) {
  IndexBufferSlice result;
  Value value = getEmbeddingIndices(embedding);
  while (auto slice = getGeneric(value, AtenKind::slice)) {
    result.slices.push_back(slice);
    value = slice->getOperand(0);
  }
  result.read = value.getDefiningOp<GetParamOp>();
  if (result.read)
    result.buffer =
        dyn_cast_or_null<BufferOp>(lookupStateDecl(result.read, symbolTables));
  if (!result.buffer)
    return result;
  TorchTensorType type = result.buffer.getTensorType();
  auto table = dyn_cast_or_null<TorchTensorType>(
      getDeclaredStateType(embedding->getOperand(0), symbolTables));
  if (!type.getDtype() || !isa<IntegerType>(type.getDtype()) ||
      !type.getHasRank() || type.getRank() < 1 || type.getRank() > 2 ||
      (type.getRank() == 2 && type.getSizes().front() != 1) ||
      type.getSizes().back() == TorchTensorType::kUnknownSize || !table ||
      !table.getHasRank() || table.getRank() != 2)
    return result;
  int64_t rank = type.getRank();
  for (GenericOp slice : result.slices) {
    if (slice->getNumOperands() != 5 || !isNoneOrInt(slice->getOperand(2), 0) ||
        !isNoneOrInt(slice->getOperand(4), 1))
      return result;
    std::optional<int64_t> dim = getConstantInt(slice->getOperand(1));
    if (dim && *dim < 0)
      *dim += rank;
    if (!dim)
      return result;
    if (*dim == rank - 1)
      result.end = slice->getOperand(3);
    else if (!isNoneOrInt(slice->getOperand(3), INT64_MAX))
      return result;
  }
  result.wellFormed = true;
  result.size = type.getSizes().back();
  result.tableRows = table.getSizes().front();
  return result;
}

/// Whether `buffer` has no initializer of its own, or `init`, the value a
/// rewrite of this pass assumed it holds.
bool hasNoOtherInitializer(BufferOp buffer, StringRef init) {
  Attribute current = buffer.getInitializerAttr();
  return !current || current == StringAttr::get(buffer.getContext(), init);
}

/// A learned position embedding, embedding(W, arange(...)) added to another
/// value, leaves the graph; W stays, frozen.
struct RemovePositionEmbedding : OpRewritePattern<GenericOp> {
  RemovePositionEmbedding(MLIRContext *ctx, SymbolTableCollection &symbolTables,
                          SiteReport &report, Refusals &refusals)
      : OpRewritePattern(ctx), symbolTables(symbolTables), report(report),
        refusals(refusals) {}

  LogicalResult matchAndRewrite(GenericOp embedding,
                                PatternRewriter &rewriter) const override {
    if (!embedding.isKind(AtenKind::embedding) ||
        embedding->getNumOperands() < 2 || embedding->getNumResults() != 1)
      return failure();
    // Positions: indices from torch.arange. Token embeddings (indices from
    // the input) are not sites.
    Value indices = getEmbeddingIndices(embedding);
    auto skip = [&](StringRef reason) {
      report.skip(embedding, reason);
      refusals.push_back({embedding.getLoc(), reason.str()});
      return failure();
    };
    BufferOp positionBuffer;
    if (!getGeneric(indices, AtenKind::arange)) {
      FailureOr<BufferOp> buffer = getPositionBuffer(embedding);
      if (failed(buffer))
        return failure();
      if (!*buffer) {
        // Not a site: a lookup of indices the model holds, not positions
        // the pass can vouch for. Reported, but not a reason to refuse.
        report.skip(embedding,
                    "the indices are a buffer, not torch.arange positions");
        return failure();
      }
      positionBuffer = *buffer;
    }
    // Through reshapes of one user each to the add.
    Value value = embedding->getResult(0);
    SmallVector<Operation *> chain = {embedding};
    while (value.hasOneUse() && isPositionReshape(*value.user_begin()) &&
           value.use_begin()->getOperandNumber() == 0) {
      chain.push_back(*value.user_begin());
      value = chain.back()->getResult(0);
    }
    if (!value.hasOneUse())
      return skip("the position embedding has other users");
    auto add = dyn_cast<AddOp>(*value.user_begin());
    if (!add)
      return skip("the position embedding is not added to another value");
    bool isSelf = add.getSelf() == value;
    Value other = isSelf ? add.getOther() : add.getSelf();
    Attribute alpha = add.getAlpha();
    bool unitAlpha = isa<IntegerAttr>(alpha)
                         ? cast<IntegerAttr>(alpha).getValue() == 1
                         : cast<FloatAttr>(alpha).getValueAsDouble() == 1.0;
    if (isSelf && !unitAlpha)
      return skip("the other value is scaled by the add's alpha");
    auto otherType = dyn_cast<TorchTensorType>(other.getType());
    auto sumType = dyn_cast<TorchTensorType>(add.getType());
    if (otherType && sumType && otherType.getHasRank() &&
        sumType.getHasRank() && otherType.getSizes() != sumType.getSizes() &&
        !llvm::is_contained(otherType.getSizes(),
                            TorchTensorType::kUnknownSize))
      return skip("the sum is larger than the other value");

    report.match(add);
    if (positionBuffer)
      rewriter.modifyOpInPlace(positionBuffer, [&] {
        positionBuffer.setInitializerAttr(
            rewriter.getStringAttr(kPositionIdsInit));
      });
    rewriter.replaceAllUsesWith(add.getResult(), other);
    eraseWithConstants(rewriter, add);
    Value weight = embedding->getOperand(0);
    Value positions = embedding->getOperand(1);
    for (Operation *op : llvm::reverse(chain))
      eraseWithConstants(rewriter, op);
    // The positions go if nothing else reads them.
    while (Operation *def = positions.getDefiningOp()) {
      bool isSlice = isGenericOf(def, {AtenKind::slice});
      if (!def->use_empty() ||
          !(isPositionReshape(def) || isSlice || isa<GetParamOp>(def) ||
            isGenericOf(def, {AtenKind::arange})))
        break;
      positions =
          isPositionReshape(def) || isSlice ? def->getOperand(0) : Value();
      eraseWithConstants(rewriter, def);
      if (!positions)
        break;
    }
    if (auto read = weight.getDefiningOp<GetParamOp>();
        read && read->use_empty()) {
      auto decl =
          dyn_cast_or_null<ParameterOp>(lookupStateDecl(read, symbolTables));
      rewriter.eraseOp(read);
      ModuleOp module = decl ? decl->getParentOfType<ModuleOp>() : ModuleOp();
      if (decl && SymbolTable::symbolKnownUseEmpty(decl, module))
        rewriter.modifyOpInPlace(decl, [&] { decl.setFrozen(true); });
    }
    return success();
  }

  /// The buffer the indices slice, if it can hold positions
  /// (`self.position_ids[:, :T]`, BERT's layout): an index buffer slice
  /// (IndexBufferSlice) with no initializer of its own (or the one this pass
  /// gave it) into a table of at least N rows (a token-type buffer, also
  /// integer and [1, N], indexes a table of two). Export checks that it
  /// holds 0..N-1. Null if the indices read a buffer the pass cannot vouch
  /// for; failure if they read no buffer, or one that indexes a table too
  /// small for its positions.
  FailureOr<BufferOp> getPositionBuffer(GenericOp embedding) const {
    IndexBufferSlice slice = getIndexBufferSlice(embedding, symbolTables);
    if (!slice.read)
      return failure();
    if (!slice.wellFormed ||
        !hasNoOtherInitializer(slice.buffer, kPositionIdsInit))
      return BufferOp();
    // Too few rows for positions 0..N-1: some other index (token types).
    if (slice.tableRows < slice.size)
      return failure();
    return slice.buffer;
  }

  SymbolTableCollection &symbolTables;
  SiteReport &report;
  Refusals &refusals;
};

/// A token-type buffer sliced to the sequence length
/// (`self.token_type_ids[:, :T]`, BERT's layout): an integer [1, N] or [N]
/// buffer of zeros indexing a table of fewer than N rows. Past N tokens the
/// slice is too short, so the model could not run longer than it was
/// trained, which is what ALiBi is for: the slice becomes zeros of the
/// sequence length (`new_zeros`, on the buffer's device), as Composer's BERT
/// surgery enlarges the buffer. Export checks that the buffer holds zeros.
struct RebuildTokenTypes : OpRewritePattern<GenericOp> {
  RebuildTokenTypes(MLIRContext *ctx, SymbolTableCollection &symbolTables,
                    SiteReport &report)
      : OpRewritePattern(ctx), symbolTables(symbolTables), report(report) {}

  LogicalResult matchAndRewrite(GenericOp embedding,
                                PatternRewriter &rewriter) const override {
    if (!embedding.isKind(AtenKind::embedding) ||
        embedding->getNumOperands() < 2 || embedding->getNumResults() != 1)
      return failure();
    IndexBufferSlice slice = getIndexBufferSlice(embedding, symbolTables);
    // Not positions, and only up to a size of the input.
    if (!slice.wellFormed || slice.tableRows >= slice.size || !slice.end ||
        !isSizeDerived(slice.end) ||
        !hasNoOtherInitializer(slice.buffer, kTokenTypesInit))
      return failure();
    BufferOp buffer = slice.buffer;
    GetParamOp read = slice.read;
    ArrayRef<GenericOp> slices = slice.slices;
    Value length = slice.end;
    int64_t rank = buffer.getTensorType().getRank();

    GenericOp sliced = slices.front();
    Location loc = sliced.getLoc();
    rewriter.setInsertionPoint(sliced);
    AtenBuilder aten(rewriter, loc);
    MLIRContext *ctx = getContext();
    SmallVector<Value> sizes;
    if (rank == 2)
      sizes.push_back(aten.integer(1));
    if (!isa<IntType>(length.getType()))
      length = aten.node(AtenKind::Int, {length}, IntType::get(ctx));
    sizes.push_back(length);
    Value sizeList = aten.node("prim::ListConstruct", sizes,
                               ListType::get(ctx, IntType::get(ctx)));
    Value none = aten.none();
    Value zeros =
        aten.node(AtenKind::new_zeros, {read, sizeList, none, none, none, none},
                  sliced->getResult(0).getType());
    rewriter.replaceAllUsesWith(sliced->getResult(0), zeros);
    for (GenericOp op : slices)
      if (op->use_empty())
        eraseWithConstants(rewriter, op);
    rewriter.modifyOpInPlace(buffer, [&] {
      buffer.setInitializerAttr(rewriter.getStringAttr(kTokenTypesInit));
    });
    report.match(embedding);
    return success();
  }

  SymbolTableCollection &symbolTables;
  SiteReport &report;
};

struct ALiBiPass : public composer::impl::ALiBiBase<ALiBiPass> {
  using ALiBiBase::ALiBiBase;

  // All or nothing: the rewrite runs on a copy of the module, which
  // replaces it only if every site that reads what the pass removes got its
  // rewrite. Position embeddings and fixed-size masks removed while some
  // attention keeps no bias would leave that attention without position
  // information.
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OwningOpRef<ModuleOp> copy = module.clone();
    SymbolTableCollection symbolTables;
    SiteReport attention(module, getArgument());
    SiteReport positions(module, getArgument());
    SiteReport maskReport(module, getArgument());
    SiteReport tokenTypes(module, getArgument());
    Refusals refusals;
    CausalMasks masks(symbolTables, maskReport);
    RewritePatternSet patterns(&getContext());
    patterns.add<RemovePositionEmbedding>(&getContext(), symbolTables,
                                          positions, refusals);
    patterns.add<BiasAttention>(&getContext(), attention, masks, refusals);
    patterns.add<RebuildTokenTypes>(&getContext(), symbolTables, tokenTypes);
    applyPatternsOnce(*copy, std::move(patterns));
    // A fused attention the pass could not make take the op-by-op path.
    copy->walk([&](GenericOp op) {
      if (!op.isKind(AtenKind::_native_multi_head_attention))
        return;
      auto ifOp = dyn_cast<IfOp>(op->getParentOp());
      if (ifOp && getConstantBool(ifOp.getCondition()) == false)
        return;
      StringRef reason = "fused attention (aten::_native_multi_head_attention)"
                         ": its scores are not in the graph";
      attention.skip(op, reason);
      refusals.push_back({op.getLoc(), reason.str()});
    });
    bool changed = attention.getNumMatched() || positions.getNumMatched() ||
                   maskReport.getNumMatched() || tokenTypes.getNumMatched();
    if (changed && !refusals.empty()) {
      InFlightDiagnostic diag = module.emitError()
                                << getArgument() << ": " << refusals.size()
                                << " site(s) cannot take ALiBi, so nothing "
                                   "was changed: without every attention's "
                                   "bias, removing the position embeddings "
                                   "and fixed-size masks changes what the "
                                   "model computes";
      for (const Refusal &refusal : refusals)
        diag.attachNote(refusal.site) << refusal.reason;
      return signalPassFailure();
    }
    module.getBodyRegion().takeBody(copy->getBodyRegion());
    attention.emit("attention sites given ALiBi biases");
    if (positions.getNumMatched() || positions.getNumSkipped())
      positions.emit("position embeddings removed");
    if (maskReport.getNumMatched() || maskReport.getNumSkipped())
      maskReport.emit("fixed-size causal masks rebuilt from the sequence "
                      "length");
    if (tokenTypes.getNumMatched())
      tokenTypes.emit("fixed-size token-type buffers rebuilt from the "
                      "sequence length");
  }

  static std::optional<bool> getConstantBool(Value value) {
    auto constant = value.getDefiningOp<ConstantOp>();
    auto attr = constant ? dyn_cast<BoolAttr>(constant.getValue()) : BoolAttr();
    return attr ? std::optional<bool>(attr.getValue()) : std::nullopt;
  }
};

} // namespace
