//===- TorchUpstream.h - PyTorch's enums, defined once ----------*- C++ -*-===//
//
// The c10 enums that TorchScript graphs carry as plain integers
// (c10::ScalarType, c10::MemoryFormat), with their upstream values, in the
// style of torch-mlir's TorchUpstream.h. Dependency-free: the compiler, the
// TorchScript plugin and the runtime all include it, and nothing else may
// spell these numbers.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_SUPPORT_TORCHUPSTREAM_H
#define COMPOSER_SUPPORT_TORCHUPSTREAM_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace composer::torch_upstream {

/// c10::ScalarType (c10/core/ScalarType.h), the values TorchScript stores.
enum class ScalarType : int64_t {
  Byte = 0,
  Char = 1,
  Short = 2,
  Int = 3,
  Long = 4,
  Half = 5,
  Float = 6,
  Double = 7,
  ComplexHalf = 8,
  ComplexFloat = 9,
  ComplexDouble = 10,
  Bool = 11,
  QInt8 = 12,
  QUInt8 = 13,
  QInt32 = 14,
  BFloat16 = 15,
};

/// c10::MemoryFormat (c10/core/MemoryFormat.h).
enum class MemoryFormat : int64_t {
  Contiguous = 0,
  Preserve = 1,
  ChannelsLast = 2,
  ChannelsLast3d = 3,
};

template <typename Enum> struct NamedValue {
  Enum value;
  std::string_view name;
};

/// The IR's short names of the scalar types the dialect has an element type
/// for (complex and quantized types have none).
inline constexpr NamedValue<ScalarType> kScalarTypeNames[] = {
    {ScalarType::Byte, "ui8"},   {ScalarType::Char, "i8"},
    {ScalarType::Short, "i16"},  {ScalarType::Int, "i32"},
    {ScalarType::Long, "i64"},   {ScalarType::Half, "f16"},
    {ScalarType::Float, "f32"},  {ScalarType::Double, "f64"},
    {ScalarType::Bool, "i1"},    {ScalarType::BFloat16, "bf16"},
};

/// The names the IR prints memory formats by.
inline constexpr NamedValue<MemoryFormat> kMemoryFormatNames[] = {
    {MemoryFormat::Contiguous, "contiguous"},
    {MemoryFormat::Preserve, "preserve"},
    {MemoryFormat::ChannelsLast, "channels_last"},
    {MemoryFormat::ChannelsLast3d, "channels_last_3d"},
};

/// `value`'s name in `table`, or empty.
template <typename Enum, size_t N>
constexpr std::string_view getName(const NamedValue<Enum> (&table)[N],
                                   Enum value) {
  for (const NamedValue<Enum> &entry : table)
    if (entry.value == value)
      return entry.name;
  return {};
}

/// The value named `name` in `table`.
template <typename Enum, size_t N>
constexpr std::optional<Enum> parseName(const NamedValue<Enum> (&table)[N],
                                        std::string_view name) {
  for (const NamedValue<Enum> &entry : table)
    if (entry.name == name)
      return entry.value;
  return std::nullopt;
}

/// The IR's short name of a scalar type as the dialect prints dtypes
/// ("f32", "bf16", "i64", "ui8", "i1"); empty for types the dialect has no
/// element type for (complex, quantized).
constexpr std::string_view getScalarTypeName(ScalarType type) {
  return getName(kScalarTypeNames, type);
}

/// The inverse of getScalarTypeName.
constexpr std::optional<ScalarType> parseScalarTypeName(std::string_view name) {
  return parseName(kScalarTypeNames, name);
}

/// A scalar type from a TorchScript integer, if it names one.
constexpr std::optional<ScalarType> toScalarType(int64_t code) {
  if (code < 0 || code > int64_t(ScalarType::BFloat16))
    return std::nullopt;
  return static_cast<ScalarType>(code);
}

constexpr bool isFloatingPoint(ScalarType type) {
  return type == ScalarType::Half || type == ScalarType::Float ||
         type == ScalarType::Double || type == ScalarType::BFloat16;
}

} // namespace composer::torch_upstream

#endif // COMPOSER_SUPPORT_TORCHUPSTREAM_H
