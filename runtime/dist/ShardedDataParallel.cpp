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

} // namespace

ShardedDataParallel::ShardedDataParallel(
    Communicator &communicator, const OptimizerSpec &spec,
    std::vector<std::pair<std::string, torch::Tensor>> parameters,
    GradScaler &scaler, const std::vector<GatheredUnit> &units)
    : communicator_(communicator), spec_(spec),
      parameters_(std::move(parameters)), scaler_(scaler) {
  torch::NoGradGuard noGrad;
  for (const auto &[name, parameter] : parameters_)
    if (!parameter.is_non_overlapping_and_dense())
      throw std::invalid_argument("parameter '" + name +
                                  "' is not dense in memory, so it cannot "
                                  "be sharded");
  if (!units.empty()) {
    layOutUnits(units);
    return;
  }
  const int64_t world = communicator_.worldSize();
  auto [decayed, undecayed] = Optimizer::splitByDecay(spec_, parameters_);
  for (const auto &[named, isDecayed] :
       {std::make_pair(&decayed, true), std::make_pair(&undecayed, false)}) {
    std::vector<FlatGroup> groups;
    for (const auto &[name, parameter] : *named) {
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
      it->members.push_back({{name, it->elements(), parameter.sizes().vec(),
                              parameter.strides().vec()},
                             parameter,
                             parameter.numel(),
                             0});
    }
    for (FlatGroup &group : groups) {
      int64_t shard = (group.elements() + world - 1) / world;
      group.flat = torch::zeros({shard * world}, group.flat.options());
      for (Member &member : group.members) {
        torch::Tensor place = member.placeIn(group.flat);
        place.copy_(member.parameter);
        member.parameter.set_data(place);
        member.version = member.parameter._version();
      }
      group.shardBegin = communicator_.rank() * shard;
      group.shard = group.flat.narrow(0, group.shardBegin, shard);
      group.master = group.shard.to(torch::kFloat, /*non_blocking=*/false,
                                    /*copy=*/true);
      groups_.push_back(std::move(group));
    }
  }
}

void ShardedDataParallel::layOutUnits(const std::vector<GatheredUnit> &units) {
  const int64_t world = communicator_.worldSize();
  auto [decayed, undecayed] = Optimizer::splitByDecay(spec_, parameters_);
  std::set<std::string> decayedNames;
  for (const auto &[name, parameter] : decayed)
    decayedNames.insert(name);
  // The trainable parameters by tensor: a gather may name a tied weight by
  // its other name.
  std::map<const c10::TensorImpl *, std::string> names;
  for (const auto &[name, parameter] : parameters_)
    names.emplace(parameter.unsafeGetTensorImpl(), name);
  std::map<const c10::TensorImpl *, std::pair<std::string, UnitLayout::Slot>>
      placed;
  for (const GatheredUnit &unit : units) {
    UnitLayout &layout = units_[unit.name];
    for (const torch::Tensor &parameter : unit.parameters) {
      const c10::TensorImpl *impl = parameter.unsafeGetTensorImpl();
      auto name = names.find(impl);
      if (name == names.end()) {
        // Not trained (frozen): it stays whole in the module.
        layout.slots.push_back({0, 0, parameter});
        continue;
      }
      auto known = placed.find(impl);
      if (known != placed.end()) {
        if (known->second.first != unit.name)
          throw std::invalid_argument(
              "parameter '" + name->second + "' is gathered by unit '" +
              known->second.first + "' and unit '" + unit.name +
              "'; composer-shard-params gives each parameter one unit");
        layout.slots.push_back(known->second.second);
        continue;
      }
      bool isDecayed = decayedNames.count(name->second) != 0;
      auto group = std::find_if(layout.groups.begin(), layout.groups.end(),
                                [&](size_t index) {
                                  return groups_[index].decayed == isDecayed &&
                                         groups_[index].shard.scalar_type() ==
                                             parameter.scalar_type();
                                });
      if (group == layout.groups.end()) {
        groups_.emplace_back();
        groups_.back().decayed = isDecayed;
        // The dtype, until the chunk is taken.
        groups_.back().shard = torch::empty({0}, parameter.options());
        layout.groups.push_back(groups_.size() - 1);
        group = layout.groups.end() - 1;
      }
      FlatGroup &flatGroup = groups_[*group];
      flatGroup.members.push_back(
          {{name->second, flatGroup.elements(), parameter.sizes().vec(),
            parameter.strides().vec()},
           parameter,
           parameter.numel(),
           0});
      UnitLayout::Slot slot{*group, flatGroup.members.size() - 1, {}};
      layout.slots.push_back(slot);
      placed.emplace(impl, std::make_pair(unit.name, slot));
    }
  }
  for (FlatGroup &group : groups_) {
    int64_t shard = (group.elements() + world - 1) / world;
    group.shardBegin = communicator_.rank() * shard;
    group.shard = torch::empty({shard}, group.shard.options());
    // Aliases the chunk when the parameters are fp32.
    group.master = group.shard.to(torch::kFloat);
  }
  releaseParameters(/*takeWeights=*/true);
}

