//===- ALiBiState.h - state composer-alibi relies on ------------*- C++ -*-===//
//
// Initializers composer-alibi records on buffers the model already has:
// what it assumed a buffer holds when it rewrote the graph (it builds a
// causal mask's slices from the sequence length, removes the embedding of a
// position-index buffer, builds a token-type buffer's slices as zeros).
// Export checks the model's tensor against them. Dependency-free: included
// by passes/ and lib/TorchScript.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_SUPPORT_ALIBISTATE_H
#define COMPOSER_SUPPORT_ALIBISTATE_H

#include <string_view>

namespace composer {

/// Lower-triangular ones in the last two dimensions, the same in every
/// leading one (a causal mask).
inline constexpr std::string_view kTrilOnesInit = "tril_ones";
/// 0..N-1 along the last dimension.
inline constexpr std::string_view kArangeInit = "arange";
/// All zeros.
inline constexpr std::string_view kZerosInit = "zeros";

} // namespace composer

#endif // COMPOSER_SUPPORT_ALIBISTATE_H
