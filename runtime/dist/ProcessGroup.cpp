//===- ProcessGroup.cpp - Data-parallel training on c10d ------------------===//
//
// Debian's LibTorch ships c10d's Reducer header without the distributed
// autograd headers it includes, so gradients are averaged here the way the
// Reducer does it: parameters in buckets (reverse order, about 25 MB, the
// first 1 MB so communication starts early), each bucket's all-reduce
// started from autograd hooks as soon as its last gradient is ready, in the
// same order on every rank, and awaited after backward.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Distributed.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

namespace composer::runtime {

Communicator::~Communicator() = default;
PendingCollective::~PendingCollective() = default;

namespace {

int readInt(const char *name, const char *value, int low, int high) {
  char *end = nullptr;
  long parsed = std::strtol(value, &end, 10);
  if (!*value || *end || parsed < low || parsed > high)
    throw std::invalid_argument(
        std::string(name) + "='" + value + "': expected an integer in [" +
        std::to_string(low) + ", " + std::to_string(high) + "]");
  return int(parsed);
}

constexpr int64_t kFirstBucketBytes = 1 << 20; // as DDP
constexpr int64_t kBucketBytes = 25 << 20;
constexpr auto kHeartbeatPeriod = std::chrono::milliseconds(250);

/// A c10d process group plus a heartbeat every rank publishes in the store,
/// so that when a collective fails the survivors can tell who is gone.
class ProcessGroupCommunicator final : public Communicator {
public:
  ProcessGroupCommunicator(const DistributedEnv &env,
                           const torch::Device &device,
                           std::chrono::milliseconds timeout)
      : env_(env), timeout_(timeout) {
    c10d::TCPStoreOptions options;
    options.port = uint16_t(env.masterPort);
    options.isServer = env.rank == 0;
    options.numWorkers = size_t(env.worldSize);
    options.waitWorkers = true;
    options.timeout = timeout;
    try {
      store_ = c10::make_intrusive<c10d::TCPStore>(env.masterAddr, options);
      // A second connection: a TCPStore client is not for two threads.
      options.isServer = false;
      options.waitWorkers = false;
      heartbeatStore_ =
          c10::make_intrusive<c10d::TCPStore>(env.masterAddr, options);
    } catch (const std::exception &e) {
      throw DistributedError(
          "rank " + std::to_string(env.rank) +
          ": cannot reach the rendezvous store at " + env.masterAddr + ":" +
          std::to_string(env.masterPort) + ": " + firstLine(e.what()));
    }
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("composer", store_);
    if (device.is_cuda()) {
#ifdef USE_C10D_NCCL
      auto nccl = c10d::ProcessGroupNCCL::Options::create();
      nccl->timeout = timeout;
      group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, env.rank,
                                                           env.worldSize, nccl);
#else
      throw DistributedError("this LibTorch was built without NCCL; CUDA "
                             "data-parallel training needs it");
#endif
    } else {
      auto gloo = c10d::ProcessGroupGloo::Options::create(timeout);
      if (const char *interface = std::getenv("GLOO_SOCKET_IFNAME"))
        gloo->devices.push_back(
            c10d::ProcessGroupGloo::createDeviceForInterface(interface));
      else if (isLoopback(env.masterAddr))
        gloo->devices.push_back(
            c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else
        gloo->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      // One worker runs the collectives one at a time in the order they
      // were started, as one NCCL stream does, and lets go of each one's
      // buffers before it starts the next: a gather's whole buffer is not
      // kept alive by a worker after its unit has finished with it.
      gloo->threads = 1;
      group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, env.rank,
                                                           env.worldSize, gloo);
    }
    heartbeat_ = std::thread([this] { beat(); });
  }

  ~ProcessGroupCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    heartbeat_.join();
    // The parameters outlive this object; their hooks must not.
    for (size_t index = 0; index < hooks_.size(); ++index)
      parameters_[index].remove_hook(hooks_[index]);
  }

  int rank() const override { return env_.rank; }
  int worldSize() const override { return env_.worldSize; }