ShardedDataParallel::~ShardedDataParallel() = default;

template <typename Fn> void ShardedDataParallel::noteCollectiveFailure(Fn fn) {
  try {
    fn();
  } catch (const DistributedError &e) {
    collectiveFailure_ = e.what();
    throw;
  }
}

torch::Tensor ShardedDataParallel::gatherGroup(const FlatGroup &group) {
  torch::Tensor whole = torch::empty(
      {group.paddedSize(communicator_.worldSize())}, group.shard.options());
  noteCollectiveFailure([&] { communicator_.allGather(group.shard, whole); });
  return whole;
}

void ShardedDataParallel::materializeParameters() {
  dropPrefetch();
  torch::NoGradGuard noGrad;
  for (FlatGroup &group : groups_) {
    torch::Tensor whole = gatherGroup(group);
    for (Member &member : group.members)
      member.parameter.set_data(member.placeIn(whole));
  }
}

void ShardedDataParallel::releaseParameters(bool takeWeights) {
  dropPrefetch();
  torch::NoGradGuard noGrad;
  for (FlatGroup &group : groups_) {
    if (takeWeights) {
      torch::Tensor flat = torch::zeros(
          {group.paddedSize(communicator_.worldSize())}, group.shard.options());
      for (Member &member : group.members)
        member.placeIn(flat).copy_(member.parameter);
      group.shard.copy_(flat.narrow(0, group.shardBegin, group.shardSize()));
      if (!group.master.is_same(group.shard))
        group.master.copy_(group.shard);
    }
    for (Member &member : group.members)
      member.parameter.set_data(torch::empty({0}, group.shard.options()));
  }
}

//===----------------------------------------------------------------------===//
// Gathering units (ZeRO-3)
//===----------------------------------------------------------------------===//

bool ShardedDataParallel::shards(const std::string &unit) const {
  return units_.count(unit) != 0;
}

std::vector<at::Tensor> ShardedDataParallel::gather(const std::string &unit,
                                                    const std::string &prefetch,
                                                    at::TensorList params) {
  torch::NoGradGuard noGrad;
  const UnitLayout &layout = units_.at(unit);
  if (params.size() != layout.slots.size())
    throw std::invalid_argument("composer::gather_unit: unit '" + unit +
                                "' gathers " + std::to_string(params.size()) +
                                " parameters, the model's gather " +
                                std::to_string(layout.slots.size()));
  std::map<size_t, torch::Tensor> wholes = takeGathered(unit);
  // Forward runs the units in the order the model names. Backward reruns
  // the checkpointed ones, last first, and every rank's last backward ran
  // them in the same order as this one.
  std::string next = prefetch;
  if (inBackward_) {
    if (std::find(backwardOrderNow_.begin(), backwardOrderNow_.end(), unit) ==
        backwardOrderNow_.end())
      backwardOrderNow_.push_back(unit);
    auto known = std::find(backwardOrder_.begin(), backwardOrder_.end(), unit);
    next = known != backwardOrder_.end() && known + 1 != backwardOrder_.end()
               ? *(known + 1)
               : std::string();
  }
  if (!next.empty() && next != unit && shards(next))
    startPrefetch(next);

  // What is gathered lives as long as what uses it holds it.
  int64_t live = 0;
  auto expired = [](const c10::weak_intrusive_ptr<c10::StorageImpl> &weak) {
    return weak.expired();
  };
  gathered_.erase(std::remove_if(gathered_.begin(), gathered_.end(), expired),
                  gathered_.end());
  for (const auto &weak : gathered_)
    if (c10::intrusive_ptr<c10::StorageImpl> storage = weak.lock())
      live += static_cast<int64_t>(storage->nbytes());
  peakGatheredBytes_ = std::max(peakGatheredBytes_, live);

  std::vector<at::Tensor> result;
  for (const UnitLayout::Slot &slot : layout.slots)
    result.push_back(slot.whole.defined()
                         ? slot.whole
                         : groups_[slot.group].members[slot.member].placeIn(
                               wholes.at(slot.group)));
  return result;
}

