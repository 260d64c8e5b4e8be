//===- Checkpoint.cpp - Saving and resuming a run -------------------------===//

#include "composer/Runtime/Checkpoint.h"
#include "CheckpointFiles.h"
#include "ZipIntegrity.h"

#include <ATen/CPUGeneratorImpl.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/serialize.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace composer::runtime {

namespace checkpoint_files {

void fail(const std::string &path, const std::string &message) {
  throw std::runtime_error(path + ": " + message);
}

void writeAtomically(const std::string &path, const char *data, size_t size,
                     const std::string &what) {
  // Written to a temporary name and flushed to the disk before the rename,
  // and the rename flushed with its directory: after a crash of the
  // machine, `path` is the old file or the whole new one.
  const std::string temporary = path + ".tmp";
  auto failWith = [&](const std::string &why) {
    ::unlink(temporary.c_str());
    fail(path, "cannot write " + what + ": " + why);
  };
  int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    fail(path, "cannot write " + what + ": " + std::strerror(errno));
  for (size_t done = 0; done < size;) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      failWith(std::strerror(err));
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    failWith(std::strerror(err));
  }
  if (::close(fd) != 0)
    failWith(std::strerror(errno));
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    failWith(std::strerror(errno));
  std::string dir = fs::path(path).parent_path().string();
  int dirFd = ::open(dir.empty() ? "." : dir.c_str(),
                     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}

void writeDict(const std::string &path, const Dict &dict,
               const std::string &what) {
  std::vector<char> bytes = torch::pickle_save(dict);
  writeAtomically(path, bytes.data(), bytes.size(), what);
}

/// Whether `path` is a whole archive whose pickle names Python classes
/// that composer-train never writes (a state_dict's OrderedDict, Composer's
/// own classes): a file of another program, not a damaged checkpoint.
bool holdsPythonObjects(const std::string &path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    if (!reader.hasRecord("data.pkl"))
      return false;
    auto [data, size] = reader.getRecord("data.pkl");
    std::string_view pickle(static_cast<const char *>(data.get()), size);
    return pickle.find("OrderedDict") != std::string_view::npos ||
           pickle.find("composer.") != std::string_view::npos;
  } catch (const c10::Error &) {
    return false;
  }
}

/// A pickle that is not composer-train's: most likely a torch.save'd
/// state_dict (an OrderedDict, which LibTorch's unpickler reads as None) or
/// a Composer checkpoint (Python objects).
[[noreturn]] void failForeign(const std::string &path,
                              const std::string &what) {
  fail(path, "not a composer-train " + what +
                 ": a torch.save'd state_dict or a Composer checkpoint holds "
                 "Python objects, which composer-train does not read; load "
                 "it from Python (composer_opt.Trainer(load_path=...)), or "
                 "convert it once with `python3 -m composer_opt.weights " +
                 path +
                 " OUT.ckpt` and train with load_path: OUT.ckpt and "
                 "load_weights_only: true");
}

Dict readDict(const std::string &path, const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, "cannot open " + what);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  // LibTorch reads a damaged archive as whole: check every entry first.
  try {
    checkZipEntries(bytes.data(), bytes.size());
  } catch (const std::runtime_error &error) {
    fail(path, "corrupt or truncated " + what + " (" + error.what() + ")");
  }
  c10::IValue loaded;
  try {
    loaded = torch::pickle_load(bytes);
  } catch (const c10::Error &error) {
    if (holdsPythonObjects(path))
      failForeign(path, what);
    fail(path, "corrupt or truncated " + what + " (" +
                   std::string(error.what_without_backtrace()) + ")");
  }
  if (!loaded.isGenericDict())
    failForeign(path, what);
  return loaded.toGenericDict();
}

torch::Tensor archiveTensor(torch::serialize::OutputArchive &archive) {
  std::ostringstream stream;
  archive.save_to(stream);
  std::string bytes = stream.str();
  torch::Tensor tensor = torch::empty({int64_t(bytes.size())}, torch::kUInt8);
  std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
  return tensor;
}

void readArchive(const torch::Tensor &bytes,
                 torch::serialize::InputArchive &archive) {
  torch::Tensor contiguous = bytes.contiguous();
  std::istringstream stream(std::string(
      static_cast<const char *>(contiguous.data_ptr()), contiguous.numel()));
  archive.load_from(stream);
}

