//===- ShardedCheckpoint.cpp - Checkpoints every rank writes its part of --===//

#include "CheckpointFiles.h"
#include "composer/Runtime/Distributed.h"

#include <filesystem>
#include <map>

namespace fs = std::filesystem;

namespace composer::runtime {

using namespace checkpoint_files;

namespace {
constexpr const char *kShardFormat = "composer-train-checkpoint-shard";
constexpr const char *kIndexFile = "index.pt";

std::string shardPath(const std::string &dir, int64_t rank) {
  return (fs::path(dir) / ("rank" + std::to_string(rank) + ".pt")).string();
}

Dict newDict() { return Dict(c10::StringType::get(), c10::AnyType::get()); }

Dict specDict(const OptimizerSpec &spec) {
  Dict dict = newDict();
  dict.insert("name", spec.name);
  dict.insert("lr", spec.lr);
  dict.insert("momentum", spec.momentum);
  dict.insert("dampening", spec.dampening);
  dict.insert("nesterov", spec.nesterov);
  dict.insert("weight_decay", spec.weightDecay);
  dict.insert("betas", c10::List<double>({spec.beta1, spec.beta2}));
  dict.insert("eps", spec.eps);
  dict.insert("weight_decay_exclude",
              c10::List<std::string>(spec.weightDecayExclude));
  return dict;
}

OptimizerSpec specFromDict(const Dict &dict, const std::string &path) {
  OptimizerSpec spec;
  spec.name = lookup(dict, "name", path).toStringRef();
  spec.lr = lookup(dict, "lr", path).toDouble();
  spec.momentum = lookup(dict, "momentum", path).toDouble();
  spec.dampening = lookup(dict, "dampening", path).toDouble();
  spec.nesterov = lookup(dict, "nesterov", path).toBool();
  spec.weightDecay = lookup(dict, "weight_decay", path).toDouble();
  std::vector<double> betas = lookup(dict, "betas", path).toDoubleVector();
  if (betas.size() != 2)
    fail(path, "corrupt optimizer spec: betas");
  spec.beta1 = betas[0];
  spec.beta2 = betas[1];
  spec.eps = lookup(dict, "eps", path).toDouble();
  for (const c10::IValue &pattern :
       lookup(dict, "weight_decay_exclude", path).toListRef())
    spec.weightDecayExclude.push_back(pattern.toStringRef());
  return spec;
}

Dict groupDict(const ShardedState::Group &group) {
  c10::impl::GenericList members(c10::AnyType::get());
  for (const ShardedState::Member &member : group.members) {
    Dict entry = newDict();
    entry.insert("name", member.name);
    entry.insert("offset", member.offset);
    entry.insert("sizes", c10::List<int64_t>(member.sizes));
    entry.insert("strides", c10::List<int64_t>(member.strides));
    members.push_back(entry);
  }
  Dict dict = newDict();
  dict.insert("decayed", group.decayed);
  dict.insert("members", members);
  return dict;
}

ShardedState::Group groupFromDict(const Dict &dict, const std::string &path) {
  ShardedState::Group group;
  group.decayed = lookup(dict, "decayed", path).toBool();
  for (const c10::IValue &value : lookup(dict, "members", path).toListRef()) {
    Dict entry = value.toGenericDict();
    group.members.push_back({lookup(entry, "name", path).toStringRef(),
                             lookup(entry, "offset", path).toInt(),
                             lookup(entry, "sizes", path).toIntVector(),
                             lookup(entry, "strides", path).toIntVector()});
  }
  return group;
}

/// Throws naming `path` unless `member`'s layout lies within a whole
/// buffer of `numel` elements.
void checkLayout(const ShardedState::Member &member, int64_t numel,
                 const std::string &path) {
  if (member.sizes.size() != member.strides.size())
    fail(path, "corrupt layout of '" + member.name + "'");
  int64_t last = member.offset;
  for (size_t i = 0; i < member.sizes.size(); ++i)
    if (member.sizes[i] > 0)
      last += (member.sizes[i] - 1) * member.strides[i];
  if (member.offset < 0 || last >= numel)
    fail(path, "the layout of '" + member.name + "' lies outside its buffer");
}

/// A rank's optimizer over fp32 masters shaped as its chunks, as
/// ShardedDataParallel::createOptimizer builds it.
std::unique_ptr<Optimizer>
shardOptimizer(const OptimizerSpec &spec,
               const std::vector<ShardedState::Group> &groups,
               std::vector<torch::Tensor> &masters) {
  std::vector<torch::Tensor> decayed, undecayed;
  for (const ShardedState::Group &group : groups) {
    masters.push_back(torch::zeros({group.chunk.numel()}, torch::kFloat));
    (group.decayed ? decayed : undecayed).push_back(masters.back());
  }
  return std::make_unique<Optimizer>(spec, std::move(decayed),
                                     std::move(undecayed));
}
} // namespace

torch::Tensor ShardedState::Member::placeIn(const torch::Tensor &flat) const {
  return flat.as_strided(sizes, strides, flat.storage_offset() + offset);
}

std::unique_ptr<torch::optim::OptimizerParamState>
ShardedState::Member::optimizerState(
    torch::optim::OptimizerParamState &like,
    const std::vector<torch::Tensor> &flats) const {
  std::vector<torch::Tensor> tensors;
  for (const torch::Tensor &flat : flats)
    tensors.push_back(flat.defined()
                          ? placeIn(flat).clone(at::MemoryFormat::Preserve)
                          : torch::Tensor());
  return makeOptimizerState(like, tensors);
}

void saveCheckpointShard(const std::string &dir, const State &state,
                         const CheckpointExtras &extras,
                         const ShardedState &shards, bool weightsOnly) {
  if (shards.rank == 0) {
    std::set<std::string> sharded;
    c10::impl::GenericList groups(c10::AnyType::get());
    for (const ShardedState::Group &group : shards.groups) {
      for (const ShardedState::Member &member : group.members)
        sharded.insert(member.name);
      groups.push_back(groupDict(group));
    }
    Dict index = checkpointDict(state, extras, weightsOnly, sharded);
    (void)index.erase("optimizer");
    Dict sharding = newDict();
    sharding.insert("world_size", int64_t(shards.worldSize));
    sharding.insert("optimizer", specDict(shards.spec));
    sharding.insert("parameters", c10::List<std::string>(shards.parameters));
    sharding.insert("groups", groups);
    index.insert("sharding", sharding);
    writeDict((fs::path(dir) / kIndexFile).string(), index, "checkpoint index");
  }
  Dict shard = newDict();
  shard.insert("format", std::string(kShardFormat));
  shard.insert("version", kVersion);
  shard.insert("rank", int64_t(shards.rank));
  shard.insert("world_size", int64_t(shards.worldSize));
  // A copy: a chunk may view a larger buffer, which pickling would write
  // whole.
  c10::List<torch::Tensor> chunks;
  for (const ShardedState::Group &group : shards.groups)
    chunks.push_back(group.chunk.detach().to(torch::kCPU,
                                             /*non_blocking=*/false,
                                             /*copy=*/true));
  shard.insert("weights", chunks);
  if (!weightsOnly && shards.optimizer) {
    torch::serialize::OutputArchive archive;
    shards.optimizer->save(archive);
    shard.insert("optimizer", archiveTensor(archive));
  }
  writeDict(shardPath(dir, shards.rank), shard, "checkpoint shard");
}

/// consolidate, but a malformed entry throws c10::Error.
static Dict consolidateEntries(const std::string &dir) {
  std::string indexPath = (fs::path(dir) / kIndexFile).string();
  std::error_code error;
  if (!fs::exists(indexPath, error))
    fail(dir, "not a sharded checkpoint: the directory has no index.pt");
  Dict checkpoint = readDict(indexPath, "checkpoint index");
  if (lookup(checkpoint, "format", indexPath).toStringRef() != kFormat ||
      !checkpoint.contains("sharding"))
    fail(indexPath, "not the index of a sharded composer-train checkpoint");
  if (lookup(checkpoint, "version", indexPath).toInt() != kVersion)
    fail(indexPath, "unsupported checkpoint version");
  Dict sharding = checkpoint.at("sharding").toGenericDict();
  int64_t world = lookup(sharding, "world_size", indexPath).toInt();
  if (world < 1)
    fail(indexPath, "corrupt world size");
  std::vector<ShardedState::Group> groups;
  for (const c10::IValue &group :
       lookup(sharding, "groups", indexPath).toListRef())
    groups.push_back(groupFromDict(group.toGenericDict(), indexPath));
  bool weightsOnly = lookup(checkpoint, "weights_only", indexPath).toBool();

  // Every rank's chunks, checked against the layout.
  std::vector<Dict> shards;
  std::vector<std::vector<ShardedState::Group>> rankGroups(world, groups);
  for (int64_t rank = 0; rank < world; ++rank) {
    std::string path = shardPath(dir, rank);
    if (!fs::exists(path, error))
      fail(path, "missing: the checkpoint was written by " +
                     std::to_string(world) + " ranks");
    Dict shard = readDict(path, "checkpoint shard");
    if (lookup(shard, "format", path).toStringRef() != kShardFormat ||
        lookup(shard, "rank", path).toInt() != rank ||
        lookup(shard, "world_size", path).toInt() != world)
      fail(path, "not rank " + std::to_string(rank) + " of " +
                     std::to_string(world) + " of this checkpoint");
    auto chunks = lookup(shard, "weights", path).toTensorList();
    if (chunks.size() != groups.size())
      fail(path, "holds " + std::to_string(chunks.size()) +
                     " chunks; the index lays out " +
                     std::to_string(groups.size()) + " groups");
    for (size_t g = 0; g < groups.size(); ++g) {
      rankGroups[rank][g].chunk = chunks.get(g);
      if (rank > 0 &&
          rankGroups[rank][g].chunk.sizes() != rankGroups[0][g].chunk.sizes())
        fail(path,
             "chunk " + std::to_string(g) + " differs in size from rank 0's");
    }
    if (!weightsOnly && !shard.contains("optimizer"))
      fail(path, "has no optimizer state");
    shards.push_back(shard);
  }

  // The weights, under their state_dict names.
  Dict model = lookup(checkpoint, "model", indexPath).toGenericDict();
  std::map<std::string, torch::Tensor> placeholders;
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<torch::Tensor> chunks;
    for (int64_t rank = 0; rank < world; ++rank)
      chunks.push_back(rankGroups[rank][g].chunk);
    torch::Tensor flat = torch::cat(chunks);
    for (const ShardedState::Member &member : groups[g].members) {
      // The optimizer's whole state tensors have the same size.
      checkLayout(member, flat.numel(), indexPath);
      torch::Tensor weight =
          member.placeIn(flat).clone(at::MemoryFormat::Preserve);
      model.insert(member.name, weight);
      placeholders[member.name] = torch::empty_like(weight);
    }
  }