std::map<size_t, torch::Tensor>
ShardedDataParallel::takeGathered(const std::string &unit) {
  ++unitGathers_.gathers;
  if (prefetch_ && prefetch_->unit == unit) {
    ++unitGathers_.prefetched;
    Prefetch started = std::move(*prefetch_);
    prefetch_.reset();
    for (auto &collective : started.collectives)
      noteCollectiveFailure([&] { collective->wait(); });
    return std::move(started.wholes);
  }
  dropPrefetch();
  std::map<size_t, torch::Tensor> wholes;
  for (size_t index : units_.at(unit).groups) {
    torch::Tensor whole = gatherGroup(groups_[index]);
    gathered_.emplace_back(whole.storage().getWeakStorageImpl());
    wholes[index] = whole;
  }
  return wholes;
}

void ShardedDataParallel::startPrefetch(const std::string &unit) {
  dropPrefetch();
  Prefetch &started = prefetch_.emplace();
  started.unit = unit;
  for (size_t index : units_.at(unit).groups) {
    const FlatGroup &group = groups_[index];
    torch::Tensor whole = torch::empty(
        {group.paddedSize(communicator_.worldSize())}, group.shard.options());
    gathered_.emplace_back(whole.storage().getWeakStorageImpl());
    started.wholes[index] = whole;
    noteCollectiveFailure([&] {
      started.collectives.push_back(
          communicator_.startAllGather(group.shard, whole));
    });
  }
}

void ShardedDataParallel::dropPrefetch() {
  if (!prefetch_)
    return;
  Prefetch started = std::move(*prefetch_);
  prefetch_.reset();
  for (auto &collective : started.collectives)
    noteCollectiveFailure([&] { collective->wait(); });
}

UnitGatherCounts ShardedDataParallel::takeUnitGatherCounts() {
  return std::exchange(unitGathers_, {});
}

void ShardedDataParallel::reduceGradients(const std::string &unit,
                                          at::TensorList grads) {
  torch::NoGradGuard noGrad;
  const UnitLayout &layout = units_.at(unit);
  const int64_t world = communicator_.worldSize();
  std::map<size_t, torch::Tensor> locals;
  for (size_t index : layout.groups)
    locals[index] = torch::zeros({groups_[index].paddedSize(world)},
                                 groups_[index].shard.options());
  for (size_t i = 0; i < layout.slots.size() && i < grads.size(); ++i) {
    const UnitLayout::Slot &slot = layout.slots[i];
    if (slot.whole.defined() || !grads[i].defined())
      continue;
    // A parameter the gather takes twice gets both gradients.
    const Member &member = groups_[slot.group].members[slot.member];
    member.placeIn(locals.at(slot.group)).add_(grads[i]);
  }
  for (auto &[index, local] : locals) {
    FlatGroup &group = groups_[index];
    torch::Tensor chunk = torch::empty({group.shardSize()}, local.options());
    noteCollectiveFailure(
        [&] { communicator_.reduceScatterSum(local, chunk); });
    local = torch::Tensor();
    if (group.gradientSum.defined())
      group.gradientSum.add_(chunk);
    else
      group.gradientSum = chunk.to(torch::kFloat, /*non_blocking=*/false,
                                   /*copy=*/true);
  }
}

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

/// Runs `fn`; when it throws after a collective of a gather failed,
/// rethrows that failure.
template <typename Fn>
static auto rethrowCollectiveFailure(const std::string &failure, Fn fn) {
  try {
    return fn();
  } catch (const DistributedError &) {
    throw;
  } catch (const std::exception &) {
    if (!failure.empty())
      throw DistributedError(failure);
    throw;
  }
}