const c10::IValue &lookup(const Dict &dict, const std::string &key,
                          const std::string &path) {
  auto it = dict.find(key);
  if (it == dict.end())
    fail(path, "not a composer-train checkpoint: no '" + key + "' entry");
  return it->value();
}

/// The generators a run draws from: CPU and every visible CUDA device.
static std::vector<std::pair<std::string, at::Generator>> defaultGenerators() {
  std::vector<std::pair<std::string, at::Generator>> generators = {
      {"cpu", at::detail::getDefaultCPUGenerator()}};
  if (torch::cuda::is_available())
    for (int64_t i = 0, e = int64_t(torch::cuda::device_count()); i < e; ++i)
      generators.emplace_back("cuda:" + std::to_string(i),
                              at::globalContext().defaultGenerator(
                                  at::Device(at::kCUDA, at::DeviceIndex(i))));
  return generators;
}

Dict checkpointDict(const State &state, const CheckpointExtras &extras,
                    bool weightsOnly, const std::set<std::string> &leftOut) {
  Dict checkpoint(c10::StringType::get(), c10::AnyType::get());
  checkpoint.insert("format", std::string(kFormat));
  checkpoint.insert("version", kVersion);
  checkpoint.insert("seed", int64_t(state.seed));
  checkpoint.insert("pipeline", extras.pipeline);
  checkpoint.insert("weights_only", weightsOnly);

  const Timestamp &now = state.timestamp;
  c10::Dict<std::string, int64_t> timestamp;
  timestamp.insert("epoch", now.epoch);
  timestamp.insert("batch", now.batch);
  timestamp.insert("sample", now.sample);
  timestamp.insert("token", now.token);
  timestamp.insert("batch_in_epoch", now.batchInEpoch);
  timestamp.insert("sample_in_epoch", now.sampleInEpoch);
  timestamp.insert("token_in_epoch", now.tokenInEpoch);
  checkpoint.insert("timestamp", timestamp);

  c10::Dict<std::string, torch::Tensor> model;
  c10::List<std::string> frozen;
  for (const auto &[name, tensor] : namedParameters(state.model)) {
    if (!tensor.requires_grad())
      frozen.push_back(name);
    if (!leftOut.count(name))
      model.insert(name, tensor.detach().cpu());
  }
  for (const auto &[name, tensor] : namedBuffers(state.model))
    if (!leftOut.count(name))
      model.insert(name, tensor.detach().cpu());
  checkpoint.insert("model", model);
  checkpoint.insert("frozen", frozen);
  if (weightsOnly)
    return checkpoint;

  if (state.optimizer) {
    torch::serialize::OutputArchive archive;
    state.optimizer->save(archive);
    checkpoint.insert("optimizer", archiveTensor(archive));
  }

  c10::Dict<std::string, torch::Tensor> rng;
  for (auto &[name, generator] : defaultGenerators()) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    rng.insert(name, generator.get_state());
  }
  checkpoint.insert("rng", rng);

  if (extras.gradScaler) {
    c10::Dict<std::string, double> scaler;
    scaler.insert("scale", extras.gradScaler->currentScale());
    scaler.insert("growth_tracker", double(extras.gradScaler->growthTracker()));
    checkpoint.insert("grad_scaler", scaler);
  }

  c10::Dict<std::string, torch::Tensor> algorithms;
  if (extras.algorithms)
    for (const auto &algorithm : *extras.algorithms) {
      torch::serialize::OutputArchive archive;
      algorithm->saveState(archive);
      algorithms.insert(algorithm->name(), archiveTensor(archive));
    }
  checkpoint.insert("algorithms", algorithms);
  return checkpoint;
}

} // namespace checkpoint_files

using namespace checkpoint_files;

void saveCheckpoint(const std::string &path, const State &state,
                    const CheckpointExtras &extras, bool weightsOnly) {
  writeDict(path, checkpointDict(state, extras, weightsOnly), "checkpoint");
}

Dict readCheckpoint(const std::string &path) {
  std::error_code error;
  Dict checkpoint = fs::is_directory(path, error)
                        ? consolidate(path)
                        : readDict(path, "checkpoint");
  if (!checkpoint.contains("format"))
    failForeign(path, "checkpoint");
  if (lookup(checkpoint, "format", path).toStringRef() != kFormat)
    fail(path, "not a composer-train checkpoint");
  if (lookup(checkpoint, "version", path).toInt() != kVersion)
    fail(path, "unsupported checkpoint version");
  return checkpoint;
}

