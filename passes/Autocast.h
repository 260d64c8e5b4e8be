//===- Autocast.h - autocast's dtype rules as a rewrite ---------*- C++ -*-===//
//
// The rewrite behind composer-mixed-precision and
// composer-low-precision-norms: casts inserted on use, as torch.autocast
// does at run time.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_AUTOCAST_H
#define COMPOSER_PASSES_AUTOCAST_H

#include "Report.h"

#include "composer/Dialect/Composer.h"
#include "composer/Passes/Passes.h"
#include "composer/Support/TorchUpstream.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace composer {

/// Whether `op` is a layer norm or group norm, typed or generic.
bool isLayerOrGroupNorm(mlir::Operation *op);

/// Matmul-like ops in `lowDtype`, numerically sensitive ops in fp32 (layer
/// and group norm in `lowDtype` when `lowNorms`), the rest following their
/// inputs; ops that follow their inputs but need their tensor operands in
/// one dtype (lerp, index_put_, ...) get them made consistent. Idempotent:
/// casts a previous run inserted are reused.
class AutocastRewriter {
public:
  AutocastRewriter(mlir::MLIRContext *context,
                   torch_upstream::ScalarType lowDtype, bool lowNorms,
                   AutocastDevice device = AutocastDevice::Any)
      : context(context), lowDtype(lowDtype), lowNorms(lowNorms),
        device(device) {}

  /// Rewrites `module`, counting in `report` the ops `reported` selects.
  void run(mlir::ModuleOp module, SiteReport &report,
           llvm::function_ref<bool(mlir::Operation *)> reported);

private:
  /// `value` as `target`, cast just before `user`: the cast is skipped when
  /// `value` is already such a cast or undoes a cast up from `target`.
  mlir::Value castTo(mlir::Value value, torch_upstream::ScalarType target,
                     mlir::Operation *user);

  /// Gives `op` (matmul-like or fp32) its dtype: casts `operands` that are
  /// tensors (or lists of tensors) to `target`. Returns whether it cast any.
  bool castOperands(mlir::Operation *op,
                    llvm::MutableArrayRef<mlir::OpOperand> operands,
                    torch_upstream::ScalarType target);

  /// Makes the `indices` operands of `op` agree in dtype where some may be
  /// low and others not: in-place ops cast them to their `self`'s dtype (at
  /// run time, aten::type_as), others to fp32, as type promotion would.
  bool makeDtypesAgree(mlir::Operation *op, llvm::ArrayRef<unsigned> indices,
                       bool inplace);

  /// Whether `value` may be in the low dtype: it depends on a low value
  /// through ops that follow their inputs.
  bool mayBeLow(mlir::Value value) const;

  /// Whether `value` may have been in the low dtype before the rewrite: it
  /// depends on the model's own low values (casts, known dtypes).
  bool mayHaveBeenLow(mlir::Value value) const;

  /// Whether a caller may pass `value` in a low dtype: it is a tensor
  /// argument of unknown dtype (or a 16-bit float other than the low one),
  /// or depends on one through ops that follow their inputs and read no
  /// fp32 tensor with dimensions.
  bool mayBeCalledLow(mlir::Value value) const;
  /// Casts `operand` of `user`, an fp32 op, up to fp32 at run time where it
  /// is a float of less precision, as autocast does
  /// (aten::_autocast_to_full_precision): its dtype is known only when the
  /// model is called. Returns whether it inserted the cast.
  bool castUpWhenCalledLow(mlir::OpOperand &operand, mlir::Operation *user);
  /// Whether every use of `value` casts it to the low dtype, directly or
  /// through ops that follow their one float input element by element
  /// (dropout, activations, views): its fp32 precision is never read.
  bool isOnlyReadLow(mlir::Value value) const;

  /// Runs `op` (an fp32-list op that accumulates in fp32) on the low value
  /// its input was cast up from, where its result is only read low: the
  /// result is then rounded once, as under CPU autocast, and the fp32 copies
  /// of the input and the result are not made.
  void runLowWhereOnlyReadLow(mlir::Operation *op);

  /// Casts `operand` of `user` (a return, or a tuple or list the return
  /// takes) up to fp32 where the rewrite made it low.
  void restoreResultDtype(mlir::OpOperand &operand, mlir::Operation *user);

  mlir::MLIRContext *context;
  torch_upstream::ScalarType lowDtype;
  bool lowNorms;
  AutocastDevice device;
  /// Values known to be in the low dtype (results of rewritten ops, casts).
  llvm::DenseSet<mlir::Value> lowValues;
  /// Values that may be in the low dtype (a superset of lowValues).
  llvm::DenseSet<mlir::Value> maybeLowValues;
  /// Values that may have been in the low dtype before the rewrite.
  llvm::DenseSet<mlir::Value> originalLowValues;
  /// Values whose dtype the caller decides (mayBeCalledLow).
  llvm::DenseSet<mlir::Value> callerDtypeValues;
};

} // namespace composer

#endif // COMPOSER_PASSES_AUTOCAST_H
