//===- GyroDropoutState.cpp - composer-gyro-dropout's masks ---------------===//
//
// "dropout_mask:<p>" (GyroDropoutState.h): Composer's GyroDropout masks,
// `(rand(shape) > p).float()`, drawn from a generator seeded by the state's
// key, so that an export is reproducible.
//
//===----------------------------------------------------------------------===//

#include "../StateInitializer.h"

#include "composer/Support/GyroDropoutState.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/xxhash.h"

#include <ATen/CPUGeneratorImpl.h>

using namespace mlir;
using namespace composer;

namespace {

class DropoutMask final : public StateInitializer {
public:
  DropoutMask() : StateInitializer(kDropoutMaskInit, Argument::Required, "p") {}

  FailureOr<at::Tensor> materialize(const StateRequest &request,
                                    InitializerContext &) const final {
    double p;
    if (request.argument.getAsDouble(p) || !(p >= 0.0 && p < 1.0))
      return emitError(request.loc, "'")
             << request.key << "': " << getKind()
             << " needs a rate in [0, 1), got '" << request.argument << "'";
    at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(
        llvm::xxh3_64bits(request.key));
    return at::rand(request.declared.getSizes().vec(), generator)
        .gt(p)
        .to(request.dtype);
  }
};

const StateInitializerRegistration
    registration(std::make_unique<DropoutMask>());

} // namespace
