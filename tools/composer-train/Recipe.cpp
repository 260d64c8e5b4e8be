//===- Recipe.cpp - composer-train recipes (YAML) -------------------------===//
//
// The YAML is read with LLVM's YAML parser into a small tree (so command-line
// overrides can replace parts of it), then read key by key. Every key read is
// marked; whatever is left unmarked at the end is an unknown key, reported
// with the keys that would have been understood there.
//
//===----------------------------------------------------------------------===//

#include "Recipe.h"

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Callbacks.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

#include <torch/script.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <unistd.h>

using namespace composer::runtime;
using llvm::SMLoc;
using llvm::StringRef;
using llvm::Twine;

namespace composer::train {
namespace {

/// A YAML value that overrides can edit.
struct Value {
  enum class Kind { Null, Scalar, Mapping, Sequence } kind = Kind::Null;
  std::string scalar;
  SMLoc loc;
  struct Entry;
  std::vector<Entry> entries;
  std::vector<Value> items;
  /// Keys a reader asked this mapping for, for unknown-key messages.
  mutable std::vector<std::string> asked;

  bool isNull() const { return kind == Kind::Null; }
  Entry *find(StringRef key);
};

struct Value::Entry {
  std::string key;
  SMLoc keyLoc;
  Value value;
  mutable bool used = false;
};

Value::Entry *Value::find(StringRef key) {
  for (Entry &entry : entries)
    if (entry.key == key)
      return &entry;
  return nullptr;
}

class Parser {
public:
  Parser(llvm::SourceMgr &sourceMgr) : sourceMgr(sourceMgr) {}

  /// Parses the buffer `id` into one Value; false after a diagnostic.
  bool parse(unsigned id, Value &result) {
    llvm::yaml::Stream stream(sourceMgr.getMemoryBuffer(id)->getMemBufferRef(),
                              sourceMgr,
                              /*ShowColors=*/false);
    bool first = true;
    for (llvm::yaml::Document &document : stream) {
      if (!first) {
        error(document.getRoot()->getSourceRange().Start,
              "a recipe is one YAML document");
        return false;
      }
      first = false;
      if (!convert(document.getRoot(), result))
        return false;
    }
    return !stream.failed() && !failed;
  }

private:
  void error(SMLoc loc, const Twine &message) {
    sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Error, message);
    failed = true;
  }

  bool convert(llvm::yaml::Node *node, Value &out) {
    if (!node)
      return false;
    out.loc = node->getSourceRange().Start;
    if (llvm::isa<llvm::yaml::NullNode>(node)) {
      out.kind = Value::Kind::Null;
      return true;
    }
    if (auto *scalar = llvm::dyn_cast<llvm::yaml::ScalarNode>(node)) {
      llvm::SmallString<32> storage;
      out.kind = Value::Kind::Scalar;
      out.scalar = scalar->getValue(storage).str();
      if (out.scalar == "~" || out.scalar == "null")
        out.kind = Value::Kind::Null;
      return true;
    }
    if (auto *block = llvm::dyn_cast<llvm::yaml::BlockScalarNode>(node)) {
      out.kind = Value::Kind::Scalar;
      out.scalar = block->getValue().str();
      return true;
    }
    if (auto *sequence = llvm::dyn_cast<llvm::yaml::SequenceNode>(node)) {
      out.kind = Value::Kind::Sequence;
      for (llvm::yaml::Node &item : *sequence) {
        out.items.emplace_back();
        if (!convert(&item, out.items.back()))
          return false;
      }
      return !failed;
    }
    if (auto *mapping = llvm::dyn_cast<llvm::yaml::MappingNode>(node)) {
      out.kind = Value::Kind::Mapping;
      for (llvm::yaml::KeyValueNode &pair : *mapping) {
        auto *key =
            llvm::dyn_cast_or_null<llvm::yaml::ScalarNode>(pair.getKey());
        if (!key) {
          error(pair.getSourceRange().Start, "keys must be plain scalars");
          return false;
        }
        llvm::SmallString<32> storage;
        std::string name = key->getValue(storage).str();
        if (out.find(name)) {
          error(key->getSourceRange().Start, "duplicate key '" + name + "'");
          return false;
        }
        Value::Entry entry{name, key->getSourceRange().Start, Value(), false};
        if (!convert(pair.getValue(), entry.value))
          return false;
        out.entries.push_back(std::move(entry));
      }
      return !failed;
    }
    error(out.loc, "anchors, aliases and tags are not supported in recipes");
    return false;
  }

