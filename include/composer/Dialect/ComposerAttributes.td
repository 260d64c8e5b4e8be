//===- ComposerAttributes.td - torch enums as attributes ---*- tablegen -*-===//
//
// c10::ScalarType and c10::MemoryFormat as attributes that print by name.
// The enums themselves live in composer/Support/TorchUpstream.h, the one
// place their numbers are spelled; these attributes only wrap them.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ATTRIBUTES
#define COMPOSER_ATTRIBUTES

include "composer/Dialect/ComposerDialect.td"

// An attribute holding one value of a TorchUpstream.h enum. Ops' accessors
// return the enum itself, and ODS builders take it.
class Composer_TorchEnumAttr<string name, string attrMnemonic, string enumType>
    : AttrDef<Composer_Dialect, name> {
  let mnemonic = attrMnemonic;
  let parameters = (ins enumType:$value);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let returnType = enumType;
  let convertFromStorage = "$_self.getValue()";
  let constBuilderCall =
      "::composer::" # name # "Attr::get($_builder.getContext(), $0)";
}

def Composer_ScalarTypeAttr
    : Composer_TorchEnumAttr<"ScalarType", "dtype",
                             "::composer::torch_upstream::ScalarType"> {
  let summary = "a c10::ScalarType, by the name of its element type";
  let description = [{
    `#composer.dtype<bf16>`: the dtype names are the element types a
    `!composer.tensor` carries (f16, bf16, f32, f64, i1, i8, i16, i32, i64,
    ui8). TorchScript stores the c10::ScalarType number; import and export
    translate it exactly.
  }];
}

def Composer_MemoryFormatAttr
    : Composer_TorchEnumAttr<"MemoryFormat", "memory_format",
                             "::composer::torch_upstream::MemoryFormat"> {
  let summary = "a c10::MemoryFormat, by name";
  let description = [{
    `#composer.memory_format<channels_last>`; the names are `contiguous`,
    `preserve`, `channels_last` and `channels_last_3d`.
  }];
}

#endif // COMPOSER_ATTRIBUTES
