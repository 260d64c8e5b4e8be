//===- Distributed.h - Data-parallel training on c10d -----------*- C++ -*-===//
//
// Processes find each other through the torchrun environment contract (RANK,
// WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) and a c10d TCPStore, and
// talk through a c10d process group: Gloo on CPU, NCCL on CUDA. Gradients
// are averaged as PyTorch's DDP does: in buckets all-reduced from autograd
// hooks while backward is still running.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_DISTRIBUTED_H
#define COMPOSER_RUNTIME_DISTRIBUTED_H

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace composer::runtime {

/// The torchrun environment contract.
struct DistributedEnv {
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  /// Ranks on this node (LOCAL_WORLD_SIZE; absent: every rank).
  int localWorldSize = 1;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;

  /// Reads the variables; all absent means one process. Throws
  /// std::invalid_argument naming a variable that is missing or malformed.
  static DistributedEnv fromEnvironment();
  bool distributed() const { return worldSize > 1; }
};

/// A peer was lost or a collective failed; the message names the rank when
/// it can be told.
class DistributedError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The bytes one rank sent, by kind of collective, as bandwidth-optimal
/// (ring) algorithms move them among N ranks: (N-1)/N of the data for a
/// reduce-scatter, an all-gather or a broadcast, twice that for an
/// all-reduce. Step times at other sizes and links are predicted from them.
struct CommunicationVolume {
  int64_t allReduce = 0;
  int64_t reduceScatter = 0;
  int64_t allGather = 0;
  int64_t broadcast = 0;

  int64_t total() const {
    return allReduce + reduceScatter + allGather + broadcast;
  }
  CommunicationVolume operator-(const CommunicationVolume &earlier) const {
    return {allReduce - earlier.allReduce,
            reduceScatter - earlier.reduceScatter,
            allGather - earlier.allGather, broadcast - earlier.broadcast};
  }
};

/// A collective that has started and may still be running.
class PendingCollective {
public:
  virtual ~PendingCollective();
  /// Blocks until it has completed. Throws DistributedError as the
  /// blocking collectives do.
  virtual void wait() = 0;
};

/// What the trainer needs from the process group.
class Communicator {
public:
  virtual ~Communicator();
  virtual int rank() const = 0;
  virtual int worldSize() const = 0;
  /// Overwrites `tensors` with rank 0's.
  virtual void broadcast(const std::vector<torch::Tensor> &tensors) = 0;
  /// Sums `tensor` across ranks, in place.
  virtual void allReduceSum(torch::Tensor &tensor) = 0;
  /// Sums `input` across ranks and leaves this rank's chunk of the sum in
  /// `output`: chunk r of the flattened sum, output.numel() elements each,
  /// for input.numel() = worldSize() * output.numel(). Gloo has no
  /// reduce-scatter: it is an all-to-all and a local sum.
  virtual void reduceScatterSum(const torch::Tensor &input,
                                torch::Tensor &output) = 0;
  /// Concatenates every rank's `input` into `output`, in rank order, for
  /// output.numel() = worldSize() * input.numel().
  void allGather(const torch::Tensor &input, const torch::Tensor &output) {
    startAllGather(input, output)->wait();
  }
  /// Starts allGather and returns at once: `output` holds the result once
  /// the returned collective's wait() has returned. Every rank starts its
  /// collectives in the same order; one dropped unwaited still completes.
  virtual std::unique_ptr<PendingCollective>
  startAllGather(const torch::Tensor &input, const torch::Tensor &output) = 0;
  /// What this rank has sent since the communicator was created.
  virtual CommunicationVolume bytesSent() const = 0;
  /// From now on, gradients of `parameters` are averaged across ranks during
  /// backward. `findUnused`: parameters a step does not use are allowed.
  virtual void averageGradients(const std::vector<torch::Tensor> &parameters,
                                bool findUnused) = 0;
  /// Before the backward that reduces as it runs (a step's last
  /// microbatch's), with its loss. That backward averages the gradients the
  /// parameters will hold after it: its own plus what earlier microbatches
  /// accumulated locally.
  virtual void prepareForBackward(const torch::Tensor &loss) = 0;
  /// After that backward: waits for the all-reduces and leaves the averaged
  /// gradients in the parameters.
  virtual void finishBackward() = 0;
  /// Averages the gradients the parameters hold now, after backwards that
  /// did not reduce (a missing gradient counts as zeros), in one pass.
  virtual void averageAccumulatedGradients() = 0;
  virtual void barrier() = 0;
  /// Turns any failure of a collective into a DistributedError that names
  /// the lost rank, found from the peers' heartbeats.
  [[noreturn]] virtual void fail(const std::string &what) = 0;
};

/// Joins the process group of `env` (Gloo for CPU, NCCL for CUDA devices).
/// Collectives fail after `timeout` instead of hanging.
std::unique_ptr<Communicator>
createCommunicator(const DistributedEnv &env, const torch::Device &device,
                   std::chrono::milliseconds timeout);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_DISTRIBUTED_H
