//===- Gradients.h - The gradients as the optimizer will use them -*- C++ -*-=//
//
// After the training step's reduce stage the averaged gradients live in one
// of two places. Without sharding (one process, DDP) every trainable
// parameter's .grad holds its whole gradient. Under sharded data
// parallelism (ZeRO, Sharding.h) each rank holds only its shard of all the
// gradients, flattened, and the parameters' .grad are empty. Algorithms
// that read or change gradients go through these functions, which work in
// both cases; what needs whole tensors gathers them and says so.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_GRADIENTS_H
#define COMPOSER_RUNTIME_GRADIENTS_H

#include "composer/Runtime/State.h"

#include <torch/torch.h>

#include <string>
#include <vector>

namespace composer::runtime {

class Communicator;

/// This rank's shard of the averaged gradients, as sharded data parallelism
/// keeps them (implemented by ShardedDataParallel).
class GradientShards {
public:
  virtual ~GradientShards();
  /// This rank's shards of the flattened gradients, as the optimizer will
  /// use them; elementwise changes to them change the step.
  virtual std::vector<torch::Tensor> localGradients() = 0;
  /// Leaves every trainable parameter's whole averaged gradient in its
  /// .grad (an all-gather), and under full_shard its whole weights in it.
  /// `algorithm` is named on stderr the first time.
  virtual void gatherGradients(const std::string &algorithm) = 0;
  /// Takes this rank's shard of the parameters' .grad (as an algorithm
  /// changed them after gatherGradients) as the gradients the optimizer
  /// uses, and drops the whole ones (under full_shard, the weights too).
  virtual void scatterGradients() = 0;
  /// This rank's fp32 master shards of the weights, one for each tensor of
  /// localGradients() and in its order.
  virtual std::vector<torch::Tensor> localWeights() = 0;
  /// Makes forward compute with localWeights() as they are now, after
  /// elementwise changes to them (ZeRO-2: an all-gather).
  virtual void publishWeights() = 0;
  virtual Communicator &communicator() = 0;
};

/// The tensors that hold this rank's gradients: the trainable parameters'
/// .grad that are defined, or the shards.
std::vector<torch::Tensor> localGradients(State &state);

/// The L2 norm of all the gradients together (across ranks when sharded),
/// computed in fp32 as clip_grad_norm_ does.
double gradientNorm(State &state);

/// Makes every trainable parameter's .grad hold its whole averaged gradient
/// for `algorithm`, which needs whole tensors (an all-gather when sharded,
/// of the weights too under full_shard; nothing otherwise). Every rank
/// calls it, then scatterGradients.
void gatherGradients(State &state, const std::string &algorithm);

/// After gatherGradients and changes to the parameters' .grad: makes them
/// the gradients the optimizer will use (nothing when not sharded).
void scatterGradients(State &state);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_GRADIENTS_H
