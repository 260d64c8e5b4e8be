//===- LinearDefaultState.cpp - nn.Linear's initialization ----------------===//
//
// "linear_default[:<fan_in>]" (StatePaths.h), for the layers composer-glu
// and composer-squeeze-excite add: PyTorch's nn.Linear initialization,
// uniform in +-1/sqrt(fan_in), weight and bias alike, drawn from a generator
// seeded by the state's key, so that an export is reproducible. Without an
// argument the state is a 2-D weight and fan_in its size(1); a bias, whose
// layer's fan-in its shape does not tell, names it.
//
//===----------------------------------------------------------------------===//

#include "../StateInitializer.h"

#include "composer/Support/StatePaths.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/xxhash.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

using namespace mlir;
using namespace composer;

namespace {

/// The fan-in "linear_default[:<fan_in>]" means for `shape`, if any.
std::optional<int64_t> getFanIn(StringRef argument, ArrayRef<int64_t> shape) {
  if (argument.empty())
    return shape.size() == 2 ? std::optional<int64_t>(shape[1]) : std::nullopt;
  int64_t fanIn;
  if (argument.getAsInteger(10, fanIn) || fanIn <= 0)
    return std::nullopt;
  return fanIn;
}

class LinearDefault final : public StateInitializer {
public:
  LinearDefault()
      : StateInitializer(kLinearDefaultInit, Argument::Optional, "fan_in") {}

  FailureOr<at::Tensor> materialize(const StateRequest &request,
                                    InitializerContext &) const final {
    ArrayRef<int64_t> shape = request.declared.getSizes();
    std::optional<int64_t> fanIn = getFanIn(request.argument, shape);
    if (!fanIn)
      return emitError(request.loc, "'")
             << request.key << "': unknown initializer \"" << getKind()
             << (request.argument.empty() ? "" : ":") << request.argument
             << "\" (expected \"" << getKind() << "\" for a 2-D weight or \""
             << getKind() << ":<fan_in>\")";
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(
        llvm::xxh3_64bits(request.key));
    double bound = 1.0 / std::sqrt(static_cast<double>(*fanIn));
    return at::empty(shape.vec(), at::TensorOptions().dtype(request.dtype))
        .uniform_(-bound, bound, generator);
  }
};

const StateInitializerRegistration
    registration(std::make_unique<LinearDefault>());

} // namespace
