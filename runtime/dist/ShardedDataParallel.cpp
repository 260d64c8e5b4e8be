//===- ShardedDataParallel.cpp - ZeRO-2 as a training-step link -----------===//

#include "composer/Runtime/Distributed.h"
#include "composer/Runtime/Sharding.h"

#include <algorithm>
#include <iostream>
#include <stdexcept>

namespace composer::runtime {

ShardingStrategy parseShardingStrategy(const std::string &name) {
  if (name == "none")
    return ShardingStrategy::None;
  if (name == "shard_grad_op")
    return ShardingStrategy::ShardGradOp;
  if (name == "full_shard")
    return ShardingStrategy::FullShard;
  throw std::invalid_argument("unknown sharding strategy '" + name +
                              "' (expected none, shard_grad_op or "
                              "full_shard)");
}

const char *getShardingStrategyName(ShardingStrategy strategy) {
  switch (strategy) {
  case ShardingStrategy::None:
    return "none";
  case ShardingStrategy::ShardGradOp:
    return "shard_grad_op";
  case ShardingStrategy::FullShard:
    return "full_shard";
  }
  return "none";
}

namespace {

/// Gradients are reduce-scattered a bucket at a time, as DDP all-reduces
/// them, so that a step's extra memory stays that of one bucket.
constexpr int64_t kBucketBytes = 25 << 20;

/// LibTorch's key for a parameter's optimizer state.
std::string stateKey(const torch::Tensor &parameter) {
  return c10::guts::to_string(parameter.unsafeGetTensorImpl());
}

/// `parameter`'s elements in `flat` from `offset`, laid out as it is.
torch::Tensor placeIn(const torch::Tensor &flat, const torch::Tensor &parameter,
                      int64_t offset) {
  return flat.as_strided(parameter.sizes(), parameter.strides(),
                         flat.storage_offset() + offset);
}

/// A state like `like` (same kind and step count) holding `tensors`, in
/// optimizerStateTensors' order.
std::unique_ptr<torch::optim::OptimizerParamState>
makeState(torch::optim::OptimizerParamState &like,
          const std::vector<torch::Tensor> &tensors) {
  if (auto *adam = dynamic_cast<torch::optim::AdamWParamState *>(&like)) {
    auto state = std::make_unique<torch::optim::AdamWParamState>();
    state->step(adam->step());
    state->exp_avg(tensors[0]);
    state->exp_avg_sq(tensors[1]);
    state->max_exp_avg_sq(tensors[2]);
    return state;
  }
  auto state = std::make_unique<torch::optim::SGDParamState>();
  state->momentum_buffer(tensors[0]);
  return state;
}

} // namespace

ShardedDataParallel::ShardedDataParallel(
    Communicator &communicator, const OptimizerSpec &spec,
    std::vector<std::pair<std::string, torch::Tensor>> parameters,
    GradScaler &scaler)
    : communicator_(communicator), spec_(spec),
      parameters_(std::move(parameters)), scaler_(scaler) {
  torch::NoGradGuard noGrad;
  const int64_t world = communicator_.worldSize();
  auto [decayed, undecayed] = Optimizer::splitByDecay(spec_, parameters_);
  for (const auto &[named, isDecayed] :
       {std::make_pair(&decayed, true), std::make_pair(&undecayed, false)}) {
    std::vector<FlatGroup> groups;
    for (const auto &[name, parameter] : *named) {
      if (!parameter.is_non_overlapping_and_dense())
        throw std::invalid_argument("parameter '" + name +
                                    "' is not dense in memory, so it cannot "
                                    "be sharded");
      // The open bucket of this dtype, while the parameter fits in it.
      auto it = std::find_if(groups.rbegin(), groups.rend(), [&](auto &group) {
        return group.flat.scalar_type() == parameter.scalar_type();
      });
      if (it == groups.rend() ||
          (it->elements() + parameter.numel()) * parameter.element_size() >
              kBucketBytes) {
        groups.emplace_back();
        groups.back().decayed = isDecayed;
        groups.back().flat = torch::empty({0}, parameter.options());
        it = groups.rbegin();
      }
      it->members.push_back(
          {name, parameter, it->elements(), parameter.numel(), 0});
    }
    for (FlatGroup &group : groups) {
      int64_t shard = (group.elements() + world - 1) / world;
      group.flat = torch::zeros({shard * world}, group.flat.options());
      for (Member &member : group.members) {
        torch::Tensor place =
            placeIn(group.flat, member.parameter, member.offset);
        place.copy_(member.parameter);
        member.parameter.set_data(place);
        member.version = member.parameter._version();
      }
      group.shardBegin = communicator_.rank() * shard;
      group.master = group.flat.narrow(0, group.shardBegin, shard)
                         .to(torch::kFloat, /*non_blocking=*/false,
                             /*copy=*/true);
      groups_.push_back(std::move(group));
    }
  }
}

ShardedDataParallel::~ShardedDataParallel() = default;

std::unique_ptr<Optimizer> ShardedDataParallel::createOptimizer() const {
  std::vector<torch::Tensor> decayed, undecayed;
  for (const FlatGroup &group : groups_)
    (group.decayed ? decayed : undecayed).push_back(group.master);
  return std::make_unique<Optimizer>(spec_, std::move(decayed),
                                     std::move(undecayed));
}

std::unique_ptr<Optimizer> ShardedDataParallel::createWholeOptimizer() const {
  return std::make_unique<Optimizer>(spec_, parameters_);
}

//===----------------------------------------------------------------------===//
// The training step
//===----------------------------------------------------------------------===//

void ShardedDataParallel::backward(TrainingStep &, const torch::Tensor &loss,
                                   BackwardNext) {
  scaler_.scale(loss).backward();
}

torch::Tensor
ShardedDataParallel::takeGradients(FlatGroup &group,
                                   const torch::TensorOptions &options) {
  torch::Tensor flat = torch::zeros({group.flat.numel()}, options);
  for (Member &member : group.members) {
    torch::Tensor &grad = member.parameter.mutable_grad();
    if (!grad.defined())
      continue;
    placeIn(flat, member.parameter, member.offset).copy_(grad);
    grad.reset();
  }
  return flat;
}

void ShardedDataParallel::reduce(TrainingStep &, ReduceNext) {
  torch::NoGradGuard noGrad;
  const double world = communicator_.worldSize();
  for (FlatGroup &group : groups_) {
    // A parameter without a gradient on this rank adds zeros, as under DDP.
    torch::Tensor local = takeGradients(group, group.flat.options());
    torch::Tensor shard = torch::empty({group.shardSize()}, local.options());
    communicator_.reduceScatterSum(local, shard);
    local = torch::Tensor();
    group.master.mutable_grad() = shard.to(torch::kFloat).div_(world);
  }
}

bool ShardedDataParallel::unscale(TrainingStep &, UnscaleNext) {
  if (!scaler_.enabled())
    return true;
  std::vector<torch::Tensor> masters;
  for (const FlatGroup &group : groups_)
    masters.push_back(group.master);
  // Every rank must take the same decision, or their all-gathers differ.
  bool finite = scaler_.unscale(masters);
  torch::Tensor overflows =
      torch::tensor({finite ? 0.0 : 1.0}, groups_.front().flat.device());
  communicator_.allReduceSum(overflows);
  return overflows.item<double>() == 0;
}

void ShardedDataParallel::optimizerStep(TrainingStep &step, bool finite,
                                        OptimizerStepNext) {
  if (finite) {
    refreshMasters();
    step.state().optimizer->step();
    // A parameter that stopped training (layer freezing) keeps its weights;
    // the flat optimizer stepped its elements too.
    for (FlatGroup &group : groups_)
      for (const Member &member : group.members)
        if (!member.parameter.requires_grad())
          copyToMaster(group, member);
    gatherParameters();
  }
  scaler_.update(finite);
}

void ShardedDataParallel::copyToMaster(FlatGroup &group, const Member &member) {
  int64_t begin = std::max(member.offset, group.shardBegin);
  int64_t end = std::min(member.offset + member.numel,
                         group.shardBegin + group.shardSize());
  if (begin >= end)
    return;
  torch::NoGradGuard noGrad;
  group.master.narrow(0, begin - group.shardBegin, end - begin)
      .copy_(group.flat.narrow(0, begin, end - begin));
}

void ShardedDataParallel::refreshMasters() {
  for (FlatGroup &group : groups_)
    for (Member &member : group.members)
      if (member.parameter._version() != member.version)
        copyToMaster(group, member);
}

void ShardedDataParallel::gatherParameters() {
  torch::NoGradGuard noGrad;
  for (FlatGroup &group : groups_) {
    communicator_.allGather(group.master.to(group.flat.scalar_type()),
                            group.flat);
    for (Member &member : group.members)
      member.version = member.parameter._version();
  }
}

//===----------------------------------------------------------------------===//
// Gradients for algorithms
//===----------------------------------------------------------------------===//

std::vector<torch::Tensor> ShardedDataParallel::localGradients() {
  std::vector<torch::Tensor> grads;
  for (const FlatGroup &group : groups_)
    if (group.master.grad().defined())
      grads.push_back(group.master.grad());
  return grads;
}

void ShardedDataParallel::gatherGradients(const std::string &algorithm) {
  if (announced_.insert(algorithm).second && communicator_.rank() == 0)
    std::cerr << "composer-train: " << algorithm
              << " needs whole gradients: under shard_grad_op it gathers "
                 "them at each step it runs (an all-gather)\n";
  torch::NoGradGuard noGrad;
  for (FlatGroup &group : groups_) {
    torch::Tensor shard = group.master.grad();
    if (!shard.defined())
      shard = torch::zeros_like(group.master);
    torch::Tensor whole = torch::empty({group.flat.numel()}, shard.options());
    communicator_.allGather(shard, whole);
    for (Member &member : group.members)
      if (member.parameter.requires_grad())
        member.parameter.mutable_grad() =
            placeIn(whole, member.parameter, member.offset);
  }
}

void ShardedDataParallel::scatterGradients() {
  torch::NoGradGuard noGrad;
  for (FlatGroup &group : groups_) {
    torch::Tensor whole = takeGradients(group, group.master.options());
    group.master.mutable_grad() =
        whole.narrow(0, group.shardBegin, group.shardSize()).clone();
  }
}

//===----------------------------------------------------------------------===//
// Checkpoints and accounting
//===----------------------------------------------------------------------===//

std::unique_ptr<Optimizer>
ShardedDataParallel::gatherOptimizer(Optimizer &shards) {
  torch::NoGradGuard noGrad;
  std::unique_ptr<Optimizer> whole = createWholeOptimizer();
  whole->setLrMultiplier(shards.lrMultiplier());
  auto &shardStates = shards.impl().state();
  auto &wholeStates = whole->impl().state();
  for (FlatGroup &group : groups_) {
    // Every rank stepped its master as often, so all have state or none.
    auto it = shardStates.find(stateKey(group.master));
    if (it == shardStates.end())
      continue;
    std::vector<std::vector<torch::Tensor>> perMember(group.members.size());
    for (const torch::Tensor &shard : optimizerStateTensors(*it->second)) {
      torch::Tensor gathered;
      if (shard.defined()) {
        gathered = torch::empty({group.flat.numel()}, shard.options());
        communicator_.allGather(shard, gathered);
      }
      for (size_t i = 0; i < group.members.size(); ++i) {
        const Member &member = group.members[i];
        torch::Tensor tensor;
        if (gathered.defined()) {
          tensor = torch::empty_like(
              member.parameter,
              gathered.options().memory_format(at::MemoryFormat::Preserve));
          tensor.copy_(placeIn(gathered, member.parameter, member.offset));
        }
        perMember[i].push_back(tensor);
      }
    }
    for (size_t i = 0; i < group.members.size(); ++i)
      wholeStates[stateKey(group.members[i].parameter)] =
          makeState(*it->second, perMember[i]);
  }
  return whole;
}

void ShardedDataParallel::scatterOptimizer(Optimizer &whole,
                                           Optimizer &shards) {
  torch::NoGradGuard noGrad;
  shards.setLrMultiplier(whole.lrMultiplier());
  auto &shardStates = shards.impl().state();
  auto &wholeStates = whole.impl().state();
  for (FlatGroup &group : groups_) {
    shardStates.erase(stateKey(group.master));
    torch::optim::OptimizerParamState *like = nullptr;
    for (const Member &member : group.members) {
      auto it = wholeStates.find(stateKey(member.parameter));
      if (it != wholeStates.end()) {
        like = it->second.get();
        break;
      }
    }
    if (!like)
      continue;
    std::vector<torch::Tensor> tensors;
    for (size_t index = 0; index < optimizerStateTensors(*like).size();
         ++index) {
      torch::Tensor flat;
      for (const Member &member : group.members) {
        auto it = wholeStates.find(stateKey(member.parameter));
        if (it == wholeStates.end())
          continue;
        torch::Tensor tensor = optimizerStateTensors(*it->second)[index];
        if (!tensor.defined())
          continue;
        if (!flat.defined())
          flat = torch::zeros({group.flat.numel()}, group.master.options());
        placeIn(flat, member.parameter, member.offset).copy_(tensor);
      }
      tensors.push_back(
          flat.defined()
              ? flat.narrow(0, group.shardBegin, group.shardSize()).clone()
              : torch::Tensor());
    }
    shardStates[stateKey(group.master)] = makeState(*like, tensors);
  }
}

TrainingStateBytes ShardedDataParallel::memory(Optimizer &shards) const {
  auto bytes = [](const torch::Tensor &t) {
    return t.defined() ? int64_t(t.numel() * t.element_size()) : int64_t(0);
  };
  TrainingStateBytes memory;
  for (const FlatGroup &group : groups_) {
    memory.parameters += bytes(group.flat);
    memory.gradients += bytes(group.master.grad());
    memory.optimizerState += bytes(group.master);
  }
  memory.optimizerState += shards.stateBytes();
  return memory;
}

} // namespace composer::runtime
