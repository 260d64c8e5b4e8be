//===- StatePaths.h - state_dict paths and recorded metadata ----*- C++ -*-===//
//
// What the compiler and the runtime agree on about a model's state: dotted
// state_dict paths ("layer1.0.conv1.weight"), and the attributes composer-opt
// records on an exported module for the runtime. Dependency-free: included by
// passes/, lib/TorchScript and runtime/ alike.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_SUPPORT_STATEPATHS_H
#define COMPOSER_SUPPORT_STATEPATHS_H

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace composer {

/// Module attribute: the layers in forward order (list of module paths),
/// recorded by composer-freeze-layers for the runtime's freezing schedule.
inline constexpr std::string_view kLayersAttrName = "_composer_layers";
/// Module attribute: how many of those layers are frozen (int).
inline constexpr std::string_view kFrozenLayersAttrName =
    "_composer_frozen_layers";

/// A parameter or buffer declaration's string initializer: "<kind>", or
/// "<kind>:<argument>" with a non-empty argument. Export makes new state
/// from it and checks existing state against it; each kind is named in the
/// state header of the method that writes it (FactorizeState.h, ...).
inline constexpr char kInitializerArgumentSeparator = ':';

/// PyTorch's nn.Linear initialization, uniform in +-1/sqrt(fan_in):
/// "linear_default" for a 2-D weight (fan_in its size(1)),
/// "linear_default:<fan_in>" for any shape (a bias).
inline constexpr std::string_view kLinearDefaultInit = "linear_default";

/// The initializer "<kind>:<argument>".
inline std::string makeInitializer(std::string_view kind,
                                   std::string_view argument) {
  std::string initializer(kind);
  initializer += kInitializerArgumentSeparator;
  initializer += argument;
  return initializer;
}

/// Splits an initializer into its kind and its argument (nullopt if it
/// has no separator; an empty argument if nothing follows it).
inline std::pair<std::string_view, std::optional<std::string_view>>
splitInitializer(std::string_view initializer) {
  size_t separator = initializer.find(kInitializerArgumentSeparator);
  if (separator == std::string_view::npos)
    return {initializer, std::nullopt};
  return {initializer.substr(0, separator), initializer.substr(separator + 1)};
}

/// Splits "a.b.c" into its owner path "a.b" and its name "c"; a path
/// without a dot is owned by the root ("").
inline std::pair<std::string_view, std::string_view>
splitStatePath(std::string_view path) {
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos)
    return {std::string_view(), path};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

/// The module path owning `path`: "a.b" for "a.b.c", "" for "c".
inline std::string_view getStateOwner(std::string_view path) {
  return splitStatePath(path).first;
}

/// Joins an owner path and a name with a dot, or returns the name alone.
inline std::string joinStatePath(std::string_view owner,
                                 std::string_view name) {
  if (owner.empty())
    return std::string(name);
  std::string joined(owner);
  joined += '.';
  joined += name;
  return joined;
}

} // namespace composer

#endif // COMPOSER_SUPPORT_STATEPATHS_H
