//===- ALiBi.cpp - attention with linear biases ---------------------------===//
//
// ALiBi (Press et al. 2021) as METHODS.md states it, on attention found from
// the graph in any model (composer/Analysis/Attention.h): a softmax over the
// last dimension of scores computed from matmul(q, k^T) (scaled, masked by
// masked_fill or where, or plus an additive mask) whose probabilities feed
// matmul(., v). Before the softmax the pass adds -m_h |i - j|, i and j
// built at run time from the scores' sizes, so nothing depends on a maximum
// sequence length. Learned position embeddings (an embedding of
// torch.arange positions added to another value) leave the graph, and
// fixed-size causal masks (a buffer sliced to the sequence length) become
// tril(ones) of the scores' size; export checks that such a buffer holds
// lower-triangular ones (initializer "tril_ones",
// lib/TorchScript/initializers/ALiBiState.cpp). Everything is built from
// aten ops, so there is nothing to lower.
//
//===----------------------------------------------------------------------===//

#include "PassUtils.h"
#include "Report.h"
#include "composer/Analysis/Attention.h"
#include "composer/Analysis/Matchers.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/ALiBiState.h"
#include "composer/Support/StatePaths.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
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
/// position-index buffer against (ALiBiState.h).
constexpr StringRef kCausalMaskInit = kTrilOnesInit;
constexpr StringRef kPositionIdsInit = kArangeInit;
constexpr StringRef kTokenTypesInit = kZerosInit;

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

/// Whether `value` is None or the constant `expected`.
bool isNoneOrInt(Value value, int64_t expected) {
  if (isa<TorchNoneType>(value.getType()))
    return true;
  std::optional<int64_t> constant = getConstantInt(value);
  return constant && *constant == expected;
}

/// Sites the pass could not rewrite, with the reason: attention it could not
/// bias, position embeddings it could not remove. Any of them makes the
/// whole pass refuse (ALiBiPass::runOnOperation).
struct Refusal {
  Location site;
  std::string reason;
};
using Refusals = SmallVector<Refusal>;

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

/// The fixed-size causal masks the pass rebuilds from the sequence length.
class CausalMasks {
public:
  CausalMasks(SymbolTableCollection &symbolTables, SiteReport &report)
      : symbolTables(symbolTables), report(report) {}

  /// If the select `mask` (masked_fill's mask, where's condition) reads a
  /// buffer sliced to the scores' size, `buffer[..., r0:, c0:]`, reads
  /// tril(ones(Tq, Tk), r0 - c0) of the size of `scored` (the tensor
  /// masked) instead and records that the buffer must be lower-triangular
  /// ones. Masks computed otherwise already fit any length.
  void rewrite(const AttentionMask &mask, Value scored,
               PatternRewriter &rewriter) {
    std::optional<StateMask> state = traceStateMask(mask);
    if (!state)
      return;
    OpOperand *maskUse = mask.operand;
    Operation *consumer = maskUse->getOwner();
    GetParamOp read = state->read;
    ArrayRef<GenericOp> slices = state->slices;
    ArrayRef<Operation *> transforms = state->transforms;
    Value sliced = state->sliced;
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
    Value tril = aten.node(AtenKind::tril, {ones, diagonal}, sliced.getType());
    IRMapping mapping;
    mapping.map(sliced, tril);
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
  void reportAdditive(const AttentionMask &mask, Operation *site) {
    if (traceStateMask(mask))
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
    std::string mismatch;
    FailureOr<AttentionSite> site = matchAttention(softmax, mismatch);
    if (failed(site) && mismatch.empty())
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
    if (failed(site))
      return skip(mismatch);
    // A second position encoding beside the rotary one means nothing.
    if (site->hasRotaryEmbedding)
      return skip("q and k carry rotary position embeddings (products with "
                  "position tables); ALiBi would add a second position "
                  "encoding");
    if (!site->heads)
      return skip("the head count is unknown (q and k are not views with a "
                  "heads dimension)");
    auto [count, layout] = *site->heads;
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
    for (GenericOp fused : site->fusedFastPaths)
      disableFastPath(fused, rewriter);
    for (const AttentionMask &mask : site->masks) {
      if (mask.kind != AttentionMaskKind::Select)
        continue;
      Operation *consumer = mask.operand->getOwner();
      Value scored =
          consumer->getOperand(mask.operand->getOperandNumber() == 0 ? 1 : 0);
      masks.rewrite(mask, scored, rewriter);
    }
    for (const AttentionMask &mask : site->masks)
      if (mask.kind == AttentionMaskKind::Additive)
        masks.reportAdditive(mask, softmax);
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
