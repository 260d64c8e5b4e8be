//===- Options.h - Runtime components built by name -------------*- C++ -*-===//
//
// Algorithms and losses register themselves from their own files: a recipe
// name, an options struct (the defaults, declared once) and a description of
// that struct's recipe keys. Recipes, tests and tools create them by name and
// read their options generically; nothing else lists them.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_OPTIONS_H
#define COMPOSER_RUNTIME_OPTIONS_H

#include "composer/Runtime/Time.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace composer::runtime {

/// The value of one option. The alternatives are in OptionType's order.
using OptionValue = std::variant<double, int64_t, bool, std::string, Time>;

/// What a recipe value must be to set an option.
enum class OptionType { Number, Integer, Boolean, String, Time };

inline OptionType getOptionType(const OptionValue &value) {
  return OptionType(value.index());
}

/// "a number", "an integer", ...: what an option of `type` must be.
const char *describeOptionType(OptionType type);

/// Options by recipe key; a key left out keeps the component's default.
using OptionValues = std::map<std::string, OptionValue, std::less<>>;

/// One recipe key of a component's options.
struct OptionInfo {
  std::string key;
  std::string doc;
  /// Whether a recipe must give it; an optional one defaults to
  /// `defaultValue`.
  bool required = false;
  /// Holds the option's type, and its default when it is optional.
  OptionValue defaultValue;

  OptionType type() const { return getOptionType(defaultValue); }
};

/// A bad component option. `options()` are the recipe keys at fault, the one
/// the message is about first: a recipe reports the error at the first of
/// them it sets, or at the component when it sets none (a default is at
/// fault).
class InvalidOption : public std::invalid_argument {
public:
  InvalidOption(std::vector<std::string> options, const std::string &message)
      : std::invalid_argument(message), options_(std::move(options)) {}

  const std::vector<std::string> &options() const { return options_; }

private:
  std::vector<std::string> options_;
};

/// Throws InvalidOption for `option` of `algorithm` with the message
/// "<algorithm>: <option> <problem>", e.g. "sam: rho must be >= 0, got -1";
/// `related` are the other options of a rule between several.
[[noreturn]] void throwInvalidOption(const std::string &algorithm,
                                     const std::string &option,
                                     const std::string &problem,
                                     std::vector<std::string> related = {});

/// Which ends of its interval an option's value may take.
enum class IntervalEnds { Closed, OpenLow, OpenHigh };

/// Throws InvalidOption for `option` of `algorithm` (throwInvalidOption)
/// unless `value` lies between `low` and `high`, each included unless `ends`
/// leaves it out; NaN lies nowhere. E.g. "alibi:
/// train_sequence_length_scaling must be in (0, 1], got 0.000000".
void checkOptionInterval(const std::string &algorithm,
                         const std::string &option, double value, double low,
                         double high, IntervalEnds ends = IntervalEnds::Closed);

/// Checks `given` against `options`, the keys of component `name`: every
/// key known, required ones present, values of the option's type (integers
/// are accepted as numbers, and become numbers). Throws InvalidOption.
OptionValues checkOptions(const std::string &name,
                          const std::vector<OptionInfo> &options,
                          const OptionValues &given);

/// Binds a recipe key to a member of an options struct; the member's type
/// is the option's (one of OptionValue's alternatives).
template <typename Options> struct OptionField {
  template <typename T>
  OptionField(const char *key, T Options::*member, const char *doc,
              bool required = false)
      : key(key), doc(doc), required(required),
        get([member](const Options &options) {
          return OptionValue(options.*member);
        }),
        set([member](Options &options, const OptionValue &value) {
          options.*member = std::get<T>(value);
        }) {
    static_assert(std::is_same_v<T, double> || std::is_same_v<T, int64_t> ||
                      std::is_same_v<T, bool> ||
                      std::is_same_v<T, std::string> || std::is_same_v<T, Time>,
                  "an option is a double, int64_t, bool, std::string or Time");
  }

  const char *key;
  const char *doc;
  bool required;
  std::function<OptionValue(const Options &)> get;
  /// `value` must hold the member's type.
  std::function<void(Options &, const OptionValue &)> set;
};

