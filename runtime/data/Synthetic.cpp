//===- Synthetic.cpp - Random datasets ------------------------------------===//
//
// Random images or token streams for benchmarks and tests. Everything comes
// from one generator seeded by the spec, so equal specs give equal data.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Dataset.h"

#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>

namespace composer::runtime {

std::shared_ptr<TensorDataset> makeSynthetic(const SyntheticSpec &spec) {
  if (spec.numSamples < 0)
    throw std::invalid_argument("makeSynthetic: numSamples must be >= 0, got " +
                                std::to_string(spec.numSamples));
  for (int64_t d : spec.sampleShape)
    if (d <= 0)
      throw std::invalid_argument(
          "makeSynthetic: sampleShape dimensions must be positive");
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(spec.seed);
  if (spec.vocabSize > 0) {
    if (spec.sampleShape.size() != 1)
      throw std::invalid_argument(
          "makeSynthetic: token data needs sampleShape = {sequenceLength}, "
          "got " +
          std::to_string(spec.sampleShape.size()) + " dimensions");
    int64_t n = spec.numSamples, t = spec.sampleShape[0];
    // One stream with one extra token: targets are the inputs shifted by one,
    // as loadTokenFile cuts a real stream.
    torch::Tensor stream =
        torch::randint(0, spec.vocabSize, {n * t + 1}, gen, torch::kLong);
    return std::make_shared<TensorDataset>(
        stream.narrow(0, 0, n * t).view({n, t}),
        stream.narrow(0, 1, n * t).view({n, t}), SampleKind::Tokens);
  }

  if (spec.numClasses <= 0)
    throw std::invalid_argument("makeSynthetic: numClasses must be positive, "
                                "got " +
                                std::to_string(spec.numClasses));
  std::vector<int64_t> shape{spec.numSamples};
  shape.insert(shape.end(), spec.sampleShape.begin(), spec.sampleShape.end());
  torch::Tensor inputs = torch::randint(0, 256, shape, gen, torch::kUInt8);
  torch::Tensor targets =
      torch::randint(0, spec.numClasses, {spec.numSamples}, gen, torch::kLong);
  return std::make_shared<TensorDataset>(inputs, targets);
}

} // namespace composer::runtime
