//===- Algorithms.h - The runtime algorithms of METHODS.md ------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_ALGORITHMS_H
#define COMPOSER_RUNTIME_ALGORITHMS_H

#include "composer/Runtime/Algorithm.h"

#include <memory>

namespace composer::runtime {

/// Targets y(1-e) + e/K, at BEFORE_LOSS.
std::unique_ptr<Algorithm> createLabelSmoothing(double smoothing = 0.1);

/// x = l x + (1-l) x[perm] at BEFORE_FORWARD, targets mixed the same way at
/// BEFORE_LOSS; l = max(z, 1-z), z ~ Beta(alpha, alpha), one draw per batch.
std::unique_ptr<Algorithm> createMixUp(double alpha = 0.2);

/// One box from x[perm] pasted per batch (area ratio from Beta(alpha,
/// alpha)), targets mixed by the box's exact area.
std::unique_ptr<Algorithm> createCutMix(double alpha = 1.0);

/// Zeroes `numHoles` squares of side `length` per image (a fraction of the
/// shorter side if < 1, else pixels), centres uniform, clipped at borders.
std::unique_ptr<Algorithm> createCutOut(int64_t numHoles = 1,
                                        double length = 0.5);

/// Trains on downscaled inputs early: scale `initialScale` until
/// `delayFraction`, rising linearly to 1 at 1 - `finetuneFraction`; sides
/// rounded down to a multiple of `sizeIncrement`; bilinear ("resize") or
/// center crop ("crop").
std::unique_ptr<Algorithm>
createProgressiveResizing(double initialScale = 0.5, double delayFraction = 0.5,
                          double finetuneFraction = 0.2,
                          int64_t sizeIncrement = 4,
                          const std::string &mode = "resize");

/// Exponential moving average of weights and buffers, smoothing
/// 2^(-1/half_life) per `updateInterval`; the average is swapped in for
/// evaluation and saved in checkpoints.
std::unique_ptr<Algorithm> createEma(Time halfLife = {1000, TimeUnit::Batch},
                                     Time updateInterval = {1,
                                                            TimeUnit::Batch});

/// "norm" (total L2 norm <= threshold), "value" (each element clamped) or
/// "adaptive" (AGC: per output unit |g| <= threshold * max(|w|, 1e-3)).
std::unique_ptr<Algorithm> createGradientClipping(const std::string &type,
                                                  double threshold);

/// Progressive layer freezing at every epoch end (METHODS.md). Layer order
/// comes from the model's `_composer_layers` when composer-opt's freezing
/// pass recorded it, else from the order of parameter-owning modules.
std::unique_ptr<Algorithm> createLayerFreezing(double freezeStart = 0.5,
                                               double freezeLevel = 1.0);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ALGORITHMS_H
