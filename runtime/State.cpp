//===- State.cpp - What the training loop shares with algorithms ----------===//

#include "composer/Runtime/State.h"
#include "composer/Runtime/Algorithm.h"

#include <ATen/CPUGeneratorImpl.h>

#include <unordered_set>

namespace composer::runtime {

Algorithm::~Algorithm() = default;

static std::string describeColumn(const std::string &name,
                                  torch::ScalarType type,
                                  const std::vector<int64_t> &shape) {
  std::string sizes;
  for (int64_t size : shape)
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
  return "the training data's column '" + name + "' holds " +
         c10::toString(type) + " [" + sizes + "] values";
}

void requireImages(const std::string &algorithm, const SampleSpec &spec) {
  bool images =
      spec.kind == SampleKind::Image ||
      (spec.inputShape.size() == 3 && torch::isFloatingType(spec.inputType));
  if (!images)
    throw std::invalid_argument(
        algorithm + " needs image inputs ([C, H, W]); " +
        describeColumn(spec.inputName, spec.inputType, spec.inputShape));
}

void requireClassTargets(const std::string &algorithm, const SampleSpec &spec) {
  if (torch::isFloatingType(spec.targetType))
    throw std::invalid_argument(
        algorithm + " needs class-index targets; " +
        describeColumn(spec.targetName, spec.targetType, spec.targetShape));
}
Callback::~Callback() = default;

// splitmix64: spreads nearby seeds over the whole 64-bit range.
static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

torch::Generator State::generatorFor(const std::string &purpose) const {
  uint64_t key = mix(seed) ^ mix(uint64_t(timestamp.batch) + 1);
  if (rank != 0)
    key = mix(key ^ (uint64_t(rank) << 32));
  if (microbatch != 0)
    key = mix(key ^ (uint64_t(microbatch) << 48));
  for (char c : purpose)
    key = mix(key ^ uint64_t(uint8_t(c)));
  return at::make_generator<at::CPUGeneratorImpl>(key);
}

std::vector<std::pair<std::string, torch::Tensor>>
namedParameters(const torch::jit::Module &model) {
  // A tied weight (an output head sharing the token embedding's) is one
  // parameter in two modules' slots: listed once, under its first name, as
  // nn.Module.parameters() does. Twice, the optimizer would step it twice.
  std::unordered_set<const c10::TensorImpl *> seen;
  std::vector<std::pair<std::string, torch::Tensor>> result;
  for (const auto &entry : model.named_parameters(/*recurse=*/true))
    if (seen.insert(entry.value.unsafeGetTensorImpl()).second)
      result.emplace_back(entry.name, entry.value);
  return result;
}

std::vector<std::pair<std::string, torch::Tensor>>
namedBuffers(const torch::jit::Module &model) {
  std::vector<std::pair<std::string, torch::Tensor>> result;
  for (const auto &entry : model.named_buffers(/*recurse=*/true))
    result.emplace_back(entry.name, entry.value);
  return result;
}

} // namespace composer::runtime