  llvm::SourceMgr &sourceMgr;
  bool failed = false;
};

/// Reads typed values out of the tree, reporting at the value's location.
class Reader {
public:
  Reader(llvm::SourceMgr &sourceMgr) : sourceMgr(sourceMgr) {}

  bool failed() const { return failed_; }

  void error(SMLoc loc, const Twine &message) {
    sourceMgr.PrintMessage(loc, llvm::SourceMgr::DK_Error, message);
    failed_ = true;
  }

  /// The value at `key` of `map` (marking it read), or null if absent.
  const Value *get(const Value &map, StringRef key) {
    map.asked.push_back(key.str());
    if (map.kind != Value::Kind::Mapping)
      return nullptr;
    auto *entry = const_cast<Value &>(map).find(key);
    if (!entry)
      return nullptr;
    entry->used = true;
    return entry->value.isNull() ? nullptr : &entry->value;
  }

  const Value *require(const Value &map, StringRef key, StringRef where) {
    const Value *value = get(map, key);
    if (!value)
      error(map.loc, "missing required key '" + key + "'" +
                         (where.empty() ? "" : " in '" + where + "'"));
    return value;
  }

  /// A mapping (absent: an empty one).
  const Value &mapping(const Value &map, StringRef key) {
    static const Value empty = [] {
      Value value;
      value.kind = Value::Kind::Mapping;
      return value;
    }();
    const Value *value = get(map, key);
    if (!value)
      return empty;
    if (value->kind != Value::Kind::Mapping) {
      error(value->loc, "'" + key + "' must be a mapping");
      return empty;
    }
    return *value;
  }

  std::string string(const Value &map, StringRef key, std::string fallback) {
    const Value *value = get(map, key);
    if (!value)
      return fallback;
    if (value->kind != Value::Kind::Scalar) {
      error(value->loc, "'" + key + "' must be a string");
      return fallback;
    }
    return value->scalar;
  }

  double number(const Value &map, StringRef key, double fallback) {
    const Value *value = get(map, key);
    return value ? toNumber(*value, key, fallback) : fallback;
  }

  int64_t integer(const Value &map, StringRef key, int64_t fallback) {
    const Value *value = get(map, key);
    if (!value)
      return fallback;
    long long result;
    if (value->kind != Value::Kind::Scalar ||
        StringRef(value->scalar).getAsInteger(10, result)) {
      error(value->loc,
            "'" + key + "' must be an integer, got '" + value->scalar + "'");
      return fallback;
    }
    return result;
  }

  bool boolean(const Value &map, StringRef key, bool fallback) {
    const Value *value = get(map, key);
    if (!value)
      return fallback;
    std::string text = StringRef(value->scalar).lower();
    if (value->kind == Value::Kind::Scalar &&
        (text == "true" || text == "yes" || text == "on"))
      return true;
    if (value->kind == Value::Kind::Scalar &&
        (text == "false" || text == "no" || text == "off"))
      return false;
    error(value->loc,
          "'" + key + "' must be true or false, got '" + value->scalar + "'");
    return fallback;
  }

  Time time(const Value &map, StringRef key, Time fallback) {
    const Value *value = get(map, key);
    return value ? toTime(*value, key, fallback) : fallback;
  }

  std::vector<double> numbers(const Value &map, StringRef key) {
    return list(map, key, "numbers",
                [&](const Value &item) { return toNumber(item, key, 0); });
  }

  std::vector<Time> times(const Value &map, StringRef key) {
    return list(map, key, "times",
                [&](const Value &item) { return toTime(item, key, Time()); });
  }

