//===- Precision.h - fp32, amp_bf16, amp_fp16 -------------------*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_PRECISION_H
#define COMPOSER_RUNTIME_PRECISION_H

#include <torch/torch.h>

#include <string>

namespace composer::runtime {

enum class Precision { FP32, AmpBF16, AmpFP16 };

/// "fp32", "amp_bf16", "amp_fp16"; throws std::invalid_argument otherwise.
Precision parsePrecision(const std::string &text);
const char *precisionName(Precision precision);

/// Turns LibTorch autocast on for `device` for its lifetime (no-op in fp32).
/// Throws std::invalid_argument where this LibTorch cannot autocast to the
/// dtype on that device. The only place that knows LibTorch's autocast API.
class AutocastGuard {
public:
  AutocastGuard(Precision precision, torch::Device device);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard &) = delete;
  AutocastGuard &operator=(const AutocastGuard &) = delete;

private:
  bool active_ = false;
  torch::Device device_;
  bool previousEnabled_ = false;
  at::ScalarType previousDtype_ = at::kFloat;
};

/// Dynamic loss scaling for fp16: scale the loss, unscale the gradients,
/// skip steps whose gradients overflowed and back off the scale.
class GradScaler {
public:
  explicit GradScaler(bool enabled, double initScale = 65536.0,
                      double growthFactor = 2.0, double backoffFactor = 0.5,
                      int64_t growthInterval = 2000);
  bool enabled() const { return enabled_; }
  torch::Tensor scale(const torch::Tensor &loss) const;
  /// Divides the gradients by the scale; returns false if any is inf/NaN.
  bool unscale(const std::vector<torch::Tensor> &parameters);
  /// Adjusts the scale after a step (or a skipped one).
  void update(bool stepWasFinite);
  double currentScale() const { return scale_; }
  void setScale(double scale) { scale_ = scale; }
  int64_t growthTracker() const { return growthTracker_; }
  void setGrowthTracker(int64_t value) { growthTracker_ = value; }

private:
  bool enabled_;
  double scale_, growthFactor_, backoffFactor_;
  int64_t growthInterval_, growthTracker_ = 0;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_PRECISION_H
