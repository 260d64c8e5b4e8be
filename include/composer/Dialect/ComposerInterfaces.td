//===- ComposerInterfaces.td - op interfaces ---------------*- tablegen -*-===//

#ifndef COMPOSER_INTERFACES
#define COMPOSER_INTERFACES

include "mlir/IR/OpBase.td"

def TorchSchemaOpInterface : OpInterface<"TorchSchemaOp"> {
  let cppNamespace = "::composer";
  let description = [{
    A typed op that stands for one TorchScript operator schema. Its operands
    are the schema's arguments that are not inherent attributes, in schema
    order; its inherent attributes are named like the schema's arguments. The
    importer and exporter translate such ops generically through this rule.
  }];
  let methods = [
    StaticInterfaceMethod<"The schema, `name.overload`.", "::llvm::StringRef",
                          "getTorchSchema">,
    StaticInterfaceMethod<"The in-place schema, empty if none.",
                          "::llvm::StringRef", "getInplaceTorchSchema">,
  ];
}

#endif // COMPOSER_INTERFACES
