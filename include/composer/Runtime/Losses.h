//===- Losses.h - Training losses, by name ----------------------*- C++ -*-===//
//
// Every loss registers itself from its own file (runtime/losses/) with a
// LossRegistration, as algorithms do (Options.h): a recipe's `loss:` names
// one, with its options. The training step's loss stage, evaluation and the
// algorithms that need the loss of other targets all compute it through
// State::lossFunction.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_LOSSES_H
#define COMPOSER_RUNTIME_LOSSES_H

#include "composer/Runtime/Options.h"

#include <torch/types.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace composer::runtime {

/// A loss of a model's outputs against a batch's targets.
class Loss {
public:
  virtual ~Loss();
  /// The recipe name.
  virtual std::string name() const = 0;
  /// The batch's loss, averaged as the loss defines (over samples, tokens or
  /// elements); with `perSample`, one value per sample, [B] (selective
  /// backprop scores samples by it). Throws std::invalid_argument naming the
  /// loss when `outputs` and `target` do not fit together.
  virtual torch::Tensor compute(const torch::Tensor &outputs,
                                const torch::Tensor &target,
                                bool perSample = false) const = 0;
  /// How many terms compute's mean averages over for `target`: what a
  /// microbatch weighs in token-weighted accumulation. By default every
  /// element of the target.
  virtual int64_t termCount(const torch::Tensor &target) const {
    return target.numel();
  }
};

using LossInfo = ComponentInfo<Loss>;

/// Every loss linked in, sorted by name.
std::vector<const LossInfo *> getRegisteredLosses();

/// The loss registered as `name`, or null.
const LossInfo *findLoss(std::string_view name);

/// Creates the loss registered as `name`; throws std::invalid_argument for
/// an unknown name or bad options.
std::shared_ptr<const Loss> createLoss(std::string_view name,
                                       const OptionValues &options = {});

/// Adds `info` to the registry; a name registered twice is noted as a conflict
/// (takeRegistrationConflicts).
void registerLoss(LossInfo info);

/// Registers `LossT`, constructed from `Options`, at static initialization,
/// as AlgorithmRegistration does for algorithms.
template <typename LossT, typename Options> class LossRegistration {
public:
  LossRegistration(std::string name,
                   std::initializer_list<OptionField<Options>> fields) {
    registerLoss(
        describeComponent<Loss, LossT, Options>(std::move(name), fields));
  }
};

/// A loss that is a LibTorch elementwise loss of `outputs` and a `target` of
/// their shape, cast to their type: the mean over every element, or with
/// `perSample` over each sample's. Shapes that differ are an error naming
/// the loss.
class ElementwiseLoss : public Loss {
public:
  torch::Tensor compute(const torch::Tensor &outputs,
                        const torch::Tensor &target,
                        bool perSample) const final;

protected:
  /// The LibTorch loss, reduced as `reduction` (at::Reduction) says.
  virtual torch::Tensor apply(const torch::Tensor &outputs,
                              const torch::Tensor &target,
                              int64_t reduction) const = 0;
};

/// "[2, 3]": a tensor's sizes, for messages.
std::string describeShape(const torch::Tensor &tensor);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_LOSSES_H