void verifyCheckpoint(const std::string &path) { readCheckpoint(path); }

LoadReport loadCheckpoint(const std::string &path, State &state,
                          CheckpointExtras &extras,
                          const LoadOptions &options) {
  Dict checkpoint = readCheckpoint(path);
  bool savedWeightsOnly = checkpoint.contains("weights_only") &&
                          checkpoint.at("weights_only").toBool();
  if (savedWeightsOnly && !options.weightsOnly)
    fail(path, "holds weights only and cannot resume a run; load it with "
               "load_weights_only: true");

  // Check everything before changing anything.
  LoadReport report;
  auto ignored = [&](const std::string &name) {
    for (std::string pattern : options.ignoreKeys) {
      const std::string prefix = "state/model/";
      if (pattern.rfind(prefix, 0) == 0)
        pattern = pattern.substr(prefix.size());
      if (fnmatch(pattern.c_str(), name.c_str(), 0) == 0)
        return true;
    }
    return false;
  };
  auto model = lookup(checkpoint, "model", path).toGenericDict();
  auto tensors = namedParameters(state.model);
  auto buffers = namedBuffers(state.model);
  tensors.insert(tensors.end(), buffers.begin(), buffers.end());
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copies;
  std::set<std::string> inModel;
  for (const auto &[name, tensor] : tensors) {
    inModel.insert(name);
    auto it = model.find(name);
    if (it == model.end()) {
      if (ignored(name))
        continue;
      if (options.strict)
        fail(path, "has no tensor '" + name + "' of the model");
      report.missing.push_back(name);
      continue;
    }
    if (ignored(name)) {
      report.ignored.push_back(name);
      continue;
    }
    torch::Tensor saved = it->value().toTensor();
    if (saved.sizes() != tensor.sizes() ||
        saved.scalar_type() != tensor.scalar_type()) {
      std::ostringstream message;
      message << "tensor '" << name << "' is " << saved.sizes() << " "
              << saved.scalar_type() << " in the checkpoint but "
              << tensor.sizes() << " " << tensor.scalar_type()
              << " in the model";
      fail(path, message.str());
    }
    copies.emplace_back(tensor, saved);
  }
  for (const auto &entry : model) {
    const std::string &name = entry.key().toStringRef();
    if (inModel.count(name) || ignored(name))
      continue;
    if (options.strict)
      fail(path, "holds tensor '" + name + "', which the model does not have");
    report.unexpected.push_back(name);
  }

  {
    torch::NoGradGuard noGrad;
    for (auto &[tensor, saved] : copies)
      tensor.copy_(saved);
  }
  if (options.weightsOnly)
    return report;
  for (const c10::IValue &name :
       lookup(checkpoint, "frozen", path).toListRef()) {
    for (auto &[parameterName, parameter] : state.parameters)
      if (parameterName == name.toStringRef()) {
        parameter.requires_grad_(false);
        parameter.mutable_grad().reset();
      }
  }

  auto timestamp = lookup(checkpoint, "timestamp", path).toGenericDict();
  Timestamp &now = state.timestamp;
  now.epoch = timestamp.at("epoch").toInt();
  now.batch = timestamp.at("batch").toInt();
  now.sample = timestamp.at("sample").toInt();
  now.token = timestamp.at("token").toInt();
  now.batchInEpoch = timestamp.at("batch_in_epoch").toInt();
  now.sampleInEpoch = timestamp.at("sample_in_epoch").toInt();
  now.tokenInEpoch = timestamp.at("token_in_epoch").toInt();

  if (state.optimizer && checkpoint.contains("optimizer")) {
    torch::serialize::InputArchive archive;
    readArchive(checkpoint.at("optimizer").toTensor(), archive);
    state.optimizer->load(archive);
  }

  auto rng = lookup(checkpoint, "rng", path).toGenericDict();
  for (auto &[name, generator] : defaultGenerators()) {
    auto it = rng.find(name);
    if (it == rng.end())
      continue;
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(it->value().toTensor());
  }

  if (extras.gradScaler && checkpoint.contains("grad_scaler")) {
    auto scaler = checkpoint.at("grad_scaler").toGenericDict();
    extras.gradScaler->setScale(scaler.at("scale").toDouble());
    extras.gradScaler->setGrowthTracker(
        int64_t(scaler.at("growth_tracker").toDouble()));
  }

  auto algorithms = lookup(checkpoint, "algorithms", path).toGenericDict();
  if (extras.algorithms)
    for (const auto &algorithm : *extras.algorithms) {
      auto it = algorithms.find(algorithm->name());
      if (it == algorithms.end())
        continue; // Added on resume: it starts fresh.
      torch::serialize::InputArchive archive;
      readArchive(it->value().toTensor(), archive);
      algorithm->loadState(archive);
    }
  if (checkpoint.contains("pipeline"))
    extras.pipeline = checkpoint.at("pipeline").toStringRef();
  state.seed = uint64_t(lookup(checkpoint, "seed", path).toInt());
  return report;
}

