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

/// Initializers of existing state that a pass assumed the tensor holds when
/// it rewrote the graph; export checks the model's tensor against them
/// (composer-alibi: a causal-mask buffer it rebuilds from the sequence
/// length, a position-index buffer whose embedding it removes, a token-type
/// buffer it rebuilds from the sequence length).
/// Lower-triangular ones in the last two dimensions.
inline constexpr std::string_view kTrilOnesInit = "tril_ones";
/// 0..N-1 along the last dimension.
inline constexpr std::string_view kArangeInit = "arange";
/// All zeros.
inline constexpr std::string_view kZerosInit = "zeros";

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
