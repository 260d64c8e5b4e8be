//===- Ops.h - the composer:: fused ops from C++ ----------------*- C++ -*-===//
//
// C++ entry points to the runtime's custom operators (docs/runtime-ops.md),
// each defined in its op's file under runtime/ops/: each goes through
// LibTorch's dispatcher, so autograd, devices and TorchScript see exactly
// what a lowered .pt calls.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_OPS_H
#define COMPOSER_RUNTIME_OPS_H

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace composer::ops {

/// Depthwise 3x3 `filter` (C, 1, 3, 3) at padding 1 and `stride`; inputs
/// smaller than the filter are subsampled instead.
at::Tensor blurPool2d(const at::Tensor &input, const at::Tensor &filter,
                      at::IntArrayRef stride);

/// blurPool2d(max_pool2d(input, kernelSize, 1, padding, dilation), filter,
/// stride) in one pass.
at::Tensor blurMaxPool2d(const at::Tensor &input, const at::Tensor &filter,
                         at::IntArrayRef kernelSize, at::IntArrayRef padding,
                         at::IntArrayRef dilation, at::IntArrayRef stride);

/// Batch norm over Composer's ghost batches in training: the batch in
/// k = ceil(B / `ghostBatchSize`) chunks as torch.chunk cuts it, running
/// statistics updated once per chunk with momentum / k; with running
/// statistics otherwise; computed and returned in `dtype` when given.
at::Tensor ghostBatchNorm(const at::Tensor &input,
                          const c10::optional<at::Tensor> &weight,
                          const c10::optional<at::Tensor> &bias,
                          const c10::optional<at::Tensor> &runningMean,
                          const c10::optional<at::Tensor> &runningVar,
                          bool training, double momentum, double eps,
                          int64_t ghostBatchSize,
                          c10::optional<at::ScalarType> dtype = c10::nullopt);

/// input * sigmoid(fc2 relu(fc1 mean_hw(input))), the gate broadcast over
/// H and W.
at::Tensor squeezeExcite(const at::Tensor &input, const at::Tensor &fc1,
                         const at::Tensor &fc2);

/// `module.method(*inputs)`'s outputs, keeping only `inputs` for backward,
/// which reruns the method with forward's random state (activation
/// checkpointing). `module` is a TorchScript module object; `preserved`
/// are buffers the method writes, which the rerun starts from their values
/// before forward and leaves as forward left them.
std::vector<at::Tensor> checkpoint(const c10::IValue &module,
                                   const std::string &method,
                                   at::TensorList inputs,
                                   at::TensorList preserved = {});

/// The parameters of module `unit` whole: under full_shard, gathered by
/// the installed UnitGatherer (composer/Runtime/UnitGatherer.h), whose
/// reduceGradients backward calls; otherwise `params` themselves.
/// `prefetch` names the unit forward gathers next, "" for none.
std::vector<at::Tensor> gatherUnit(const std::string &unit,
                                   const std::string &prefetch,
                                   at::TensorList params);

} // namespace composer::ops

#endif // COMPOSER_RUNTIME_OPS_H