  if (!weightsOnly) {
    // The whole optimizer, as ShardedDataParallel::gatherOptimizer makes it.
    OptimizerSpec spec = specFromDict(
        lookup(sharding, "optimizer", indexPath).toGenericDict(), indexPath);
    std::vector<std::unique_ptr<Optimizer>> optimizers;
    std::vector<std::vector<torch::Tensor>> masters(world);
    for (int64_t rank = 0; rank < world; ++rank) {
      std::string path = shardPath(dir, rank);
      try {
        optimizers.push_back(
            shardOptimizer(spec, rankGroups[rank], masters[rank]));
        torch::serialize::InputArchive archive;
        readArchive(shards[rank].at("optimizer").toTensor(), archive);
        optimizers.back()->load(archive);
      } catch (const std::exception &e) {
        fail(path, std::string("cannot read its optimizer state: ") + e.what());
      }
    }
    Optimizer::NamedTensors named;
    for (const c10::IValue &value :
         lookup(sharding, "parameters", indexPath).toListRef()) {
      const std::string &name = value.toStringRef();
      auto it = placeholders.find(name);
      if (it == placeholders.end()) {
        auto saved = model.find(name);
        if (saved == model.end())
          fail(indexPath, "has no tensor '" + name + "'");
        it = placeholders
                 .emplace(name, torch::empty_like(saved->value().toTensor()))
                 .first;
      }
      named.emplace_back(name, it->second);
    }
    Optimizer whole(spec, named);
    whole.setLrMultiplier(optimizers[0]->lrMultiplier());
    auto &wholeStates = whole.impl().state();
    for (size_t g = 0; g < groups.size(); ++g) {
      auto &firstStates = optimizers[0]->impl().state();
      auto like = firstStates.find(optimizerStateKey(masters[0][g]));
      if (like == firstStates.end())
        continue; // Not stepped yet.
      std::vector<torch::Tensor> flats;
      for (size_t i = 0; i < optimizerStateTensors(*like->second).size(); ++i) {
        std::vector<torch::Tensor> parts;
        for (int64_t rank = 0; rank < world; ++rank) {
          auto &states = optimizers[rank]->impl().state();
          auto it = states.find(optimizerStateKey(masters[rank][g]));
          if (it == states.end())
            fail(shardPath(dir, rank), "has no optimizer state for group " +
                                           std::to_string(g) + "; rank 0 has");
          parts.push_back(optimizerStateTensors(*it->second)[i]);
        }
        flats.push_back(parts[0].defined() ? torch::cat(parts)
                                           : torch::Tensor());
      }
      for (const ShardedState::Member &member : groups[g].members)
        wholeStates[optimizerStateKey(placeholders.at(member.name))] =
            member.optimizerState(*like->second, flats);
    }
    torch::serialize::OutputArchive archive;
    whole.save(archive);
    checkpoint.insert("optimizer", archiveTensor(archive));
  }
  (void)checkpoint.erase("sharding");
  return checkpoint;
}