namespace {
/// The run's checkpoints in `folder` (ep<E>-ba<B>.ckpt, files or sharded
/// directories), oldest first, with their batch counts. Scanning the folder
/// counts those of an earlier process of the same run too.
std::vector<std::pair<int64_t, std::string>>
runCheckpoints(const std::string &folder) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code error;
  for (const auto &entry : fs::directory_iterator(folder, error)) {
    std::string file = entry.path().filename().string();
    long long epoch = 0, batch = 0;
    char tail = 0;
    if (std::sscanf(file.c_str(), "ep%lld-ba%lld.ckp%c", &epoch, &batch,
                    &tail) == 3 &&
        tail == 't' && file.size() > 5 &&
        file.compare(file.size() - 5, 5, ".ckpt") == 0)
      found.emplace_back(batch, entry.path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}
} // namespace

CheckpointFolder::CheckpointFolder(std::string folder, int keep,
                                   bool weightsOnly)
    : folder_(std::move(folder)), keep_(keep), weightsOnly_(weightsOnly) {
  std::error_code error;
  fs::create_directories(folder_, error);
  if (error)
    fail(folder_, "cannot create checkpoint folder: " + error.message());
}

std::string CheckpointFolder::save(const State &state,
                                   const CheckpointExtras &extras) {
  std::string path = pathFor(state);
  saveCheckpoint(path, state, extras, weightsOnly_);
  // Read back before `latest` names it and older ones are pruned: the
  // checkpoint that verified last stays until a newer one does.
  verifyCheckpoint(path);
  publish(path);
  return path;
}

void CheckpointFolder::publish(const std::string &path) {
  // `latest` names the newest whole checkpoint; it too is renamed in place.
  std::string latestPath = (fs::path(folder_) / "latest").string();
  std::string line = fs::path(path).filename().string() + "\n";
  writeAtomically(latestPath, line.data(), line.size(), "'latest'");

  // Prune by scanning the folder, so checkpoints of an earlier process of
  // the same run (before an autoresume) count too. A sharded checkpoint is
  // a directory of the same name.
  if (keep_ <= 0)
    return;
  std::vector<std::pair<int64_t, std::string>> existing =
      runCheckpoints(folder_);
  for (size_t i = 0; i + size_t(keep_) < existing.size(); ++i) {
    std::error_code ignored;
    fs::remove_all(existing[i].second, ignored);
  }
}

std::string CheckpointFolder::pathFor(const State &state) const {
  return (fs::path(folder_) /
          ("ep" + std::to_string(state.timestamp.epoch) + "-ba" +
           std::to_string(state.timestamp.batch) + ".ckpt"))
      .string();
}

std::optional<std::string> CheckpointFolder::latest() const {
  std::ifstream in((fs::path(folder_) / "latest").string());
  std::string name;
  if (!in || !std::getline(in, name) || name.empty())
    return std::nullopt;
  std::string path = (fs::path(folder_) / name).string();
  if (!fs::exists(path))
    return std::nullopt;
  return path;
}

std::vector<std::string> CheckpointFolder::candidates() const {
  std::vector<std::pair<int64_t, std::string>> found = runCheckpoints(folder_);
  std::vector<std::string> paths;
  if (std::optional<std::string> named = latest())
    paths.push_back(*named);
  for (auto it = found.rbegin(); it != found.rend(); ++it)
    if (paths.empty() || it->second != paths.front())
      paths.push_back(it->second);
  return paths;
}

} // namespace composer::runtime
