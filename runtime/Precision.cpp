//===- Precision.cpp - fp32, amp_bf16, amp_fp16 ---------------------------===//
//
// LibTorch's autocast API changed in 2.4 (per-device-type functions replaced
// the cpu/gpu pairs); this file is the one place that knows both.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Precision.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <cmath>
#include <stdexcept>

#define COMPOSER_TORCH_AT_LEAST(MAJOR, MINOR)                                  \
  (TORCH_VERSION_MAJOR > MAJOR ||                                              \
   (TORCH_VERSION_MAJOR == MAJOR && TORCH_VERSION_MINOR >= MINOR))

namespace composer::runtime {

Precision parsePrecision(const std::string &text) {
  if (text == "fp32")
    return Precision::FP32;
  if (text == "amp_bf16")
    return Precision::AmpBF16;
  if (text == "amp_fp16")
    return Precision::AmpFP16;
  throw std::invalid_argument("unknown precision '" + text +
                              "': expected fp32, amp_bf16 or amp_fp16");
}

const char *precisionName(Precision precision) {
  switch (precision) {
  case Precision::FP32:
    return "fp32";
  case Precision::AmpBF16:
    return "amp_bf16";
  case Precision::AmpFP16:
    return "amp_fp16";
  }
  return "?";
}

namespace {
bool autocastEnabled(const torch::Device &device) {
#if COMPOSER_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device.type());
#else
  return device.is_cuda() ? at::autocast::is_enabled()
                          : at::autocast::is_cpu_enabled();
#endif
}

at::ScalarType autocastDtype(const torch::Device &device) {
#if COMPOSER_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device.type());
#else
  return device.is_cuda() ? at::autocast::get_autocast_gpu_dtype()
                          : at::autocast::get_autocast_cpu_dtype();
#endif
}

void setAutocast(const torch::Device &device, bool enabled,
                 at::ScalarType dtype) {
#if COMPOSER_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_dtype(device.type(), dtype);
  at::autocast::set_autocast_enabled(device.type(), enabled);
#else
  if (device.is_cuda()) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}
} // namespace

AutocastGuard::AutocastGuard(Precision precision, torch::Device device)
    : device_(device) {
  if (precision == Precision::FP32)
    return;
  if (!device.is_cpu() && !device.is_cuda())
    throw std::invalid_argument(std::string(precisionName(precision)) +
                                " needs a CPU or CUDA device");
  at::ScalarType dtype =
      precision == Precision::AmpBF16 ? at::kBFloat16 : at::kHalf;
#if !COMPOSER_TORCH_AT_LEAST(2, 1)
  if (device.is_cpu() && dtype == at::kHalf)
    throw std::invalid_argument(
        "amp_fp16 on CPU needs LibTorch 2.1 or later (this is " TORCH_VERSION
        "); use amp_bf16");
#endif
  previousEnabled_ = autocastEnabled(device);
  previousDtype_ = autocastDtype(device);
  setAutocast(device, true, dtype);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastGuard::~AutocastGuard() {
  if (!active_)
    return;
  // Leaving the outermost region frees autocast's cached weight casts.
  if (at::autocast::decrement_nesting() == 0)
    at::autocast::clear_cache();
  setAutocast(device_, previousEnabled_, previousDtype_);
}

GradScaler::GradScaler(bool enabled, double initScale, double growthFactor,
                       double backoffFactor, int64_t growthInterval)
    : enabled_(enabled), scale_(initScale), growthFactor_(growthFactor),
      backoffFactor_(backoffFactor), growthInterval_(growthInterval) {}

torch::Tensor GradScaler::scale(const torch::Tensor &loss) const {
  return enabled_ ? loss * scale_ : loss;
}

bool GradScaler::unscale(const std::vector<torch::Tensor> &parameters) {
  if (!enabled_)
    return true;
  bool finite = true;
  for (const torch::Tensor &parameter : parameters) {
    torch::Tensor grad = parameter.grad();
    if (!grad.defined())
      continue;
    grad.mul_(1.0 / scale_);
    finite = finite && torch::isfinite(grad).all().item<bool>();
  }
  return finite;
}

void GradScaler::update(bool stepWasFinite) {
  if (!enabled_)
    return;
  if (!stepWasFinite) {
    scale_ *= backoffFactor_;
    growthTracker_ = 0;
    return;
  }
  if (++growthTracker_ == growthInterval_) {
    scale_ *= growthFactor_;
    growthTracker_ = 0;
  }
}

} // namespace composer::runtime
