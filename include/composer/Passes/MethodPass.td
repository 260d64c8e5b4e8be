//===- MethodPass.td - the declaration of a method's pass --*- tablegen -*-===//
//
// A speedup method's pass, as opposed to the infrastructure (type
// refinement, lowering). Every method pass is declared with MethodPass:
// composer-tblgen -gen-method-pass-list lists the MethodPass records of a
// .td file, and the library that holds the passes registers that list with
// a MethodPassRegistration (Passes.h), by which --report-costs finds the
// methods to compare. A method rewrites a whole model, so it is anchored
// on the module.
//
// `keepsAccuracy` marks a method that, by design, leaves what training
// reaches as it is: the same function of the same weights up to rounding
// (channels-last, mixed precision, activation checkpointing). Tools that
// choose methods on measured speed alone (composer-opt --emit-pipeline)
// consider only these; a method that trades accuracy is the user's call.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_METHOD_PASS
#define COMPOSER_METHOD_PASS

include "mlir/Pass/PassBase.td"

class MethodPass<string passArg> : Pass<passArg, "::mlir::ModuleOp"> {
  bit keepsAccuracy = 0;
}

#endif // COMPOSER_METHOD_PASS