  /// Reports every key nobody read, with the ones understood there.
  void reportUnknown(const Value &value, const std::string &path) {
    if (value.kind == Value::Kind::Sequence)
      for (const Value &item : value.items)
        reportUnknown(item, path);
    if (value.kind != Value::Kind::Mapping)
      return;
    for (const Value::Entry &entry : value.entries) {
      std::string where = path.empty() ? entry.key : path + "." + entry.key;
      if (!entry.used) {
        std::vector<std::string> known = value.asked;
        llvm::sort(known);
        known.erase(std::unique(known.begin(), known.end()), known.end());
        error(entry.keyLoc, "unknown key '" + entry.key + "'" +
                                (path.empty() ? "" : " in '" + path + "'") +
                                (known.empty() ? std::string()
                                               : "; expected one of: " +
                                                     llvm::join(known, ", ")));
        continue;
      }
      reportUnknown(entry.value, where);
    }
  }

private:
  template <typename Convert>
  auto list(const Value &map, StringRef key, StringRef what, Convert convert)
      -> std::vector<decltype(convert(map))> {
    std::vector<decltype(convert(map))> result;
    const Value *value = get(map, key);
    if (!value)
      return result;
    if (value->kind != Value::Kind::Sequence) {
      error(value->loc, "'" + key + "' must be a list of " + what);
      return result;
    }
    for (const Value &item : value->items)
      result.push_back(convert(item));
    return result;
  }

  double toNumber(const Value &value, StringRef key, double fallback) {
    double result;
    if (value.kind != Value::Kind::Scalar ||
        StringRef(value.scalar).getAsDouble(result)) {
      error(value.loc,
            "'" + key + "' must be a number, got '" + value.scalar + "'");
      return fallback;
    }
    return result;
  }

  Time toTime(const Value &value, StringRef key, Time fallback) {
    try {
      return parseTime(value.scalar);
    } catch (const std::invalid_argument &e) {
      error(value.loc, "'" + key + "': " + e.what());
      return fallback;
    }
  }

  llvm::SourceMgr &sourceMgr;
  bool failed_ = false;
};

/// Sets `dotted.key=value` in `root`.
bool applyOverride(llvm::SourceMgr &sourceMgr, Value &root,
                   const std::string &text, llvm::raw_ostream &errors) {
  size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    errors << "error: command-line override '" << text
           << "' must be key=value (e.g. optimizer.lr=0.05)\n";
    return false;
  }
  std::string path = text.substr(0, equals);
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text.substr(equals + 1),
                                           "<command line: " + path + ">"),
      SMLoc());
  Value value;
  Parser parser(sourceMgr);
  if (!parser.parse(id, value))
    return false;

  llvm::SmallVector<StringRef> keys;
  StringRef(path).split(keys, '.');
  Value *node = &root;
  for (auto [index, key] : llvm::enumerate(keys)) {
    if (key.empty()) {
      errors << "error: command-line override '" << text
             << "' has an empty key\n";
      return false;
    }
    if (node->kind == Value::Kind::Null)
      node->kind = Value::Kind::Mapping;
    if (node->kind != Value::Kind::Mapping) {
      errors << "error: command-line override '" << text << "': '"
             << llvm::join(llvm::ArrayRef(keys).take_front(index), ".")
             << "' is not a mapping\n";
      return false;
    }
    Value::Entry *entry = node->find(key);
    if (!entry) {
      node->entries.push_back({key.str(), value.loc, Value(), false});
      entry = &node->entries.back();
    }
    entry->keyLoc = value.loc;
    node = &entry->value;
  }
  *node = std::move(value);
  return true;
}

void emit(const Value &value, llvm::raw_ostream &out, int indent) {
  switch (value.kind) {
  case Value::Kind::Null:
    out << " null\n";
    return;
  case Value::Kind::Scalar:
    out << " " << value.scalar << "\n";
    return;
  case Value::Kind::Sequence:
    out << " [";
    for (auto [index, item] : llvm::enumerate(value.items))
      out << (index ? ", " : "") << item.scalar;
    out << "]\n";
    return;
  case Value::Kind::Mapping:
    if (indent >= 0)
      out << "\n";
    for (const Value::Entry &entry : value.entries) {
      out.indent(std::max(indent + 2, 0)) << entry.key << ":";
      emit(entry.value, out, indent + 2);
    }
    return;
  }
}

/// Turns the checked tree into runtime objects.
class Builder {
public:
  Builder(Reader &reader) : reader(reader) {}

  /// What a `*_data` mapping asks for, read (and checked) before anything
  /// is loaded.
  struct DataPlan {
    std::string key, type;
    const Value *node = nullptr, *images = nullptr, *labels = nullptr,
                *path = nullptr, *limit = nullptr;
    int64_t sequenceLength = 0, limitCount = 0;
    SyntheticSpec synthetic;
    DataLoaderOptions options;
  };