torch::Tensor ShardedDataParallel::forward(TrainingStep &,
                                           const torch::Tensor &input,
                                           ForwardNext next) {
  return rethrowCollectiveFailure(collectiveFailure_,
                                  [&] { return next(input); });
}

void ShardedDataParallel::backward(TrainingStep &, const torch::Tensor &loss,
                                   BackwardNext) {
  inBackward_ = true;
  backwardOrderNow_.clear();
  try {
    rethrowCollectiveFailure(collectiveFailure_,
                             [&] { scaler_.scale(loss).backward(); });
  } catch (...) {
    inBackward_ = false;
    throw;
  }
  inBackward_ = false;
  backwardOrder_ = std::move(backwardOrderNow_);
}

torch::Tensor
ShardedDataParallel::takeGradients(FlatGroup &group,
                                   const torch::TensorOptions &options) {
  torch::Tensor flat =
      torch::zeros({group.paddedSize(communicator_.worldSize())}, options);
  for (Member &member : group.members) {
    torch::Tensor &grad = member.parameter.mutable_grad();
    if (!grad.defined())
      continue;
    member.placeIn(flat).copy_(grad);
    grad.reset();
  }
  return flat;
}

void ShardedDataParallel::reduce(TrainingStep &, ReduceNext) {
  torch::NoGradGuard noGrad;
  const double world = communicator_.worldSize();
  if (shardsParameters()) {
    // Reduced as each unit's backward ended.
    for (FlatGroup &group : groups_) {
      group.master.mutable_grad() = group.gradientSum.defined()
                                        ? group.gradientSum.div_(world)
                                        : torch::zeros_like(group.master);
      group.gradientSum = torch::Tensor();
    }
    return;
  }
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
      torch::tensor({finite ? 0.0 : 1.0}, groups_.front().master.device());
  communicator_.allReduceSum(overflows);
  return overflows.item<double>() == 0;
}