namespace checkpoint_files {

Dict consolidate(const std::string &dir) {
  try {
    return consolidateEntries(dir);
  } catch (const c10::Error &error) {
    fail(dir, "corrupt sharded checkpoint (" +
                  std::string(error.what_without_backtrace()) + ")");
  }
}

} // namespace checkpoint_files

void consolidateCheckpoint(const std::string &dir, const std::string &out) {
  std::error_code error;
  if (!fs::exists(dir, error))
    fail(dir, "no such checkpoint");
  if (!fs::is_directory(dir, error))
    fail(dir, "not a sharded checkpoint (a directory written by every "
              "rank); it is whole already");
  writeDict(out, consolidate(dir), "checkpoint");
}

std::string CheckpointFolder::saveSharded(const State &state,
                                          const CheckpointExtras &extras,
                                          const ShardedState &shards,
                                          Communicator &communicator) {
  std::string path = pathFor(state);
  std::string partial = path + ".partial";
  std::error_code error;
  if (shards.rank == 0) {
    // What a killed run left here, perhaps of another world size.
    fs::remove_all(partial, error);
    fs::create_directories(partial, error);
  }
  communicator.barrier();
  std::string failure;
  try {
    saveCheckpointShard(partial, state, extras, shards, weightsOnly_);
    // Each part is read back (its entries' CRC-32s checked) before the
    // checkpoint is published and older ones are pruned.
    readDict(shardPath(partial, shards.rank), "checkpoint shard");
    if (shards.rank == 0)
      readDict((fs::path(partial) / kIndexFile).string(), "checkpoint index");
  } catch (const std::exception &e) {
    failure = e.what();
  }
  // Every rank learns whether all parts were written, so none waits alone.
  torch::Device device = shards.groups.empty()
                             ? torch::Device(torch::kCPU)
                             : shards.groups.front().chunk.device();
  torch::Tensor failed =
      torch::zeros({shards.worldSize},
                   torch::TensorOptions().dtype(torch::kFloat).device(device));
  if (!failure.empty())
    failed[shards.rank] = 1;
  communicator.allReduceSum(failed);
  if (!failure.empty())
    throw std::runtime_error(failure);
  failed = failed.cpu();
  for (int rank = 0; rank < shards.worldSize; ++rank)
    if (failed[rank].item<float>() != 0)
      fail(path, "rank " + std::to_string(rank) +
                     " could not write its shard; the checkpoint is not "
                     "saved");
  if (shards.rank == 0) {
    fs::remove_all(path, error);
    fs::rename(partial, path, error);
    if (error)
      fail(path, "cannot publish the sharded checkpoint: " + error.message());
    publish(path);
  }
  return path;
}

} // namespace composer::runtime