  std::optional<DataPlan> planData(const Value &map, StringRef key,
                                   bool training) {
    const Value *node = reader.get(map, key);
    if (!node)
      return std::nullopt;
    if (node->kind != Value::Kind::Mapping) {
      reader.error(node->loc, "'" + key + "' must be a mapping");
      return std::nullopt;
    }
    const Value &spec = *node;
    DataPlan plan;
    plan.key = key.str();
    plan.node = node;
    plan.type = reader.string(spec, "type", "idx");
    if (plan.type == "idx") {
      plan.images = reader.require(spec, "images", key);
      plan.labels = reader.require(spec, "labels", key);
    } else if (plan.type == "tokens") {
      plan.path = reader.require(spec, "path", key);
      plan.sequenceLength = reader.integer(spec, "seq_len", 128);
    } else if (plan.type == "synthetic") {
      SyntheticSpec &synthetic = plan.synthetic;
      synthetic.numSamples =
          reader.integer(spec, "num_samples", synthetic.numSamples);
      std::vector<double> shape = reader.numbers(spec, "shape");
      if (!shape.empty())
        synthetic.sampleShape.assign(shape.begin(), shape.end());
      synthetic.numClasses =
          reader.integer(spec, "num_classes", synthetic.numClasses);
      synthetic.vocabSize = reader.integer(spec, "vocab_size", 0);
      synthetic.seed = uint64_t(reader.integer(spec, "seed", 0));
    } else {
      reader.error(spec.loc, "unknown data type '" + plan.type + "' in '" +
                                 key + "'; expected idx, tokens or synthetic");
    }
    plan.limit = reader.get(spec, "limit");
    plan.limitCount = reader.integer(spec, "limit", 0);

    DataLoaderOptions &options = plan.options;
    options.batchSize = reader.integer(spec, "batch_size", options.batchSize);
    options.shuffle = reader.boolean(spec, "shuffle", training);
    options.dropLast = reader.boolean(spec, "drop_last", training);
    options.numWorkers = int(reader.integer(spec, "num_workers", 0));
    const Value &normalize = reader.mapping(spec, "normalize");
    options.transforms.mean = reader.numbers(normalize, "mean");
    options.transforms.std = reader.numbers(normalize, "std");
    options.transforms.randomCropPadding =
        reader.integer(spec, "random_crop_padding", 0);
    options.transforms.horizontalFlip =
        reader.boolean(spec, "horizontal_flip", false);
    if (options.batchSize <= 0)
      reader.error(spec.loc, "'batch_size' must be positive");
    if (options.numWorkers < 0)
      reader.error(spec.loc, "'num_workers' must not be negative");
    if (options.transforms.mean.size() != options.transforms.std.size())
      reader.error(normalize.loc, "'mean' and 'std' must have one value "
                                  "per channel each");
    return plan;
  }

  std::shared_ptr<DataLoader> loadData(const DataPlan &plan) {
    auto dataset = std::make_shared<Dataset>();
    const Value *blame = plan.node;
    try {
      if (plan.type == "idx") {
        blame = plan.images;
        *dataset = loadIdx(plan.images->scalar, plan.labels->scalar);
      } else if (plan.type == "tokens") {
        blame = plan.path;
        *dataset = loadTokenFile(plan.path->scalar, plan.sequenceLength);
      } else {
        *dataset = makeSynthetic(plan.synthetic);
      }
    } catch (const std::exception &e) {
      reader.error(blame->loc, e.what());
      return nullptr;
    }
    if (plan.limit) {
      if (plan.limitCount <= 0 || plan.limitCount > dataset->size()) {
        reader.error(plan.limit->loc,
                     "'limit' must be in [1, " + Twine(dataset->size()) + "]");
        return nullptr;
      }
      dataset->inputs = dataset->inputs.narrow(0, 0, plan.limitCount);
      dataset->targets = dataset->targets.narrow(0, 0, plan.limitCount);
    }
    try {
      return std::make_shared<DataLoader>(dataset, plan.options);
    } catch (const std::exception &e) {
      reader.error(plan.node->loc,
                   Twine("bad '") + plan.key + "': " + e.what());
      return nullptr;
    }
  }

