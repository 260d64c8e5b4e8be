//===- TestMethod.td - a method built only for tests -------*- tablegen -*-===//
//
// composer-test-mark-activations: a method in the manner of Composer's
// NoOpModel test helper. It follows docs/adding-a-method.md, but lives in
// test/ and loads into composer-opt as a pass plugin, so no tool ships it.
// It shows that a method is one place: the lowering drivers, the type
// rules and the FLOP count pick up its op with no list edited elsewhere.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_TEST_METHOD
#define COMPOSER_TEST_METHOD

include "composer/Dialect/ComposerTypes.td"
include "composer/Dialect/ComposerInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "composer/Passes/MethodPass.td"

def ComposerTest_Dialect : Dialect {
  let name = "composer_test";
  let cppNamespace = "::composer::test";
  let summary = "ops of the test-only methods";
  let dependentDialects = ["::composer::ComposerDialect"];
  let usePropertiesForAttributes = 0;
}

def ComposerTest_MarkOp : Op<ComposerTest_Dialect, "mark", [
    MethodOpInterface, InferTorchTypeOpInterface,
    DeclareOpInterfaceMethods<FlopCountOpInterface, ["getFlopCost"]>, Pure]> {
  let summary = "the identity, marking an activation's output";
  let description = [{
    Returns its input. Both lowerings make it an aten::clone, so a marked
    model exports and computes exactly as the original.
  }];
  let arguments = (ins Composer_AnyTensor:$input);
  let results = (outs Composer_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def TestMarkActivations : MethodPass<"composer-test-mark-activations"> {
  let summary = "Mark every activation's output (test-only method)";
  let description = [{
    Puts a composer_test.mark after each activation (an op with the
    Activation trait in the aten kind table). An activation whose only
    user is a mark is skipped as already marked, so the pass is
    idempotent. Numerics: exact.
  }];
  let dependentDialects = ["::composer::test::ComposerTestDialect"];
}

#endif // COMPOSER_TEST_METHOD