  void broadcast(const std::vector<torch::Tensor> &tensors) override {
    torch::NoGradGuard noGrad;
    // One collective per dtype: flatten, broadcast as bytes (Gloo has no
    // bool or bfloat16 collectives), copy back.
    std::map<at::ScalarType, std::vector<torch::Tensor>> byType;
    for (const torch::Tensor &tensor : tensors)
      byType[tensor.scalar_type()].push_back(tensor);
    for (auto &[type, group] : byType) {
      std::vector<torch::Tensor> views;
      for (const torch::Tensor &tensor : group)
        views.push_back(tensor.reshape({-1}));
      std::vector<torch::Tensor> flat = {torch::cat(views)};
      std::vector<torch::Tensor> bytes = {flat[0].view(torch::kUInt8)};
      run("broadcast", [&] { return group_->broadcast(bytes); });
      volume_.broadcast += ringShare(flat[0]);
      int64_t offset = 0;
      for (torch::Tensor tensor : group) {
        tensor.copy_(flat[0].narrow(0, offset, tensor.numel()).view_as(tensor));
        offset += tensor.numel();
      }
    }
  }

  void allReduceSum(torch::Tensor &tensor) override {
    std::vector<torch::Tensor> tensors = {tensor};
    run("all-reduce", [&] { return group_->allreduce(tensors); });
    volume_.allReduce += 2 * ringShare(tensor);
  }

  void reduceScatterSum(const torch::Tensor &input,
                        torch::Tensor &output) override {
    checkChunks("reduce-scatter", input, output);
    torch::NoGradGuard noGrad;
    torch::Tensor flatInput = input.contiguous().reshape({-1});
    if (group_->getBackendName() == "nccl") {
      torch::Tensor flatOutput =
          output.is_contiguous()
              ? output.view({-1})
              : torch::empty({output.numel()}, output.options());
      run("reduce-scatter",
          [&] { return group_->_reduce_scatter_base(flatOutput, flatInput); });
      if (!output.is_contiguous())
        output.copy_(flatOutput.view(output.sizes()));
    } else {
      // Rank r receives chunk r of every rank's input, then sums them. The
      // all-to-all moves bytes, which Gloo has for every dtype.
      torch::Tensor received = torch::empty_like(flatInput);
      torch::Tensor receivedBytes = received.view(torch::kUInt8);
      torch::Tensor inputBytes = flatInput.view(torch::kUInt8);
      std::vector<int64_t> equalSplits;
      run("reduce-scatter (all-to-all)", [&] {
        return group_->alltoall_base(receivedBytes, inputBytes, equalSplits,
                                     equalSplits);
      });
      output.copy_(received.view({env_.worldSize, -1})
                       .sum(0, /*keepdim=*/false, output.scalar_type())
                       .view(output.sizes()));
    }
    volume_.reduceScatter += ringShare(input);
  }

  std::unique_ptr<PendingCollective>
  startAllGather(const torch::Tensor &input,
                 const torch::Tensor &output) override {
    checkChunks("all-gather", output, input);
    torch::NoGradGuard noGrad;
    auto pending = std::make_unique<StartedAllGather>(*this);
    pending->input = input.contiguous().reshape({-1});
    pending->output = output;
    pending->flatOutput =
        output.is_contiguous()
            ? output.view({-1})
            : torch::empty({output.numel()}, output.options());
    if (group_->getBackendName() == "nccl") {
      pending->works.push_back(start("all-gather", [&] {
        return group_->_allgather_base(pending->flatOutput, pending->input);
      }));
    } else {
      // One broadcast per rank, of its chunk, in place. Gloo's all-gather
      // would gather into a buffer it allocates on its worker thread each
      // call, and the freed buffers stay in that thread's malloc arena: a
      // step's all-gathers grew each rank's memory by their size. As bytes,
      // which Gloo has for every dtype.
      pending->flatOutput.chunk(env_.worldSize)[env_.rank].copy_(
          pending->input);
      std::vector<torch::Tensor> chunks =
          pending->flatOutput.view(torch::kUInt8).chunk(env_.worldSize);
      for (int root = 0; root < env_.worldSize; ++root) {
        std::vector<torch::Tensor> chunk = {chunks[root]};
        c10d::BroadcastOptions options;
        options.rootRank = root;
        pending->works.push_back(start("all-gather (broadcasts)", [&] {
          return group_->broadcast(chunk, options);
        }));
      }
    }
    volume_.allGather += ringShare(output);
    return pending;
  }

