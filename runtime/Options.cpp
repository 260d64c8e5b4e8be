//===- Options.cpp - Runtime components built by name from options --------===//

#include "composer/Runtime/Options.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <mutex>
#include <sstream>
#include <utility>

namespace composer::runtime {
namespace {

std::string joinKeys(const std::vector<OptionInfo> &options) {
  std::string keys;
  for (const OptionInfo &option : options)
    keys += (keys.empty() ? "" : ", ") + option.key;
  return keys;
}

std::vector<std::string> &registrationConflicts() {
  static std::vector<std::string> conflicts;
  return conflicts;
}

std::mutex &registrationConflictsMutex() {
  static std::mutex mutex;
  return mutex;
}

} // namespace

void noteRegistrationConflict(std::string what) {
  std::lock_guard<std::mutex> lock(registrationConflictsMutex());
  registrationConflicts().push_back(std::move(what));
}

std::vector<std::string> takeRegistrationConflicts() {
  std::lock_guard<std::mutex> lock(registrationConflictsMutex());
  return std::exchange(registrationConflicts(), {});
}

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

OptionValues checkOptions(const std::string &name,
                          const std::vector<OptionInfo> &options,
                          const OptionValues &given) {
  OptionValues checked;
  for (const auto &[key, value] : given) {
    auto found = std::find_if(
        options.begin(), options.end(),
        [&](const OptionInfo &option) { return option.key == key; });
    const OptionInfo *option = found == options.end() ? nullptr : &*found;
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
  return checked;
}

} // namespace composer::runtime
