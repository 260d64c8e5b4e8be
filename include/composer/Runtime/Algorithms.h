//===- Algorithms.h - The runtime algorithms, by name -----------*- C++ -*-===//
//
// Every runtime algorithm of METHODS.md registers itself from its own file
// with an AlgorithmRegistration: its recipe name, its options struct (the
// defaults, declared once) and a description of that struct's recipe keys.
// Recipes, tests and tools then create algorithms by name and read their
// options generically; nothing else lists the algorithms.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_ALGORITHMS_H
#define COMPOSER_RUNTIME_ALGORITHMS_H

#include "composer/Runtime/Algorithm.h"
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

/// Options by recipe key; a key left out keeps the algorithm's default.
using AlgorithmOptions = std::map<std::string, OptionValue, std::less<>>;

/// One recipe key of an algorithm's options.
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

/// A bad algorithm option. `options()` are the recipe keys at fault, the one
/// the message is about first: a recipe reports the error at the first of
/// them it sets, or at the algorithm when it sets none (a default is at
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

/// A registered algorithm.
struct AlgorithmInfo {
  /// The recipe key, also its Algorithm::name().
  std::string name;
  std::vector<OptionInfo> options;
  /// Builds the algorithm from options already checked by `create`.
  std::function<std::unique_ptr<Algorithm>(const AlgorithmOptions &)> build;

  const OptionInfo *findOption(std::string_view key) const;
  /// Checks `given` (every key known, required ones present, values of the
  /// option's type; integers are accepted as numbers) and builds the
  /// algorithm. Throws InvalidOption for bad options, including those the
  /// algorithm itself rejects.
  std::unique_ptr<Algorithm> create(const AlgorithmOptions &given) const;
};

/// Every algorithm linked in, sorted by name.
std::vector<const AlgorithmInfo *> getRegisteredAlgorithms();

/// The algorithm registered as `name`, or null.
const AlgorithmInfo *findAlgorithm(std::string_view name);

/// Creates the algorithm registered as `name`; throws std::invalid_argument
/// for an unknown name or bad options.
std::unique_ptr<Algorithm>
createAlgorithm(std::string_view name, const AlgorithmOptions &options = {});

/// Adds `info` to the registry; a name registered twice is a programming
/// error and throws std::logic_error.
void registerAlgorithm(AlgorithmInfo info);

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

/// Registers `AlgorithmT`, constructed from `Options`, at static
/// initialization. Defaults are those of a value-initialized `Options`:
///
///   struct CutOutOptions {
///     int64_t numHoles = 1;
///     double length = 0.5;
///   };
///   const AlgorithmRegistration<CutOut, CutOutOptions> cutOutRegistration(
///       "cutout", {{"num_holes", &CutOutOptions::numHoles, "holes per image"},
///                  {"length", &CutOutOptions::length, "side of a hole"}});
///
/// The runtime compiles its files in unity batches, so the registration's
/// name, like every internal name, must be unique among the algorithms.
/// The runtime's algorithms are linked as object files (never as archive
/// members), so no registration is dropped by the linker.
template <typename AlgorithmT, typename Options> class AlgorithmRegistration {
public:
  AlgorithmRegistration(std::string name,
                        std::initializer_list<OptionField<Options>> fields) {
    AlgorithmInfo info;
    info.name = std::move(name);
    const Options defaults{};
    for (const OptionField<Options> &field : fields)
      info.options.push_back(
          {field.key, field.doc, field.required, field.get(defaults)});
    info.build =
        [fields = std::vector<OptionField<Options>>(fields)](
            const AlgorithmOptions &given) -> std::unique_ptr<Algorithm> {
      Options options{};
      for (const OptionField<Options> &field : fields)
        if (auto it = given.find(field.key); it != given.end())
          field.set(options, it->second);
      return std::make_unique<AlgorithmT>(options);
    };
    registerAlgorithm(std::move(info));
  }
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_ALGORITHMS_H