  CommunicationVolume bytesSent() const override { return volume_; }

  void averageGradients(const std::vector<torch::Tensor> &parameters,
                        bool findUnused) override {
    findUnused_ = findUnused;
    parameters_ = parameters;
    slot_.assign(parameters.size(), {});
    Bucket *open = nullptr;
    for (size_t index = parameters.size(); index-- > 0;) {
      const torch::Tensor &parameter = parameters[index];
      int64_t bytes = parameter.numel() * int64_t(parameter.element_size());
      int64_t limit = buckets_.size() <= 1 ? kFirstBucketBytes : kBucketBytes;
      if (!open || open->type != parameter.scalar_type() ||
          (open->bytes > 0 && open->bytes + bytes > limit)) {
        buckets_.emplace_back();
        open = &buckets_.back();
        open->type = parameter.scalar_type();
      }
      slot_[index] = {buckets_.size() - 1, open->numel};
      open->members.push_back(index);
      open->numel += parameter.numel();
      open->bytes += bytes;
    }
    for (Bucket &bucket : buckets_)
      bucket.flat = torch::zeros(
          {bucket.numel}, parameters.front().options().dtype(bucket.type));
    for (size_t index = 0; index < parameters.size(); ++index) {
      torch::Tensor parameter = parameters[index];
      hooks_.push_back(
          parameter.register_hook([this, index](const torch::Tensor &grad) {
            gradientReady(index, grad);
          }));
    }
  }

  void prepareForBackward(const torch::Tensor &) override {
    nextLaunch_ = 0;
    for (Bucket &bucket : buckets_) {
      bucket.pending = 0;
      bucket.work.reset();
      // Parameters frozen since the last step count as ready with zeros;
      // every rank freezes the same ones.
      for (size_t index : bucket.members)
        if (parameters_[index].requires_grad())
          ++bucket.pending;
        else
          slice(index).zero_();
    }
    inBackward_ = true;
  }

  void finishBackward() override {
    if (!inBackward_)
      return;
    inBackward_ = false;
    for (size_t b = nextLaunch_; b < buckets_.size(); ++b) {
      Bucket &bucket = buckets_[b];
      if (bucket.pending > 0 && !findUnused_)
        fail("parameter " + std::to_string(firstPending(bucket)) +
             " got no gradient this step; set find_unused_parameters: true "
             "if the model leaves parameters unused");
    }
    // With unused parameters allowed, launch what is left in order, the
    // missing gradients as zeros.
    for (size_t b = nextLaunch_; b < buckets_.size(); ++b) {
      for (size_t index : buckets_[b].members)
        if (parameters_[index].requires_grad() &&
            !parameters_[index].grad().defined())
          slice(index).zero_();
      launch(b);
    }
    waitAndAverage();
  }

  void averageAccumulatedGradients() override {
    torch::NoGradGuard noGrad;
    for (size_t index = 0; index < parameters_.size(); ++index) {
      const torch::Tensor &parameter = parameters_[index];
      if (parameter.requires_grad() && parameter.grad().defined())
        slice(index).copy_(parameter.grad().reshape({-1}));
      else
        slice(index).zero_();
    }
    for (size_t b = 0; b < buckets_.size(); ++b)
      launch(b);
    waitAndAverage();
  }

  void barrier() override {
    run("barrier", [&] { return group_->barrier(); });
  }

  [[noreturn]] void fail(const std::string &what) override {
    throw DistributedError("rank " + std::to_string(env_.rank) + ": " +
                           lostRanks() + " (" + firstLine(what) + ")");
  }

private:
  /// Waits for every bucket's all-reduce and leaves the averages in the
  /// parameters' gradients.
  void waitAndAverage() {
    torch::NoGradGuard noGrad;
    for (Bucket &bucket : buckets_) {
      try {
        bucket.work->wait(timeout_);
      } catch (const std::exception &e) {
        fail(std::string("gradient all-reduce failed: ") + e.what());
      }
      bucket.flat.div_(env_.worldSize);
      for (size_t index : bucket.members) {
        torch::Tensor parameter = parameters_[index];
        if (!parameter.requires_grad())
          continue;
        torch::Tensor average = slice(index).view(parameter.sizes());
        if (parameter.grad().defined())
          parameter.mutable_grad().copy_(average);
        else
          parameter.mutable_grad() = average.clone();
      }
    }
  }

