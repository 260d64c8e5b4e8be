//===- Time.cpp - Training time in Composer's units -----------------------===//

#include "composer/Runtime/Time.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace composer::runtime {

const char *unitSuffix(TimeUnit unit) {
  switch (unit) {
  case TimeUnit::Epoch:
    return "ep";
  case TimeUnit::Batch:
    return "ba";
  case TimeUnit::Sample:
    return "sp";
  case TimeUnit::Token:
    return "tok";
  case TimeUnit::Duration:
    return "dur";
  }
  return "?";
}

std::string Time::str() const {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%g%s", value, unitSuffix(unit));
  return buffer;
}

static void requireSameUnit(const Time &a, const Time &b, const char *op) {
  if (a.unit != b.unit)
    throw std::invalid_argument(std::string("cannot ") + op + " " + a.str() +
                                " and " + b.str() + ": units differ");
}

Time Time::operator+(const Time &other) const {
  requireSameUnit(*this, other, "add");
  return {value + other.value, unit};
}

Time Time::operator-(const Time &other) const {
  requireSameUnit(*this, other, "subtract");
  return {value - other.value, unit};
}

bool Time::operator<(const Time &other) const {
  requireSameUnit(*this, other, "compare");
  return value < other.value;
}

bool Time::operator==(const Time &other) const {
  return unit == other.unit && value == other.value;
}

Time parseTime(const std::string &text) {
  static const std::pair<const char *, TimeUnit> units[] = {
      {"ep", TimeUnit::Epoch},
      {"ba", TimeUnit::Batch},
      {"sp", TimeUnit::Sample},
      {"tok", TimeUnit::Token},
      {"dur", TimeUnit::Duration}};
  auto fail = [&]() -> Time {
    throw std::invalid_argument(
        "invalid time '" + text +
        "': expected a non-negative number followed by one of ep, ba, sp, "
        "tok, dur (e.g. '1ep', '500ba', '0.5dur')");
  };
  for (const auto &[suffix, unit] : units) {
    size_t length = std::char_traits<char>::length(suffix);
    if (text.size() <= length ||
        text.compare(text.size() - length, length, suffix) != 0)
      continue;
    std::string number = text.substr(0, text.size() - length);
    char *end = nullptr;
    double value = std::strtod(number.c_str(), &end);
    if (number.empty() || end != number.c_str() + number.size() ||
        !std::isfinite(value) || value < 0)
      return fail();
    bool integral = unit != TimeUnit::Duration && unit != TimeUnit::Epoch;
    if (integral && value != std::floor(value))
      throw std::invalid_argument("invalid time '" + text +
                                  "': " + unitSuffix(unit) +
                                  " counts must be whole numbers");
    return {value, unit};
  }
  return fail();
}

double Timestamp::get(TimeUnit unit) const {
  switch (unit) {
  case TimeUnit::Epoch:
    return double(epoch);
  case TimeUnit::Batch:
    return double(batch);
  case TimeUnit::Sample:
    return double(sample);
  case TimeUnit::Token:
    return double(token);
  case TimeUnit::Duration:
    break;
  }
  throw std::invalid_argument("a timestamp has no 'dur' counter");
}

double TimeContext::toBatches(const Time &time) const {
  switch (time.unit) {
  case TimeUnit::Epoch:
    return time.value * double(batchesPerEpoch);
  case TimeUnit::Batch:
    return time.value;
  case TimeUnit::Sample:
    return time.value * double(batchesPerEpoch) / double(samplesPerEpoch);
  case TimeUnit::Token:
    if (tokensPerEpoch <= 0)
      throw std::invalid_argument("time '" + time.str() +
                                  "' is in tokens but the data has none");
    return time.value * double(batchesPerEpoch) / double(tokensPerEpoch);
  case TimeUnit::Duration:
    if (maxDuration.unit == TimeUnit::Duration)
      throw std::invalid_argument("the run's length cannot be in 'dur'");
    return time.value * toBatches(maxDuration);
  }
  return 0;
}

double TimeContext::fractionDone(const Timestamp &now) const {
  double total = maxBatches();
  return total > 0 ? double(now.batch) / total : 1.0;
}

bool TimeContext::reached(const Timestamp &now, const Time &time) const {
  // Whole-unit counters compare exactly; fractions go through batches.
  if (time.unit != TimeUnit::Duration)
    if (time.unit != TimeUnit::Epoch || time.value == std::floor(time.value))
      return now.get(time.unit) >= time.value;
  return double(now.batch) >= std::ceil(toBatches(time) - 1e-9);
}

} // namespace composer::runtime
