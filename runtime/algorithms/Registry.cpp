//===- Registry.cpp - The runtime algorithms, by name ---------------------===//
//
// Filled at static initialization by each algorithm's AlgorithmRegistration,
// so the table lives in a function-local static: it exists before the first
// registration, whatever order the object files' initializers run in.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Algorithms.h"

#include <cmath>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace composer::runtime {
namespace {

std::map<std::string, AlgorithmInfo, std::less<>> &registry() {
  static std::map<std::string, AlgorithmInfo, std::less<>> algorithms;
  return algorithms;
}

std::string joinKeys(const std::vector<OptionInfo> &options) {
  std::string keys;
  for (const OptionInfo &option : options)
    keys += (keys.empty() ? "" : ", ") + option.key;
  return keys;
}

} // namespace

const char *describeOptionType(OptionType type) {
  // In OptionValue's order.
  static const char *const descriptions[] = {
      "a number", "an integer", "true or false", "a string", "a time"};
  static_assert(std::size(descriptions) == std::variant_size_v<OptionValue>);
  return descriptions[size_t(type)];
}

void throwInvalidOption(const std::string &algorithm, const std::string &option,
                        const std::string &problem,
                        std::vector<std::string> related) {
  related.insert(related.begin(), option);
  throw InvalidOption(std::move(related),
                      algorithm + ": " + option + " " + problem);
}

void checkOptionInterval(const std::string &algorithm,
                         const std::string &option, double value, double low,
                         double high, IntervalEnds ends) {
  bool openLow = ends == IntervalEnds::OpenLow;
  bool openHigh = ends == IntervalEnds::OpenHigh;
  if ((openLow ? value > low : value >= low) &&
      (openHigh ? value < high : value <= high))
    return;
  auto bound = [](double b) {
    // Whole numbers print without a fraction; int64_t holds them exactly
    // below 2^53 (and not infinities at all).
    if (std::isfinite(b) && std::abs(b) < 0x1p53 && b == std::trunc(b))
      return std::to_string(int64_t(b));
    std::ostringstream os;
    os << b;
    return os.str();
  };
  throwInvalidOption(algorithm, option,
                     std::string("must be in ") + (openLow ? "(" : "[") +
                         bound(low) + ", " + bound(high) +
                         (openHigh ? ")" : "]") + ", got " +
                         std::to_string(value));
}

const OptionInfo *AlgorithmInfo::findOption(std::string_view key) const {
  for (const OptionInfo &option : options)
    if (option.key == key)
      return &option;
  return nullptr;
}

std::unique_ptr<Algorithm>
AlgorithmInfo::create(const AlgorithmOptions &given) const {
  AlgorithmOptions checked;
  for (const auto &[key, value] : given) {
    const OptionInfo *option = findOption(key);
    if (!option)
      throw InvalidOption({key},
                          name + ": unknown option '" + key +
                              "'; expected one of: " + joinKeys(options));
    if (option->type() == OptionType::Number &&
        getOptionType(value) == OptionType::Integer)
      checked.emplace(key, double(std::get<int64_t>(value)));
    else if (getOptionType(value) == option->type())
      checked.emplace(key, value);
    else
      throw InvalidOption({key}, name + ": option '" + key + "' must be " +
                                     describeOptionType(option->type()));
  }
  for (const OptionInfo &option : options)
    if (option.required && !checked.count(option.key))
      throw InvalidOption({option.key}, name + ": missing required option '" +
                                            option.key + "'");
  return build(checked);
}

std::vector<const AlgorithmInfo *> getRegisteredAlgorithms() {
  std::vector<const AlgorithmInfo *> algorithms;
  for (const auto &entry : registry())
    algorithms.push_back(&entry.second);
  return algorithms;
}

const AlgorithmInfo *findAlgorithm(std::string_view name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::unique_ptr<Algorithm> createAlgorithm(std::string_view name,
                                           const AlgorithmOptions &options) {
  const AlgorithmInfo *info = findAlgorithm(name);
  if (!info) {
    std::string names;
    for (const AlgorithmInfo *algorithm : getRegisteredAlgorithms())
      names += (names.empty() ? "" : ", ") + algorithm->name;
    throw std::invalid_argument("unknown algorithm '" + std::string(name) +
                                "'; expected one of: " + names);
  }
  return info->create(options);
}

void registerAlgorithm(AlgorithmInfo info) {
  std::string name = info.name;
  if (!registry().emplace(name, std::move(info)).second)
    throw std::logic_error("algorithm '" + name + "' registered twice");
}

} // namespace composer::runtime