  static std::string firstLine(const std::string &text) {
    return text.substr(0, text.find('\n'));
  }

  static bool isLoopback(const std::string &address) {
    return address == "localhost" || address.rfind("127.", 0) == 0;
  }

  /// The collective `launch` starts; a failure to start it is reported as
  /// a failure to complete it is.
  template <typename Launch>
  c10::intrusive_ptr<c10d::Work> start(const char *what, Launch launch) {
    try {
      return launch();
    } catch (const DistributedError &) {
      throw;
    } catch (const std::exception &e) {
      fail(std::string(what) + " failed: " + e.what());
    }
  }

  void await(const char *what, c10d::Work &work) {
    try {
      work.wait(timeout_);
    } catch (const std::exception &e) {
      fail(std::string(what) + " failed: " + e.what());
    }
  }

  template <typename Launch> void run(const char *what, Launch launch) {
    await(what, *start(what, launch));
  }

  /// An all-gather's collectives, and the buffers they read and write.
  struct StartedAllGather final : PendingCollective {
    explicit StartedAllGather(ProcessGroupCommunicator &communicator)
        : communicator(communicator) {}
    void wait() override {
      for (const c10::intrusive_ptr<c10d::Work> &work : works)
        communicator.await("all-gather", *work);
      works.clear();
      if (!output.is_contiguous()) {
        torch::NoGradGuard noGrad;
        output.copy_(flatOutput.view(output.sizes()));
      }
    }
    ProcessGroupCommunicator &communicator;
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    torch::Tensor input, output, flatOutput;
  };

  void beat() {
    std::string key = "composer/heartbeat/" + std::to_string(env_.rank);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      try {
        heartbeatStore_->add(key, 1);
      } catch (const std::exception &) {
        // The store is gone with rank 0; the survivors find out at the next
        // collective.
      }
      lock.lock();
      wake_.wait_for(lock, kHeartbeatPeriod, [this] { return stopping_; });
    }
  }

  /// Which peers stopped beating: their counters do not move over a few
  /// heartbeat periods. If the store itself is unreachable, rank 0 (which
  /// hosts it) is gone.
  std::string lostRanks() {
    auto counters = [&]() -> std::optional<std::vector<int64_t>> {
      std::vector<int64_t> values;
      try {
        for (int r = 0; r < env_.worldSize; ++r)
          values.push_back(heartbeatStore_->add(
              "composer/heartbeat/" + std::to_string(r), 0));
      } catch (const std::exception &) {
        return std::nullopt;
      }
      return values;
    };
    auto before = counters();
    std::this_thread::sleep_for(kHeartbeatPeriod * 6);
    auto after = counters();
    if (!before || !after)
      return "lost rank 0 (it hosted the rendezvous store)";
    std::string lost;
    for (int r = 0; r < env_.worldSize; ++r)
      if (r != env_.rank && (*after)[r] == (*before)[r])
        lost += (lost.empty() ? "" : ", ") + std::to_string(r);
    if (lost.empty())
      return "a collective failed, every rank still alive";
    return (lost.find(',') == std::string::npos ? "lost rank "
                                                : "lost ranks ") +
           lost;
  }

  struct Bucket {
    at::ScalarType type;
    std::vector<size_t> members; // parameter indices, in launch order
    int64_t numel = 0, bytes = 0;
    torch::Tensor flat;
    int pending = 0;
    c10::intrusive_ptr<c10d::Work> work;
  };

  torch::Tensor slice(size_t index) {
    auto [bucket, offset] = slot_[index];
    return buckets_[bucket].flat.narrow(0, offset, parameters_[index].numel());
  }

  size_t firstPending(const Bucket &bucket) {
    for (size_t index : bucket.members)
      if (parameters_[index].requires_grad() &&
          !parameters_[index].grad().defined())
        return index;
    return bucket.members.front();
  }

  /// Runs on the autograd thread as each gradient is computed.
  void gradientReady(size_t index, const torch::Tensor &grad) {
    if (!inBackward_)
      return;
    torch::NoGradGuard noGrad;
    // A leaf's hook runs before its gradient accumulates: what earlier
    // microbatches left is added here.
    torch::Tensor target = slice(index);
    const torch::Tensor &accumulated = parameters_[index].grad();
    if (accumulated.defined())
      torch::add_out(target, accumulated.reshape({-1}), grad.reshape({-1}));
    else
      target.copy_(grad.reshape({-1}));
    Bucket &bucket = buckets_[slot_[index].first];
    if (--bucket.pending > 0 || findUnused_)
      return;
    // Every rank starts the buckets in the same order.
    while (nextLaunch_ < buckets_.size() && buckets_[nextLaunch_].pending == 0)
      launch(nextLaunch_);
  }

  void launch(size_t b) {
    std::vector<torch::Tensor> tensors = {buckets_[b].flat};
    buckets_[b].work = group_->allreduce(tensors);
    volume_.allReduce += 2 * ringShare(buckets_[b].flat);
    nextLaunch_ = b + 1;
  }

  /// The bytes of `tensor` one rank sends in a ring over the group:
  /// (N-1)/N of them.
  int64_t ringShare(const torch::Tensor &tensor) const {
    int64_t bytes = tensor.numel() * int64_t(tensor.element_size());
    return bytes * (env_.worldSize - 1) / env_.worldSize;
  }

  /// `whole` holds one chunk of `chunk`'s size per rank, of its dtype.
  void checkChunks(const char *what, const torch::Tensor &whole,
                   const torch::Tensor &chunk) const {
    if (whole.numel() != chunk.numel() * env_.worldSize ||
        whole.scalar_type() != chunk.scalar_type())
      throw std::invalid_argument(
          std::string(what) + ": " + std::to_string(whole.numel()) +
          " elements for " + std::to_string(env_.worldSize) + " ranks of " +
          std::to_string(chunk.numel()) + " (and one dtype) expected");
  }

  DistributedEnv env_;
  std::chrono::milliseconds timeout_;
  std::vector<torch::Tensor> parameters_;
  std::vector<unsigned> hooks_;
  std::vector<std::pair<size_t, int64_t>> slot_; // bucket, offset
  std::vector<Bucket> buckets_;
  size_t nextLaunch_ = 0;
  bool inBackward_ = false;
  c10::intrusive_ptr<c10d::Store> store_, heartbeatStore_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  bool findUnused_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread heartbeat_;
  CommunicationVolume volume_;
};

} // namespace

