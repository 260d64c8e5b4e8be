//===- ComposerAttributes.cpp - torch enums as attributes -----------------===//

#include "composer/Dialect/Composer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace composer;
using torch_upstream::MemoryFormat;
using torch_upstream::ScalarType;

#define GET_ATTRDEF_CLASSES
#include "composer/Dialect/ComposerAttributes.cpp.inc"

void ComposerDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "composer/Dialect/ComposerAttributes.cpp.inc"
      >();
}

Type composer::getDtypeType(MLIRContext *ctx, ScalarType scalarType) {
  Builder b(ctx);
  switch (scalarType) {
  case ScalarType::Byte:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case ScalarType::Char:
    return b.getIntegerType(8);
  case ScalarType::Short:
    return b.getIntegerType(16);
  case ScalarType::Int:
    return b.getIntegerType(32);
  case ScalarType::Long:
    return b.getIntegerType(64);
  case ScalarType::Half:
    return b.getF16Type();
  case ScalarType::Float:
    return b.getF32Type();
  case ScalarType::Double:
    return b.getF64Type();
  case ScalarType::Bool:
    return b.getI1Type();
  case ScalarType::BFloat16:
    return b.getBF16Type();
  default:
    return {};
  }
}

std::optional<ScalarType> composer::getScalarType(Type dtype) {
  if (!dtype)
    return std::nullopt;
  for (const auto &entry : torch_upstream::kScalarTypeNames)
    if (getDtypeType(dtype.getContext(), entry.value) == dtype)
      return entry.value;
  return std::nullopt;
}

StringRef composer::getMemoryFormatName(MemoryFormat format) {
  return torch_upstream::getName(torch_upstream::kMemoryFormatNames, format);
}

std::optional<MemoryFormat> composer::parseMemoryFormatName(StringRef name) {
  return torch_upstream::parseName(torch_upstream::kMemoryFormatNames,
                                   std::string_view(name));
}

/// Parses `<name>` into the enum value `table` names, or emits "expected
/// <what> (<the names>), got '<name>'".
template <typename Enum, size_t N>
static std::optional<Enum>
parseNamedValue(AsmParser &parser,
                const torch_upstream::NamedValue<Enum> (&table)[N],
                StringRef what) {
  StringRef name;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() || parser.parseKeyword(&name))
    return std::nullopt;
  std::optional<Enum> value =
      torch_upstream::parseName(table, std::string_view(name));
  if (!value) {
    InFlightDiagnostic diag = parser.emitError(loc, "expected ") << what << " (";
    llvm::interleaveComma(table, diag, [&](const auto &entry) {
      diag << StringRef(entry.name);
    });
    diag << "), got '" << name << "'";
    return std::nullopt;
  }
  if (parser.parseGreater())
    return std::nullopt;
  return value;
}

//===----------------------------------------------------------------------===//
// ScalarTypeAttr: #composer.dtype<bf16>
//===----------------------------------------------------------------------===//

Attribute ScalarTypeAttr::parse(AsmParser &parser, Type) {
  std::optional<ScalarType> value =
      parseNamedValue(parser, torch_upstream::kScalarTypeNames, "a dtype");
  return value ? ScalarTypeAttr::get(parser.getContext(), *value)
               : Attribute();
}

void ScalarTypeAttr::print(AsmPrinter &printer) const {
  printer << '<' << StringRef(torch_upstream::getScalarTypeName(getValue()))
          << '>';
}

LogicalResult
ScalarTypeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       ScalarType value) {
  if (torch_upstream::getScalarTypeName(value).empty())
    return emitError() << "scalar type " << static_cast<int64_t>(value)
                       << " has no tensor dtype in the composer dialect";
  return success();
}

//===----------------------------------------------------------------------===//
// MemoryFormatAttr: #composer.memory_format<channels_last>
//===----------------------------------------------------------------------===//

Attribute MemoryFormatAttr::parse(AsmParser &parser, Type) {
  std::optional<MemoryFormat> value = parseNamedValue(
      parser, torch_upstream::kMemoryFormatNames, "a memory format");
  return value ? MemoryFormatAttr::get(parser.getContext(), *value)
               : Attribute();
}

void MemoryFormatAttr::print(AsmPrinter &printer) const {
  printer << '<' << getMemoryFormatName(getValue()) << '>';
}

LogicalResult
MemoryFormatAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         MemoryFormat value) {
  if (getMemoryFormatName(value).empty())
    return emitError() << "memory format " << static_cast<int64_t>(value)
                       << " is not a c10::MemoryFormat";
  return success();
}
