//===- ComposerDialect.td - composer dialect definition ----*- tablegen -*-===//

#ifndef COMPOSER_DIALECT
#define COMPOSER_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Composer_Dialect : Dialect {
  let name = "composer";
  let cppNamespace = "::composer";
  let summary = "TorchScript models as MLIR, for training-speedup rewrites";
  let description = [{
    One `builtin.module` per model: `composer.parameter` / `composer.buffer`
    symbols named by state_dict key and a `func.func @forward`. Ops that passes
    reason about are typed; every other TorchScript node is a `composer.op`
    carrying its schema name, so any graph round-trips exactly.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  // Inherent attributes stay plain attributes: the importer and exporter set
  // and read them generically by schema argument name.
  let usePropertiesForAttributes = 0;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
}

class Composer_Op<string mnemonic, list<Trait> traits = []>
    : Op<Composer_Dialect, mnemonic, traits>;

#endif // COMPOSER_DIALECT
