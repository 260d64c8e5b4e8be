//===- Attention.h - attention as models write it ---------------*- C++ -*-===//
//
// Attention as models write it op by op: a softmax over the last dimension
// of scores computed from matmul(q, k^T) (or bmm), scaled by mul or div,
// masked by masked_fill or where, or plus an additive mask, whose
// probabilities (after dropout or casts, possibly through a composer.if)
// are operand 0 of matmul(., v). Heads are split by view or reshape (sizes
// given as constants, module attributes or lists built by concatenation)
// and moved by transpose or permute: scores [B, H, Tq, Tk], or [B*H, Tq, Tk]
// as nn.MultiheadAttention's bmm has them. Scripted nn.MultiheadAttention
// also has a fused fast path beside the op-by-op one. ALiBi biases these
// sites; the FLOP count counts them as attention.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ANALYSIS_ATTENTION_H
#define COMPOSER_ANALYSIS_ATTENTION_H

#include "composer/Dialect/Composer.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>
#include <vector>

namespace composer {

/// How scores hold heads.
enum class HeadLayout {
  /// [B, H, Tq, Tk].
  Split,
  /// [B*H, Tq, Tk], batch-major.
  Merged,
};

/// The head count of an attention: a constant, an int the graph computes
/// (a module attribute, say), or, for scores known to be [B, H, Tq, Tk]
/// whose view leaves H to run time (`view(B, T, -1, D)`, sizes listed as
/// `list(x.size()[:-1]) + [H, D]` with H unknown), the scores' size(-3).
struct HeadCount {
  std::optional<int64_t> constant;
  /// An int value; null unless the count is computed.
  mlir::Value value;
  bool fromScores = false;
};

struct AttentionHeads {
  HeadCount count;
  HeadLayout layout = HeadLayout::Split;
};

enum class AttentionMaskKind {
  /// Selects the scores to fill: masked_fill's mask, where's condition.
  Select,
  /// Added to the scores.
  Additive,
};

struct AttentionMask {
  AttentionMaskKind kind;
  /// The mask as its op reads it: masked_fill's operand 1, where's operand
  /// 0, or the add's operand that is not the scores.
  mlir::OpOperand *operand = nullptr;
};

/// A mask read from the model's state: `read`, sliced by `slices`, then
/// (a select mask) passed through `transforms` (negations, comparisons,
/// casts) to the mask's use. A fixed-size causal mask is a buffer of
/// lower-triangular ones read so.
struct StateMask {
  GetParamOp read;
  /// From the transforms' input back to `read`.
  llvm::SmallVector<GenericOp> slices;
  /// From the mask's use back to `sliced`.
  llvm::SmallVector<mlir::Operation *> transforms;
  /// What the transforms start from: the outermost slice, or `read`.
  mlir::Value sliced;
};

struct AttentionSite {
  SoftmaxOp softmax;
  /// q k^T: a matmul or bmm with q as operand 0 and k^T as operand 1.
  mlir::Operation *scoresProduct = nullptr;
  /// probabilities v: a matmul or bmm that reads the softmax's result as
  /// operand 0.
  mlir::Operation *valueProduct = nullptr;
  /// The products and quotients between `scoresProduct` and the softmax
  /// (scalings by 1/sqrt(d), or by a learned temperature).
  llvm::SmallVector<mlir::Operation *> scalings;
  /// From the softmax back to the scores' product: select masks as they
  /// are met, additive ones innermost first.
  llvm::SmallVector<AttentionMask> masks;
  /// Null if neither q and k nor the scores' type tell the heads.
  std::optional<AttentionHeads> heads;
  /// Whether q or k^T carries rotary position embeddings: after layout
  /// ops, x * cos + rotate(x) * sin with cos and sin state tables.
  bool hasRotaryEmbedding = false;
  /// nn.MultiheadAttention's fused fast paths (which take no bias): the
  /// `aten::_native_multi_head_attention` ops of the composer.ifs whose
  /// other branch holds this site.
  llvm::SmallVector<GenericOp> fusedFastPaths;

  mlir::Value getQuery() const { return scoresProduct->getOperand(0); }
  mlir::Value getKeyTransposed() const { return scoresProduct->getOperand(1); }
  /// The scores the softmax normalizes: scaled and masked.
  mlir::Value getScores() const { return softmax->getOperand(0); }
  mlir::Value getValue() const { return valueProduct->getOperand(1); }
  mlir::Value getOutput() const { return valueProduct->getResult(0); }
};

/// Whether `op` multiplies attention's operands: matmul or bmm.
bool isAttentionProduct(mlir::Operation *op);

/// The product of values that reads `probabilities` as its operand 0, after
/// dropout or casts, possibly through a composer.if; null if none does.
mlir::Operation *findValueProduct(mlir::Value probabilities);

/// The heads q (operand 0 of `scoresProduct`) and k^T (operand 1) are
/// split into, from the views that split them, or else from the scores'
/// type; a count stated by the graph wins over the scores' size(-3).
std::optional<AttentionHeads>
findAttentionHeads(mlir::Operation *scoresProduct);

/// The attention whose softmax is `softmax`. On failure `reason` is empty
/// if the softmax weighs no values (a classifier's: no candidate), and
/// otherwise says why the candidate is no attention the analysis can read.
mlir::FailureOr<AttentionSite> matchAttention(SoftmaxOp softmax,
                                              std::string &reason);

/// The attention sites under `root`, in walk order; refused candidates are
/// left out.
std::vector<AttentionSite> findAttentionSites(mlir::Operation *root);

/// Where `mask` reads the model's state, if it does.
std::optional<StateMask> traceStateMask(const AttentionMask &mask);

} // namespace composer

#endif // COMPOSER_ANALYSIS_ATTENTION_H