  void optimizer(const Value &root, OptimizerSpec &spec) {
    const Value &map = reader.mapping(root, "optimizer");
    spec.name = reader.string(map, "name", spec.name);
    spec.lr = reader.number(map, "lr", spec.lr);
    spec.momentum = reader.number(map, "momentum", spec.momentum);
    spec.dampening = reader.number(map, "dampening", spec.dampening);
    spec.nesterov = reader.boolean(map, "nesterov", spec.nesterov);
    spec.weightDecay = reader.number(map, "weight_decay", spec.weightDecay);
    spec.eps = reader.number(map, "eps", spec.eps);
    if (const Value *betas = reader.get(map, "betas")) {
      std::vector<double> values = reader.numbers(map, "betas");
      if (values.size() != 2)
        reader.error(betas->loc, "'betas' must be two numbers");
      else
        std::tie(spec.beta1, spec.beta2) = std::pair(values[0], values[1]);
    }
    check(map, [&] {
      Optimizer(spec, {torch::zeros({1}, torch::requires_grad())});
    });
  }

  void scheduler(const Value &root, SchedulerSpec &spec) {
    const Value &map = reader.mapping(root, "scheduler");
    spec.name = reader.string(map, "name", spec.name);
    spec.alpha = reader.number(map, "alpha", spec.alpha);
    spec.gamma = reader.number(map, "gamma", spec.gamma);
    spec.stepSize = reader.time(map, "step_size", spec.stepSize);
    spec.milestones = reader.times(map, "milestones");
    spec.period = reader.time(map, "period", spec.period);
    spec.warmup = reader.time(map, "t_warmup", spec.warmup);
    spec.tMax = reader.time(map, "t_max", spec.tMax);
    spec.alphaI = reader.number(map, "alpha_i", spec.alphaI);
    spec.alphaF = reader.number(map, "alpha_f", spec.alphaF);
    spec.power = reader.number(map, "power", spec.power);
    check(map, [&] { createScheduler(spec); });
  }

  void algorithms(const Value &root,
                  std::vector<std::unique_ptr<Algorithm>> &out) {
    const Value &map = reader.mapping(root, "algorithms");
    using Factory =
        std::function<std::unique_ptr<Algorithm>(const Value &options)>;
    const std::vector<std::pair<std::string, Factory>> factories = {
        {"label_smoothing",
         [&](const Value &o) {
           return createLabelSmoothing(reader.number(o, "smoothing", 0.1));
         }},
        {"mixup",
         [&](const Value &o) {
           return createMixUp(reader.number(o, "alpha", 0.2));
         }},
        {"cutmix",
         [&](const Value &o) {
           return createCutMix(reader.number(o, "alpha", 1.0));
         }},
        {"cutout",
         [&](const Value &o) {
           return createCutOut(reader.integer(o, "num_holes", 1),
                               reader.number(o, "length", 0.5));
         }},
        {"progressive_resizing",
         [&](const Value &o) {
           return createProgressiveResizing(
               reader.number(o, "initial_scale", 0.5),
               reader.number(o, "delay_fraction", 0.5),
               reader.number(o, "finetune_fraction", 0.2),
               reader.integer(o, "size_increment", 4),
               reader.string(o, "mode", "resize"));
         }},
        {"ema",
         [&](const Value &o) {
           return createEma(
               reader.time(o, "half_life", {1000, TimeUnit::Batch}),
               reader.time(o, "update_interval", {1, TimeUnit::Batch}));
         }},
        {"gradient_clipping",
         [&](const Value &o) {
           const Value *type =
               reader.require(o, "clipping_type", "gradient_clipping");
           const Value *threshold =
               reader.require(o, "clipping_threshold", "gradient_clipping");
           return createGradientClipping(
               type ? type->scalar : "norm",
               threshold ? reader.number(o, "clipping_threshold", 1) : 1);
         }},
        {"layer_freezing",
         [&](const Value &o) {
           return createLayerFreezing(reader.number(o, "freeze_start", 0.5),
                                      reader.number(o, "freeze_level", 1.0));
         }},
    };
    for (const Value::Entry &entry : map.entries) {
      entry.used = true;
      auto factory = llvm::find_if(
          factories, [&](const auto &f) { return f.first == entry.key; });
      if (factory == factories.end()) {
        std::vector<std::string> names;
        for (const auto &f : factories)
          names.push_back(f.first);
        // One error for the name, none for its options.
        for (Value::Entry &option : const_cast<Value &>(entry.value).entries)
          option.used = true;
        reader.error(entry.keyLoc,
                     "unknown algorithm '" + entry.key +
                         "'; expected one of: " + llvm::join(names, ", "));
        continue;
      }
      static const Value noOptions = [] {
        Value value;
        value.kind = Value::Kind::Mapping;
        return value;
      }();
      const Value &options = entry.value.isNull() ? noOptions : entry.value;
      if (options.kind != Value::Kind::Mapping) {
        reader.error(entry.value.loc,
                     "options of '" + entry.key + "' must be a mapping");
        continue;
      }
      try {
        out.push_back(factory->second(options));
      } catch (const std::exception &e) {
        reader.error(entry.keyLoc, "bad '" + entry.key + "': " + e.what());
      }
    }
  }

private:
  /// Builds the runtime object once to report its own validation errors at
  /// the recipe's mapping.
  template <typename Fn> void check(const Value &map, Fn build) {
    if (reader.failed())
      return;
    try {
      build();
    } catch (const std::invalid_argument &e) {
      reader.error(map.loc, e.what());
    }
  }

