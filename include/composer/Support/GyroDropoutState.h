//===- GyroDropoutState.h - state composer-gyro-dropout adds ----*- C++ -*-===//
//
// What composer-gyro-dropout and composer-train's gyro_dropout algorithm
// agree on. Dependency-free: included by passes/ and runtime/.
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

} // namespace composer

#endif // COMPOSER_SUPPORT_GYRODROPOUTSTATE_H
