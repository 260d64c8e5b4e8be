//===- UnitGatherer.h - what composer::gather_unit gathers ------*- C++ -*-===//
//
// The compiler's composer-shard-params pass gathers each unit's parameters
// through composer::gather_unit(unit, prefetch, params). Under full_shard
// (ZeRO-3) the trainer installs a UnitGatherer, which holds each unit's
// parameters as one flat buffer sharded over the ranks: the op returns what
// it gathers, and its backward hands the parameters' gradients to it to
// reduce-scatter into the shard. Without one, or for a unit it does not
// shard, the op returns `params` as they are: the model then trains as the
// unsharded one.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_RUNTIME_UNITGATHERER_H
#define COMPOSER_RUNTIME_UNITGATHERER_H

#include <ATen/ATen.h>

#include <string>
#include <vector>

namespace composer::runtime {

class UnitGatherer {
public:
  virtual ~UnitGatherer() = default;

  /// Whether `unit`'s parameters are sharded here.
  virtual bool shards(const std::string &unit) const = 0;
  /// `unit`'s parameters whole, in the order of `params` (the module's
  /// parameters as they live here: placeholders of the shapes in the
  /// module). `prefetch` names the unit forward gathers next ("" for none),
  /// whose gather may start now.
  virtual std::vector<at::Tensor> gather(const std::string &unit,
                                         const std::string &prefetch,
                                         at::TensorList params) = 0;
  /// Adds `grads`, the gradients of what gather returned (undefined where
  /// none flowed), to `unit`'s shard of the gradient.
  virtual void reduceGradients(const std::string &unit,
                               at::TensorList grads) = 0;
};

/// Installs `gatherer` for the process (null: none) and returns the one it
/// replaces. The trainer installs it around training; the op reads it on
/// the thread forward and backward run on.
UnitGatherer *setUnitGatherer(UnitGatherer *gatherer);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_UNITGATHERER_H
