//===- Conversion.cpp - types, constants, locations -----------------------===//

#include "Conversion.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/frontend/script_type_parser.h>
#include <torch/custom_class.h>

using namespace mlir;
using namespace composer;

// TorchUpstream.h spells c10's numbers once; LibTorch is here to check them.
#define COMPOSER_CHECK_ENUM(ENUM, NAME)                                        \
  static_assert(static_cast<int64_t>(torch_upstream::ENUM::NAME) ==            \
                    static_cast<int64_t>(c10::ENUM::NAME),                     \
                "TorchUpstream.h disagrees with c10 on " #ENUM "::" #NAME);
COMPOSER_CHECK_ENUM(ScalarType, Byte)
COMPOSER_CHECK_ENUM(ScalarType, Char)
COMPOSER_CHECK_ENUM(ScalarType, Short)
COMPOSER_CHECK_ENUM(ScalarType, Int)
COMPOSER_CHECK_ENUM(ScalarType, Long)
COMPOSER_CHECK_ENUM(ScalarType, Half)
COMPOSER_CHECK_ENUM(ScalarType, Float)
COMPOSER_CHECK_ENUM(ScalarType, Double)
COMPOSER_CHECK_ENUM(ScalarType, ComplexHalf)
COMPOSER_CHECK_ENUM(ScalarType, ComplexFloat)
COMPOSER_CHECK_ENUM(ScalarType, ComplexDouble)
COMPOSER_CHECK_ENUM(ScalarType, Bool)
COMPOSER_CHECK_ENUM(ScalarType, QInt8)
COMPOSER_CHECK_ENUM(ScalarType, QUInt8)
COMPOSER_CHECK_ENUM(ScalarType, QInt32)
COMPOSER_CHECK_ENUM(ScalarType, BFloat16)
COMPOSER_CHECK_ENUM(MemoryFormat, Contiguous)
COMPOSER_CHECK_ENUM(MemoryFormat, Preserve)
COMPOSER_CHECK_ENUM(MemoryFormat, ChannelsLast)
COMPOSER_CHECK_ENUM(MemoryFormat, ChannelsLast3d)
#undef COMPOSER_CHECK_ENUM

Type composer::importDtype(c10::ScalarType dtype, MLIRContext *ctx) {
  std::optional<torch_upstream::ScalarType> scalarType =
      torch_upstream::toScalarType(static_cast<int64_t>(dtype));
  return scalarType ? getDtypeType(ctx, *scalarType) : Type();
}

std::optional<c10::ScalarType> composer::exportDtype(Type dtype) {
  if (std::optional<torch_upstream::ScalarType> scalarType =
          getScalarType(dtype))
    return static_cast<c10::ScalarType>(*scalarType);
  return std::nullopt;
}

Attribute composer::importEnumAttribute(const c10::IValue &value,
                                        const c10::TypePtr &type,
                                        MLIRContext *ctx) {
  c10::TypePtr declared = type;
  if (auto optional = type->cast<c10::OptionalType>())
    declared = optional->getElementType();
  if (!value.isInt())
    return {};
  int64_t code = value.toInt();
  if (declared->kind() == c10::TypeKind::ScalarTypeType) {
    std::optional<torch_upstream::ScalarType> scalarType =
        torch_upstream::toScalarType(code);
    if (!scalarType || !getDtypeType(ctx, *scalarType))
      return {};
    return ScalarTypeAttr::get(ctx, *scalarType);
  }
  if (declared->kind() == c10::TypeKind::MemoryFormatType) {
    auto format = static_cast<torch_upstream::MemoryFormat>(code);
    if (getMemoryFormatName(format).empty())
      return {};
    return MemoryFormatAttr::get(ctx, format);
  }
  return {};
}

static TorchTensorType importTensorType(const c10::TensorType &type,
                                        MLIRContext *ctx) {
  Type dtype;
  if (auto scalar = type.scalarType())
    dtype = importDtype(*scalar, ctx);
  auto rank = type.dim();
  if (!rank)
    return TorchTensorType::get(ctx, false, {}, dtype);
  SmallVector<int64_t> sizes;
  for (size_t i = 0; i < *rank; ++i) {
    auto size = type.sizes()[i];
    sizes.push_back(size ? *size : TorchTensorType::kUnknownSize);
  }
  return TorchTensorType::get(ctx, true, sizes, dtype);
}

Type composer::importType(const c10::TypePtr &type, MLIRContext *ctx) {
  using c10::TypeKind;
  switch (type->kind()) {
  case TypeKind::TensorType:
    return importTensorType(*type->expect<c10::TensorType>(), ctx);
  case TypeKind::IntType:
    return IntType::get(ctx);
  case TypeKind::FloatType:
    return TorchFloatType::get(ctx);
  case TypeKind::BoolType:
    return BoolType::get(ctx);
  case TypeKind::StringType:
    return StrType::get(ctx);
  case TypeKind::NoneType:
    return TorchNoneType::get(ctx);
  case TypeKind::DeviceObjType:
    return DeviceType::get(ctx);
  case TypeKind::ScalarTypeType:
    return DtypeType::get(ctx);
  case TypeKind::NumberType:
    return NumberType::get(ctx);
  case TypeKind::GeneratorType:
    return GeneratorType::get(ctx);
  case TypeKind::AnyType:
    return AnyType::get(ctx);
  case TypeKind::ListType:
    return ListType::get(
        ctx,
        importType(type->expectRef<c10::ListType>().getElementType(), ctx));
  case TypeKind::OptionalType:
    return OptionalType::get(
        ctx,
        importType(type->expectRef<c10::OptionalType>().getElementType(), ctx));
  case TypeKind::DictType: {
    const auto &dict = type->expectRef<c10::DictType>();
    return DictType::get(ctx, importType(dict.getKeyType(), ctx),
                         importType(dict.getValueType(), ctx));
  }
  case TypeKind::TupleType: {
    const auto &tuple = type->expectRef<c10::TupleType>();
    // A NamedTuple is a class the dialect does not model; its opaque type
    // keeps the qualified name, which exportType resolves in the model.
    if (tuple.schema())
      break;
    SmallVector<Type> elements;
    for (const c10::TypePtr &element : tuple.elements())
      elements.push_back(importType(element, ctx));
    return TorchTupleType::get(ctx, elements);
  }
  case TypeKind::ClassType:
    if (auto name = type->expectRef<c10::ClassType>().name())
      return ObjectType::get(ctx, name->qualifiedName());
    break;
  default:
    break;
  }
  return TorchOpaqueType::get(ctx, type->annotation_str());
}

namespace {
/// Names the model's classes, NamedTuples, enums and interfaces as
/// torch.jit.load does: by qualified name in its compilation unit.
struct CompilationUnitResolver : torch::jit::Resolver {
  explicit CompilationUnitResolver(torch::jit::CompilationUnit &cu) : cu(cu) {}
  c10::TypePtr resolveType(const std::string &name,
                           const torch::jit::SourceRange &) override {
    return cu.get_type(c10::QualifiedName(name));
  }
  torch::jit::CompilationUnit &cu;
};
} // namespace

/// The type an annotation importType kept for an opaque type names, parsed
/// as TorchScript parses the annotations in a saved model's code; null (and
/// `error` set) if it names none.
static c10::TypePtr parseAnnotation(const std::string &annotation,
                                    torch::jit::CompilationUnit &cu,
                                    std::string &error) {
  try {
    return torch::jit::ScriptTypeParser(
               std::make_shared<CompilationUnitResolver>(cu))
        .parseType(annotation);
  } catch (const std::exception &e) {
    // The message's first line says why; the annotation, highlighted,
    // follows.
    StringRef message =
        StringRef(e.what()).ltrim().split('\n').first.trim().rtrim(':');
    error = message.empty() ? "unknown type" : message.str();
    return nullptr;
  }
}

c10::TypePtr composer::exportType(Type type, torch::jit::CompilationUnit &cu,
                                  std::string &error) {
  auto recurse = [&](Type element) { return exportType(element, cu, error); };
  if (isa<TorchTensorType>(type))
    return c10::TensorType::get();
  if (isa<IntType>(type))
    return c10::IntType::get();
  if (isa<TorchFloatType>(type))
    return c10::FloatType::get();
  if (isa<BoolType>(type))
    return c10::BoolType::get();
  if (isa<StrType>(type))
    return c10::StringType::get();
  if (isa<TorchNoneType>(type))
    return c10::NoneType::get();
  if (isa<DeviceType>(type))
    return c10::DeviceObjType::get();
  if (isa<DtypeType>(type))
    return c10::ScalarTypeType::get();
  if (isa<NumberType>(type))
    return c10::NumberType::get();
  if (isa<GeneratorType>(type))
    return c10::GeneratorType::get();
  if (isa<AnyType>(type))
    return c10::AnyType::get();
  if (auto list = dyn_cast<ListType>(type)) {
    c10::TypePtr element = recurse(list.getElementType());
    return element ? c10::ListType::create(element) : nullptr;
  }
  if (auto optional = dyn_cast<OptionalType>(type)) {
    c10::TypePtr element = recurse(optional.getElementType());
    return element ? c10::OptionalType::create(element) : nullptr;
  }
  if (auto dict = dyn_cast<DictType>(type)) {
    c10::TypePtr key = recurse(dict.getKeyType());
    c10::TypePtr value = key ? recurse(dict.getValueType()) : nullptr;
    return value ? c10::DictType::create(key, value) : nullptr;
  }
  if (auto tuple = dyn_cast<TorchTupleType>(type)) {
    std::vector<c10::TypePtr> elements;
    for (Type element : tuple.getElementTypes()) {
      elements.push_back(recurse(element));
      if (!elements.back())
        return nullptr;
    }
    return c10::TupleType::create(std::move(elements));
  }
  if (auto object = dyn_cast<ObjectType>(type)) {
    std::string name = object.getClassName().str();
    if (c10::ClassTypePtr cls = cu.get_class(c10::QualifiedName(name)))
      return cls;
    // torch.classes objects are registered by LibTorch, not in the model.
    if (c10::ClassTypePtr cls = torch::getCustomClass(name))
      return cls;
    error = "class '" + name + "' is not defined in the model";
    return nullptr;
  }
  if (auto opaque = dyn_cast<TorchOpaqueType>(type)) {
    std::string parseError;
    if (c10::TypePtr parsed =
            parseAnnotation(opaque.getAnnotation().str(), cu, parseError))
      return parsed;
    error = "TorchScript has no type for '" + opaque.getAnnotation().str() +
            "': " + parseError;
    return nullptr;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "TorchScript has no type for " << type;
  error = os.str();
  return nullptr;
}

static Attribute importTensorConstant(const at::Tensor &value, MLIRContext *ctx,
                                      std::string &error) {
  Type dtype = importDtype(value.scalar_type(), ctx);
  if (!dtype || value.is_quantized() || value.layout() != c10::kStrided) {
    error = "tensor constant of dtype " +
            std::string(c10::toString(value.scalar_type())) +
            " is not supported";
    return {};
  }
  at::Tensor dense = value.detach().to(c10::kCPU).contiguous();
  auto shapedType = RankedTensorType::get(dense.sizes().vec(), dtype);
  if (dtype.isInteger(1)) {
    const bool *data = dense.data_ptr<bool>();
    return DenseElementsAttr::get(
        shapedType, ArrayRef<bool>(data, static_cast<size_t>(dense.numel())));
  }
  ArrayRef<char> raw(static_cast<const char *>(dense.data_ptr()),
                     dense.numel() * dense.element_size());
  return DenseElementsAttr::getFromRawBuffer(shapedType, raw);
}

Attribute composer::importConstant(const c10::IValue &value, MLIRContext *ctx,
                                   std::string &error) {
  Builder b(ctx);
  if (value.isNone())
    return b.getUnitAttr();
  if (value.isBool())
    return b.getBoolAttr(value.toBool());
  if (value.isInt())
    return b.getI64IntegerAttr(value.toInt());
  if (value.isDouble())
    return b.getF64FloatAttr(value.toDouble());
  if (value.isString())
    return b.getStringAttr(value.toStringRef());
  if (value.isDevice())
    return b.getStringAttr(value.toDevice().str());
  if (value.isTensor())
    return importTensorConstant(value.toTensor(), ctx, error);
  // An enum member by name; its type says which enum.
  if (value.isEnum())
    return b.getStringAttr(value.toEnumHolder()->name());
  auto importAll = [&](auto &&elements) -> Attribute {
    SmallVector<Attribute> attrs;
    for (const c10::IValue &element : elements) {
      attrs.push_back(importConstant(element, ctx, error));
      if (!attrs.back())
        return {};
    }
    return b.getArrayAttr(attrs);
  };
  if (value.isList())
    return importAll(value.toListRef());
  if (value.isTuple())
    return importAll(value.toTupleRef().elements());
  error = "constant of type " + value.type()->annotation_str() +
          " is not supported";
  return {};
}

static std::optional<at::Tensor> exportTensorConstant(DenseElementsAttr value,
                                                      std::string &error) {
  auto shaped = value.getType();
  std::optional<c10::ScalarType> dtype = exportDtype(shaped.getElementType());
  if (!dtype) {
    error = "unsupported tensor constant element type";
    return std::nullopt;
  }
  at::Tensor tensor =
      at::empty(shaped.getShape().vec(), at::TensorOptions().dtype(*dtype));
  if (dtype == c10::ScalarType::Bool) {
    bool *data = tensor.data_ptr<bool>();
    for (auto [i, element] : llvm::enumerate(value.getValues<bool>()))
      data[i] = element;
    return tensor;
  }
  ArrayRef<char> raw = value.getRawData();
  size_t bytes = tensor.numel() * tensor.element_size();
  if (value.isSplat()) {
    size_t elementBytes = raw.size();
    for (size_t offset = 0; offset < bytes; offset += elementBytes)
      std::memcpy(static_cast<char *>(tensor.data_ptr()) + offset, raw.data(),
                  elementBytes);
  } else {
    std::memcpy(tensor.data_ptr(), raw.data(), bytes);
  }
  return tensor;
}

std::optional<c10::IValue> composer::exportConstant(Attribute value,
                                                    const c10::TypePtr &type,
                                                    std::string &error) {
  using c10::TypeKind;
  auto fail = [&]() -> std::optional<c10::IValue> {
    error = "cannot export a constant of type " + type->annotation_str();
    return std::nullopt;
  };
  if (isa<UnitAttr>(value))
    return c10::IValue();
  if (type->kind() == TypeKind::OptionalType)
    return exportConstant(
        value, type->expectRef<c10::OptionalType>().getElementType(), error);
  switch (type->kind()) {
  case TypeKind::BoolType:
    if (auto attr = dyn_cast<BoolAttr>(value))
      return c10::IValue(attr.getValue());
    return fail();
  case TypeKind::IntType:
  case TypeKind::ScalarTypeType:
  case TypeKind::LayoutType:
  case TypeKind::MemoryFormatType:
    if (auto attr = dyn_cast<IntegerAttr>(value))
      return c10::IValue(attr.getInt());
    // TorchScript passes both enums as plain ints.
    if (auto attr = dyn_cast<ScalarTypeAttr>(value))
      return c10::IValue(static_cast<int64_t>(attr.getValue()));
    if (auto attr = dyn_cast<MemoryFormatAttr>(value))
      return c10::IValue(static_cast<int64_t>(attr.getValue()));
    return fail();
  case TypeKind::FloatType:
    if (auto attr = dyn_cast<FloatAttr>(value))
      return c10::IValue(attr.getValueAsDouble());
    return fail();
  case TypeKind::NumberType:
    if (auto attr = dyn_cast<FloatAttr>(value))
      return c10::IValue(attr.getValueAsDouble());
    if (auto attr = dyn_cast<IntegerAttr>(value))
      return c10::IValue(attr.getInt());
    return fail();
  case TypeKind::StringType:
    if (auto attr = dyn_cast<StringAttr>(value))
      return c10::IValue(attr.str());
    return fail();
  case TypeKind::DeviceObjType:
    if (auto attr = dyn_cast<StringAttr>(value))
      return c10::IValue(c10::Device(attr.str()));
    return fail();
  case TypeKind::TensorType:
    if (auto attr = dyn_cast<DenseElementsAttr>(value))
      if (std::optional<at::Tensor> tensor = exportTensorConstant(attr, error))
        return c10::IValue(*tensor);
    return fail();
  case TypeKind::ListType: {
    c10::TypePtr elementType =
        type->expectRef<c10::ListType>().getElementType();
    c10::impl::GenericList list(elementType);
    if (auto ints = dyn_cast<DenseI64ArrayAttr>(value)) {
      for (int64_t element : ints.asArrayRef())
        list.push_back(element);
      return c10::IValue(list);
    }
    auto array = dyn_cast<ArrayAttr>(value);
    if (!array)
      return fail();
    for (Attribute element : array) {
      std::optional<c10::IValue> exported =
          exportConstant(element, elementType, error);
      if (!exported)
        return std::nullopt;
      list.push_back(*exported);
    }
    return c10::IValue(list);
  }
  case TypeKind::TupleType: {
    const auto &tuple = type->expectRef<c10::TupleType>();
    auto array = dyn_cast<ArrayAttr>(value);
    if (!array || array.size() != tuple.elements().size())
      return fail();
    std::vector<c10::IValue> elements;
    for (auto [element, elementType] : llvm::zip(array, tuple.elements())) {
      std::optional<c10::IValue> exported =
          exportConstant(element, elementType, error);
      if (!exported)
        return std::nullopt;
      elements.push_back(*exported);
    }
    if (tuple.schema())
      return c10::IValue(c10::ivalue::Tuple::createNamed(
          std::move(elements), type->expect<c10::TupleType>()));
    return c10::IValue(c10::ivalue::Tuple::create(std::move(elements)));
  }
  case TypeKind::EnumType: {
    auto name = dyn_cast<StringAttr>(value);
    if (!name)
      return fail();
    auto enumType = type->expect<c10::EnumType>();
    for (const auto &[member, memberValue] : enumType->enumNamesValues())
      if (member == name.getValue())
        return c10::IValue(c10::make_intrusive<c10::ivalue::EnumHolder>(
            enumType, member, memberValue));
    error = enumType->annotation_str() + " has no member '" + name.str() + "'";
    return std::nullopt;
  }
  default:
    return fail();
  }
}

Location composer::importLocation(const torch::jit::SourceRange &serialized,
                                  MLIRContext *ctx) {
  if (!serialized.source())
    return UnknownLoc::get(ctx);
  // A loaded model's ranges point into its serialized code; the debug info
  // saved with it maps them back to the user's Python source.
  torch::jit::SourceRange range = serialized;
  if (auto original = serialized.findSourceRangeThatGenerated())
    range = *original;
  auto fileLineCol = range.file_line_col();
  if (!fileLineCol)
    return UnknownLoc::get(ctx);
  auto &[file, line, col] = *fileLineCol;
  if (file.empty())
    return UnknownLoc::get(ctx);
  return FileLineColLoc::get(ctx, file, line, col + 1);
}

std::pair<StringRef, StringRef> composer::splitAttrPath(StringRef path) {
  size_t dot = path.rfind('.');
  if (dot == StringRef::npos)
    return {StringRef(), path};
  return {path.take_front(dot), path.drop_front(dot + 1)};
}
