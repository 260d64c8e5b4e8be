//===- MethodLowering.h - methods register their lowerings ------*- C++ -*-===//
//
// The lowering passes (MethodLowering.cpp) know no method:
// each method's pass file registers the functions that populate its
// lowering patterns, and the passes run a dialect conversion, in which every
// method op is illegal, with whatever is registered.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_PASSES_METHODLOWERING_H
#define COMPOSER_PASSES_METHODLOWERING_H

#include "composer/Dialect/Composer.h"

#include "mlir/Transforms/DialectConversion.h"

namespace composer {

using PopulatePatternsFn = void (*)(mlir::RewritePatternSet &);

/// One method's lowerings.
struct MethodLowering {
  /// Orders the methods, so that the pattern set and the reports do not
  /// depend on the order of static initialization.
  llvm::StringRef name;
  PopulatePatternsFn populateToAtenPatterns;
  PopulatePatternsFn populateToRuntimePatterns;
};

/// Registers a method's lowerings, from a static object in its pass file:
///   static MethodLoweringRegistration registration(
///       {"blurpool", populateBlurPoolToAtenPatterns,
///        populateBlurPoolToRuntimePatterns});
struct MethodLoweringRegistration {
  explicit MethodLoweringRegistration(MethodLowering lowering);
};

/// Every registered method's lowerings, by name.
llvm::ArrayRef<MethodLowering> getMethodLowerings();

/// Lowers every method op in `module` by dialect conversion with the
/// patterns each registered method's `populate` adds
/// (&MethodLowering::populateToAtenPatterns, say). Reports
/// "<pass>: N <loweredWhat> (M <label>, ...)", a count for each debug label
/// the patterns carry (a fusion's "max pools fused"), unless nothing was
/// lowered: the normal case for an unchanged model. An op no pattern lowers
/// fails the conversion with "failed to legalize operation" at the op.
mlir::LogicalResult lowerMethodOps(mlir::ModuleOp module,
                                   llvm::StringRef passName,
                                   PopulatePatternsFn MethodLowering::*populate,
                                   llvm::StringRef loweredWhat);

/// Replaces `methodOp` by one call of the runtime library's operator `kind`
/// ("composer::blur_pool2d"), with `operands` in the operator's schema
/// order, at `loc`.
inline void replaceWithRuntimeCall(mlir::ConversionPatternRewriter &rewriter,
                                   mlir::Operation *methodOp,
                                   llvm::StringRef kind,
                                   mlir::ValueRange operands,
                                   mlir::Location loc) {
  auto call = rewriter.create<GenericOp>(loc, methodOp->getResultTypes(), kind,
                                         operands, mlir::DictionaryAttr());
  rewriter.replaceOp(methodOp, call->getResults());
}

/// The benefit of a runtime pattern that folds a neighbour of the method op
/// into the call: tried before the plain lowering of the same op.
constexpr unsigned kFusionBenefit = 2;

} // namespace composer

#endif // COMPOSER_PASSES_METHODLOWERING_H