  Reader &reader;
};
} // namespace

namespace {
/// Parses the recipe and applies the overrides; false after a diagnostic.
bool resolve(llvm::SourceMgr &sourceMgr, const std::string &recipePath,
             const std::vector<std::string> &overrides,
             llvm::raw_ostream &errors, Value &root) {
  sourceMgr.setDiagHandler(
      [](const llvm::SMDiagnostic &diagnostic, void *context) {
        diagnostic.print("composer-train",
                         *static_cast<llvm::raw_ostream *>(context),
                         /*ShowColors=*/false);
      },
      &errors);
  root.kind = Value::Kind::Mapping;
  if (!recipePath.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(recipePath);
    if (!buffer) {
      errors << "composer-train: error: cannot read recipe '" << recipePath
             << "': " << buffer.getError().message() << "\n";
      return false;
    }
    unsigned id = sourceMgr.AddNewSourceBuffer(std::move(*buffer), SMLoc());
    Parser parser(sourceMgr);
    if (!parser.parse(id, root))
      return false;
    if (root.isNull())
      root.kind = Value::Kind::Mapping;
    if (root.kind != Value::Kind::Mapping) {
      sourceMgr.PrintMessage(root.loc, llvm::SourceMgr::DK_Error,
                             "a recipe must be a mapping of keys to values");
      return false;
    }
  }
  for (const std::string &text : overrides)
    if (!applyOverride(sourceMgr, root, text, errors))
      return false;
  return true;
}
} // namespace

std::optional<std::string>
resolveRecipe(const std::string &recipePath,
              const std::vector<std::string> &overrides,
              llvm::raw_ostream &errors) {
  llvm::SourceMgr sourceMgr;
  Value root;
  if (!resolve(sourceMgr, recipePath, overrides, errors, root))
    return std::nullopt;
  std::string text;
  llvm::raw_string_ostream out(text);
  emit(root, out, -2);
  return text;
}