void ShardedDataParallel::optimizerStep(TrainingStep &step, bool finite,
                                        OptimizerStepNext) {
  dropPrefetch();
  if (finite && shardsParameters()) {
    // A parameter that stopped training (layer freezing) keeps its weights;
    // the flat optimizer steps its elements too.
    std::vector<std::pair<torch::Tensor, torch::Tensor>> frozen;
    for (FlatGroup &group : groups_)
      for (const Member &member : group.members)
        if (!member.parameter.requires_grad()) {
          auto [begin, end] = ownedRange(group, member);
          torch::Tensor part =
              group.master.narrow(0, begin - group.shardBegin, end - begin);
          frozen.emplace_back(part, part.clone());
        }
    step.state().optimizer->step();
    torch::NoGradGuard noGrad;
    for (auto &[part, weights] : frozen)
      part.copy_(weights);
    for (FlatGroup &group : groups_)
      if (!group.master.is_same(group.shard))
        group.shard.copy_(group.master);
  } else if (finite) {
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

std::pair<int64_t, int64_t>
ShardedDataParallel::ownedRange(const FlatGroup &group, const Member &member) {
  int64_t begin = std::max(member.offset, group.shardBegin);
  int64_t end = std::min(member.offset + member.numel,
                         group.shardBegin + group.shardSize());
  if (begin >= end)
    return {group.shardBegin, group.shardBegin};
  return {begin, end};
}

void ShardedDataParallel::copyToMaster(FlatGroup &group, const Member &member) {
  auto [begin, end] = ownedRange(group, member);
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

std::vector<torch::Tensor> ShardedDataParallel::localWeights() {
  // The weights may have changed since the last all-gather (ZeRO-2).
  if (!shardsParameters())
    refreshMasters();
  std::vector<torch::Tensor> weights;
  for (const FlatGroup &group : groups_)
    if (group.master.grad().defined())
      weights.push_back(group.master);
  return weights;
}

void ShardedDataParallel::publishWeights() {
  if (!shardsParameters()) {
    gatherParameters();
    return;
  }
  // A started gather holds the chunks as they were.
  dropPrefetch();
  torch::NoGradGuard noGrad;
  for (FlatGroup &group : groups_)
    if (!group.master.is_same(group.shard))
      group.shard.copy_(group.master);
}

void ShardedDataParallel::gatherGradients(const std::string &algorithm) {
  if (announced_.insert(algorithm).second && communicator_.rank() == 0)
    std::cerr << "composer-train: " << algorithm
              << (shardsParameters()
                      ? " needs whole gradients and weights: under full_shard "
                        "it gathers both at each step it runs (all-gathers)\n"
                      : " needs whole gradients: under shard_grad_op it "
                        "gathers them at each step it runs (an all-gather)\n");
  if (shardsParameters())
    materializeParameters();
  torch::NoGradGuard noGrad;
  for (FlatGroup &group : groups_) {
    torch::Tensor shard = group.master.grad();
    if (!shard.defined())
      shard = torch::zeros_like(group.master);
    torch::Tensor whole = torch::empty(
        {group.paddedSize(communicator_.worldSize())}, shard.options());
    communicator_.allGather(shard, whole);
    for (Member &member : group.members)
      if (member.parameter.requires_grad())
        member.parameter.mutable_grad() = member.placeIn(whole);
  }
}

void ShardedDataParallel::scatterGradients() {
  torch::NoGradGuard noGrad;
  for (FlatGroup &group : groups_) {
    torch::Tensor whole = takeGradients(group, group.master.options());
    group.master.mutable_grad() =
        whole.narrow(0, group.shardBegin, group.shardSize()).clone();
  }
  if (shardsParameters())
    releaseParameters(/*takeWeights=*/false);
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
    auto it = shardStates.find(optimizerStateKey(group.master));
    if (it == shardStates.end())
      continue;
    std::vector<torch::Tensor> flats;
    for (const torch::Tensor &shard : optimizerStateTensors(*it->second)) {
      torch::Tensor &gathered = flats.emplace_back();
      if (!shard.defined())
        continue;
      gathered = torch::empty({group.paddedSize(communicator_.worldSize())},
                              shard.options());
      communicator_.allGather(shard, gathered);
    }
    for (const Member &member : group.members)
      wholeStates[optimizerStateKey(member.parameter)] =
          member.optimizerState(*it->second, flats);
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
    shardStates.erase(optimizerStateKey(group.master));
    torch::optim::OptimizerParamState *like = nullptr;
    for (const Member &member : group.members) {
      auto it = wholeStates.find(optimizerStateKey(member.parameter));
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
        auto it = wholeStates.find(optimizerStateKey(member.parameter));
        if (it == wholeStates.end())
          continue;
        torch::Tensor tensor = optimizerStateTensors(*it->second)[index];
        if (!tensor.defined())
          continue;
        if (!flat.defined())
          flat = torch::zeros({group.paddedSize(communicator_.worldSize())},
                              group.master.options());
        member.placeIn(flat).copy_(tensor);
      }
      tensors.push_back(
          flat.defined()
              ? flat.narrow(0, group.shardBegin, group.shardSize()).clone()
              : torch::Tensor());
    }
    shardStates[optimizerStateKey(group.master)] =
        makeOptimizerState(*like, tensors);
  }
}

ShardedState ShardedDataParallel::shardedState(Optimizer *shards) const {
  ShardedState state;
  state.rank = communicator_.rank();
  state.worldSize = communicator_.worldSize();
  state.spec = spec_;
  for (const auto &[name, parameter] : parameters_)
    state.parameters.push_back(name);
  for (const FlatGroup &group : groups_) {
    ShardedState::Group &saved = state.groups.emplace_back();
    saved.decayed = group.decayed;
    saved.chunk = group.shard;
    saved.members.assign(group.members.begin(), group.members.end());
  }
  state.optimizer = shards;
  return state;
}

TrainingStateBytes ShardedDataParallel::memory(Optimizer &shards) const {
  auto bytes = [](const torch::Tensor &t) {
    return t.defined() ? int64_t(t.numel() * t.element_size()) : int64_t(0);
  };
  TrainingStateBytes memory;
  for (const FlatGroup &group : groups_) {
    memory.parameters +=
        shardsParameters() ? bytes(group.shard) : bytes(group.flat);
    memory.gradients += bytes(group.master.grad()) + bytes(group.gradientSum);
    if (!group.master.is_same(group.shard))
      memory.optimizerState += bytes(group.master);
  }
  memory.parameters += peakGatheredBytes_;
  memory.optimizerState += shards.stateBytes();
  return memory;
}

} // namespace composer::runtime
