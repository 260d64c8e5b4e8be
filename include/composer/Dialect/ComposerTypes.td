//===- ComposerTypes.td - TorchScript value types ----------*- tablegen -*-===//

#ifndef COMPOSER_TYPES
#define COMPOSER_TYPES

include "composer/Dialect/ComposerDialect.td"

class Composer_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Composer_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Composer_TensorType : Composer_Type<"TorchTensor", "tensor"> {
  let summary = "a tensor whose rank, dimensions and dtype may be unknown";
  let description = [{
    `!composer.tensor` knows nothing; `!composer.tensor<*xf32>` knows the dtype;
    `!composer.tensor<?x3x224x224xf32>` knows the rank and some dimensions;
    `!composer.tensor<2x3xunk>` knows the shape but not the dtype.
  }];
  let parameters = (ins "bool":$hasRank,
                        ArrayRefParameter<"int64_t">:$sizes,
                        "::mlir::Type":$dtype);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    TypeBuilder<(ins), [{
      return $_get($_ctxt, false, ::llvm::ArrayRef<int64_t>(), ::mlir::Type());
    }]>
  ];
  let extraClassDeclaration = [{
    static constexpr int64_t kUnknownSize = ::mlir::ShapedType::kDynamic;
    bool hasDtype() const { return static_cast<bool>(getDtype()); }
    int64_t getRank() const { return getSizes().size(); }
    bool hasStaticShape() const {
      return getHasRank() && !::llvm::is_contained(getSizes(), kUnknownSize);
    }
    /// Everything either type knows; null if they contradict each other.
    TorchTensorType meet(TorchTensorType other) const;
    /// What both types know: the type of a value that has one or the other
    /// (an if's result, from its two branches).
    TorchTensorType join(TorchTensorType other) const;
  }];
}

def Composer_IntType : Composer_Type<"Int", "int"> {
  let summary = "TorchScript int (64-bit)";
}
def Composer_FloatType : Composer_Type<"TorchFloat", "float"> {
  let summary = "TorchScript float (64-bit)";
}
def Composer_BoolType : Composer_Type<"Bool", "bool"> {
  let summary = "TorchScript bool";
}
def Composer_StrType : Composer_Type<"Str", "str"> {
  let summary = "TorchScript str";
}
def Composer_NoneType : Composer_Type<"TorchNone", "none"> {
  let summary = "TorchScript None";
}
def Composer_DeviceType : Composer_Type<"Device", "device"> {
  let summary = "TorchScript Device";
}
def Composer_DtypeType : Composer_Type<"Dtype", "dtype"> {
  let summary = "TorchScript ScalarType";
}
def Composer_NumberType : Composer_Type<"Number", "number"> {
  let summary = "TorchScript Scalar (int, float or complex)";
}
def Composer_GeneratorType : Composer_Type<"Generator", "generator"> {
  let summary = "TorchScript Generator";
}
def Composer_AnyType : Composer_Type<"Any", "any"> {
  let summary = "TorchScript Any";
}

def Composer_ListType : Composer_Type<"List", "list"> {
  let summary = "TorchScript List[T]";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}
def Composer_OptionalType : Composer_Type<"Optional", "optional"> {
  let summary = "TorchScript Optional[T]";
  let parameters = (ins "::mlir::Type":$elementType);
  let assemblyFormat = "`<` $elementType `>`";
}
def Composer_TupleType : Composer_Type<"TorchTuple", "tuple"> {
  let summary = "TorchScript Tuple[T...]";
  let parameters = (ins OptionalArrayRefParameter<"::mlir::Type">:$elementTypes);
  let assemblyFormat = "`<` (`>`) : ($elementTypes^ `>`)?";
}
def Composer_DictType : Composer_Type<"Dict", "dict"> {
  let summary = "TorchScript Dict[K, V]";
  let parameters = (ins "::mlir::Type":$keyType, "::mlir::Type":$valueType);
  let assemblyFormat = "`<` $keyType `,` $valueType `>`";
}
def Composer_ObjectType : Composer_Type<"Object", "object"> {
  let summary = "an instance of a TorchScript class, by qualified name";
  let parameters = (ins StringRefParameter<>:$className);
  let assemblyFormat = "`<` $className `>`";
}
def Composer_OpaqueType : Composer_Type<"TorchOpaque", "opaque"> {
  let summary = "a TorchScript type the dialect does not model, by annotation";
  let parameters = (ins StringRefParameter<>:$annotation);
  let assemblyFormat = "`<` $annotation `>`";
}

def Composer_AnyTensor : Type<CPred<"::llvm::isa<::composer::TorchTensorType>($_self)">,
                              "composer tensor", "::composer::TorchTensorType">;
def Composer_OptionalTensor : Type<
    CPred<"::llvm::isa<::composer::OptionalType>($_self) && "
          "::llvm::isa<::composer::TorchTensorType>("
          "::llvm::cast<::composer::OptionalType>($_self).getElementType())">,
    "optional tensor">;
def Composer_TensorOrNone
    : AnyTypeOf<[Composer_AnyTensor, Composer_NoneType, Composer_OptionalTensor],
                "tensor, optional tensor or None">;
def Composer_IntValue
    : Type<CPred<"::llvm::isa<::composer::IntType>($_self)">, "composer int",
           "::composer::IntType">,
      BuildableType<"::composer::IntType::get($_builder.getContext())">;
def Composer_BoolValue
    : Type<CPred<"::llvm::isa<::composer::BoolType>($_self)">, "composer bool",
           "::composer::BoolType">,
      BuildableType<"::composer::BoolType::get($_builder.getContext())">;
def Composer_FloatValue
    : Type<CPred<"::llvm::isa<::composer::TorchFloatType>($_self)">, "composer float",
           "::composer::TorchFloatType">,
      BuildableType<"::composer::TorchFloatType::get($_builder.getContext())">;
def Composer_ListValue : Type<CPred<"::llvm::isa<::composer::ListType>($_self)">,
                              "composer list", "::composer::ListType">;

#endif // COMPOSER_TYPES