std::optional<TrainerConfig>
loadRecipe(const std::string &recipePath,
           const std::vector<std::string> &overrides, llvm::raw_ostream &errors,
           const DistributedEnv &env) {
  llvm::SourceMgr sourceMgr;
  Value root;
  if (!resolve(sourceMgr, recipePath, overrides, errors, root))
    return std::nullopt;

  Reader reader(sourceMgr);
  Builder builder(reader);
  TrainerConfig config;
  const Value *model = reader.require(root, "model", "");
  config.seed = uint64_t(reader.integer(root, "seed", 0));
  reader.string(root, "run_name", "");
  config.pipeline = reader.string(root, "pipeline", "");
  config.maxDuration = reader.time(root, "max_duration", config.maxDuration);
  config.evalInterval = reader.time(root, "eval_interval", config.evalInterval);
  config.scaleScheduleRatio = reader.number(root, "scale_schedule_ratio", 1.0);
  config.loss = reader.string(root, "loss", config.loss);
  if (config.loss != "cross_entropy" && config.loss != "mse")
    reader.error(root.loc, "unknown loss '" + config.loss +
                               "'; expected cross_entropy or mse");
  config.threads = int(reader.integer(root, "threads", 0));
  config.jitOptimize = reader.boolean(root, "jit_optimize", false);
  if (const Value *precision = reader.get(root, "precision")) {
    try {
      config.precision = parsePrecision(precision->scalar);
    } catch (const std::invalid_argument &e) {
      reader.error(precision->loc, e.what());
    }
  }
  if (const Value *device = reader.get(root, "device")) {
    try {
      config.device = torch::Device(device->scalar);
      if (config.device.is_cuda() && !torch::cuda::is_available())
        reader.error(device->loc,
                     "device '" + device->scalar +
                         "' asked for, but this LibTorch sees no CUDA "
                         "device");
    } catch (const c10::Error &) {
      reader.error(device->loc, "unknown device '" + device->scalar +
                                    "'; expected cpu, cuda or cuda:N");
    }
  }
  config.saveFolder = reader.string(root, "save_folder", "");
  config.saveInterval = reader.time(root, "save_interval", config.saveInterval);
  config.saveNumCheckpointsToKeep =
      int(reader.integer(root, "save_num_checkpoints_to_keep", -1));
  config.autoresume = reader.boolean(root, "autoresume", false);
  if (config.autoresume && config.saveFolder.empty())
    reader.error(root.loc, "'autoresume' needs a 'save_folder'");
  config.loadPath = reader.string(root, "load_path", "");
  config.findUnusedParameters =
      reader.boolean(root, "find_unused_parameters", false);
  double timeout = reader.number(root, "dist_timeout", 60);
  if (timeout <= 0)
    reader.error(root.loc, "'dist_timeout' must be positive (seconds)");
  config.distributedTimeout =
      std::chrono::milliseconds(int64_t(timeout * 1000));

  builder.optimizer(root, config.optimizer);
  builder.scheduler(root, config.scheduler);
  builder.algorithms(root, config.algorithms);

  const Value &loggers = reader.mapping(root, "loggers");
  bool progress = reader.boolean(loggers, "progress_bar", true);
  std::string jsonl = reader.string(loggers, "jsonl", "");
  std::string tensorboard = reader.string(loggers, "tensorboard", "");
  const Value &callbacks = reader.mapping(root, "callbacks");
  std::optional<int64_t> speedWindow;
  if (reader.get(callbacks, "speed_monitor")) {
    const Value &speed = reader.mapping(callbacks, "speed_monitor");
    speedWindow = reader.integer(speed, "window_size", 20);
  }

  auto trainPlan = builder.planData(root, "train_data", /*training=*/true);
  auto evalPlan = builder.planData(root, "eval_data", /*training=*/false);
  for (auto *plan : {&trainPlan, &evalPlan})
    if (*plan) {
      (*plan)->options.rank = env.rank;
      (*plan)->options.worldSize = env.worldSize;
    }
  if (!trainPlan && !reader.failed())
    reader.error(root.loc, "missing required key 'train_data'");
  // Unknown keys are reported before anything slow is loaded.
  reader.reportUnknown(root, "");
  if (reader.failed())
    return std::nullopt;
  config.trainLoader = builder.loadData(*trainPlan);
  if (evalPlan)
    config.evalLoader = builder.loadData(*evalPlan);
  if (reader.failed())
    return std::nullopt;

  if (!std::filesystem::exists(model->scalar)) {
    reader.error(model->loc, "cannot load TorchScript model '" + model->scalar +
                                 "': no such file");
    return std::nullopt;
  }
  try {
    config.model = torch::jit::load(model->scalar);
  } catch (const c10::Error &e) {
    std::string message = e.what_without_backtrace();
    reader.error(model->loc, "cannot load TorchScript model '" + model->scalar +
                                 "': " + message.substr(0, message.find('\n')));
    return std::nullopt;
  }

  // One process speaks for the group.
  if (env.rank != 0)
    return config;
  try {
    if (progress)
      config.callbacks.push_back(
          createProgressBar(std::cerr, isatty(STDERR_FILENO)));
    if (speedWindow)
      config.callbacks.push_back(createSpeedMonitor(*speedWindow));
    if (!jsonl.empty())
      config.logger.addDestination(createJsonlLogger(jsonl));
    if (!tensorboard.empty())
      config.logger.addDestination(createTensorBoardLogger(tensorboard));
  } catch (const std::exception &e) {
    reader.error(loggers.loc, e.what());
    return std::nullopt;
  }
  return config;
}

} // namespace composer::train