/// A component registered by name: an algorithm, a loss.
template <typename Product> struct ComponentInfo {
  /// The recipe key.
  std::string name;
  std::vector<OptionInfo> options;
  /// Builds the component from options already checked by `create`.
  std::function<std::unique_ptr<Product>(const OptionValues &)> build;

  const OptionInfo *findOption(std::string_view key) const {
    for (const OptionInfo &option : options)
      if (option.key == key)
        return &option;
    return nullptr;
  }
  /// Checks `given` (checkOptions) and builds the component. Throws
  /// InvalidOption for bad options, including those the component itself
  /// rejects.
  std::unique_ptr<Product> create(const OptionValues &given) const {
    return build(checkOptions(name, options, given));
  }
};

/// The ComponentInfo of `Impl`, a `Product` constructed from `Options`, whose
/// recipe keys are `fields`. Defaults are those of a value-initialized
/// `Options`.
template <typename Product, typename Impl, typename Options>
ComponentInfo<Product>
describeComponent(std::string name,
                  std::initializer_list<OptionField<Options>> fields) {
  ComponentInfo<Product> info;
  info.name = std::move(name);
  const Options defaults{};
  for (const OptionField<Options> &field : fields)
    info.options.push_back(
        {field.key, field.doc, field.required, field.get(defaults)});
  info.build = [fields = std::vector<OptionField<Options>>(fields)](
                   const OptionValues &given) -> std::unique_ptr<Product> {
    Options options{};
    for (const OptionField<Options> &field : fields)
      if (auto it = given.find(field.key); it != given.end())
        field.set(options, it->second);
    return std::make_unique<Impl>(options);
  };
  return info;
}

/// The components of one kind by name. Each kind keeps one registry in a
/// function-local static, so that it exists before the first registration,
/// whatever order the object files' initializers run in.
/// "a, b, c": names joined for messages.
inline std::string joinNames(const std::vector<std::string> &names) {
  std::string joined;
  for (const std::string &name : names)
    joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

/// Components register at static initialization, of the runtime or of a
/// plugin while it loads, where an exception would abort the process; a
/// name registered twice is noted here instead ("algorithm 'mixup'"), for
/// whoever loads the code to report.
void noteRegistrationConflict(std::string what);
/// The conflicts noted since the last call.
std::vector<std::string> takeRegistrationConflicts();

template <typename Product> class ComponentRegistry {
public:
  /// `kind` names a component in messages: "algorithm", "loss".
  explicit ComponentRegistry(std::string kind) : kind_(std::move(kind)) {}

  /// Adds `info`. A name registered twice keeps its first component and
  /// notes the conflict (noteRegistrationConflict).
  void add(ComponentInfo<Product> info) {
    std::string name = info.name;
    if (!entries_.emplace(name, std::move(info)).second)
      noteRegistrationConflict(kind_ + " '" + name + "'");
  }
  /// The component registered as `name`, or null.
  const ComponentInfo<Product> *find(std::string_view name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  /// Every component, sorted by name.
  std::vector<const ComponentInfo<Product> *> all() const {
    std::vector<const ComponentInfo<Product> *> infos;
    for (const auto &entry : entries_)
      infos.push_back(&entry.second);
    return infos;
  }
  /// "a, b, c": the names, for messages.
  std::string names() const {
    std::vector<std::string> names;
    for (const auto &entry : entries_)
      names.push_back(entry.first);
    return joinNames(names);
  }
  /// Creates the component registered as `name`; throws
  /// std::invalid_argument for an unknown name or bad options.
  std::unique_ptr<Product> create(std::string_view name,
                                  const OptionValues &options) const {
    const ComponentInfo<Product> *info = find(name);
    if (!info)
      throw std::invalid_argument("unknown " + kind_ + " '" +
                                  std::string(name) +
                                  "'; expected one of: " + names());
    return info->create(options);
  }

private:
  std::string kind_;
  std::map<std::string, ComponentInfo<Product>, std::less<>> entries_;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_OPTIONS_H