DistributedEnv DistributedEnv::fromEnvironment() {
  DistributedEnv env;
  const char *world = std::getenv("WORLD_SIZE");
  const char *rank = std::getenv("RANK");
  if (!world && !rank)
    return env;
  if (!world || !rank)
    throw std::invalid_argument(
        std::string(world ? "RANK" : "WORLD_SIZE") +
        " is not set (the torchrun contract needs RANK and WORLD_SIZE)");
  env.worldSize = readInt("WORLD_SIZE", world, 1, 1 << 20);
  env.rank = readInt("RANK", rank, 0, env.worldSize - 1);
  const char *localRank = std::getenv("LOCAL_RANK");
  env.localRank =
      localRank ? readInt("LOCAL_RANK", localRank, 0, 1 << 20) : env.rank;
  const char *localWorld = std::getenv("LOCAL_WORLD_SIZE");
  env.localWorldSize =
      localWorld ? readInt("LOCAL_WORLD_SIZE", localWorld, 1, env.worldSize)
                 : env.worldSize;
  if (!env.distributed())
    return env;
  const char *address = std::getenv("MASTER_ADDR");
  const char *port = std::getenv("MASTER_PORT");
  if (!address || !*address)
    throw std::invalid_argument("MASTER_ADDR is not set");
  if (!port)
    throw std::invalid_argument("MASTER_PORT is not set");
  env.masterAddr = address;
  env.masterPort = readInt("MASTER_PORT", port, 1, 65535);
  return env;
}

std::unique_ptr<Communicator>
createCommunicator(const DistributedEnv &env, const torch::Device &device,
                   std::chrono::milliseconds timeout) {
  return std::make_unique<ProcessGroupCommunicator>(env, device, timeout);
}

} // namespace composer::runtime
