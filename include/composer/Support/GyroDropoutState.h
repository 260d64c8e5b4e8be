//===- GyroDropoutState.h - state composer-gyro-dropout adds ----*- C++ -*-===//
//
// What composer-gyro-dropout, the exporter and composer-train's
// gyro_dropout algorithm agree on. Dependency-free: included by passes/,
// lib/TorchScript and runtime/.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_SUPPORT_GYRODROPOUTSTATE_H
#define COMPOSER_SUPPORT_GYRODROPOUTSTATE_H

#include <string_view>

namespace composer {

/// Buffer (int64 scalar): the period of re-selection of the active masks,
/// in training steps; 0 until set, which composer-train does at fit start
/// (one epoch unless the recipe says otherwise).
inline constexpr std::string_view kGyroDropoutPeriodBuffer =
    "_composer_gyro_dropout.period";

/// "dropout_mask:<p>": a site's preselected masks, Composer's
/// `(rand(shape) > p).float()`, drawn from a generator seeded by the
/// buffer's state_dict key.
inline constexpr std::string_view kDropoutMaskInit = "dropout_mask";

} // namespace composer

#endif // COMPOSER_SUPPORT_GYRODROPOUTSTATE_H
