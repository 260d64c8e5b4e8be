//===- StochasticDepthState.h - stochastic depth's buffers ------*- C++ -*-===//
//
// What composer-stochastic-depth and composer-train's stochastic_depth
// algorithm agree on. Dependency-free: included by passes/ and runtime/.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_SUPPORT_STOCHASTICDEPTHSTATE_H
#define COMPOSER_SUPPORT_STOCHASTICDEPTHSTATE_H

#include <string_view>

namespace composer {

/// Buffer (float32 scalar, 1 as exported): every block's drop rate is
/// scaled by it; composer-train ramps it from 0 to 1 over the warm-up.
inline constexpr std::string_view kStochasticDepthScaleBuffer =
    "_composer_stochastic_depth.scale";
/// Buffer (float32 scalar): the drop-warmup fraction of the run the pass
/// was given, the ramp's length when the recipe sets none.
inline constexpr std::string_view kStochasticDepthWarmupBuffer =
    "_composer_stochastic_depth.warmup";

} // namespace composer

#endif // COMPOSER_SUPPORT_STOCHASTICDEPTHSTATE_H
