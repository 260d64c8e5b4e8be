//===- Passes.td - composer passes -------------------------*- tablegen -*-===//

#ifndef COMPOSER_PASSES
#define COMPOSER_PASSES

include "mlir/Pass/PassBase.td"

def RefineTypes : Pass<"composer-refine-types", "::mlir::ModuleOp"> {
  let summary = "Refine tensor shapes and dtypes from declared input specs";
  let description = [{
    Gives `@forward`'s tensor arguments the shapes and dtypes of
    `input-specs` (one `DIMSxDTYPE` per tensor argument, e.g.
    `1x3x224x224xf32`, `?` for an unknown dimension) and propagates them
    forward through the typed ops whose result shape it knows. Parameter
    reads take their declared types. Numerics: exact (types only).
  }];
  let options = [
    ListOption<"inputSpecs", "input-specs", "std::string",
               "Shape and dtype of each tensor argument of @forward">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

#endif // COMPOSER_PASSES
