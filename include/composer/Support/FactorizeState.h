//===- FactorizeState.h - state composer-factorize adds ---------*- C++ -*-===//
//
// The initializers of the factor pairs composer-factorize declares, which
// export materializes from the SVD of the weight they replace.
// Dependency-free: included by passes/ and lib/TorchScript.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_SUPPORT_FACTORIZESTATE_H
#define COMPOSER_SUPPORT_FACTORIZESTATE_H

#include <string_view>

namespace composer {

/// "<kind>:<key>": the first (sqrt(S_r) V_r^T) or second (U_r sqrt(S_r))
/// factor of the truncated SVD of the model's tensor <key> reshaped to
/// (out, fan_in); the rank r is the factor's declared size.
inline constexpr std::string_view kSvdFirstInit = "svd_first";
inline constexpr std::string_view kSvdSecondInit = "svd_second";
/// The same factors of the 2-D tensor <key>'s transpose: a weight stored
/// [in, out] (GPT-2's Conv1D) factorized as linears.
inline constexpr std::string_view kSvdFirstOfTransposeInit = "svd_first_t";
inline constexpr std::string_view kSvdSecondOfTransposeInit = "svd_second_t";

} // namespace composer

#endif // COMPOSER_SUPPORT_FACTORIZESTATE_H
