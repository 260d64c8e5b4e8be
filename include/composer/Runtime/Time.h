//===- Time.h - Training time in Composer's units ---------------*- C++ -*-===//
//
// Durations in recipes are written with a unit: "1ep", "500ba", "2048sp",
// "1e6tok", "0.5dur". Timestamp counts where a run is; TimeContext converts
// between units once the epoch length and the run length are known.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_RUNTIME_TIME_H
#define COMPOSER_RUNTIME_TIME_H

#include <cstdint>
#include <string>

namespace composer::runtime {

enum class TimeUnit { Epoch, Batch, Sample, Token, Duration };

/// The suffix of a unit in recipes: "ep", "ba", "sp", "tok", "dur".
const char *unitSuffix(TimeUnit unit);

struct Time {
  double value = 0;
  TimeUnit unit = TimeUnit::Epoch;

  /// "1ep", "0.5dur", ...
  std::string str() const;

  /// Same-unit arithmetic; mixing units throws std::invalid_argument.
  Time operator+(const Time &other) const;
  Time operator-(const Time &other) const;
  Time operator*(double factor) const { return {value * factor, unit}; }
  bool operator<(const Time &other) const;
  bool operator==(const Time &other) const;
};

/// Parses "<number><unit>". Throws std::invalid_argument with a message that
/// names what was expected.
Time parseTime(const std::string &text);

/// Where a run is. `*InEpoch` counters restart at every epoch.
struct Timestamp {
  int64_t epoch = 0, batch = 0, sample = 0, token = 0;
  int64_t batchInEpoch = 0, sampleInEpoch = 0, tokenInEpoch = 0;

  /// The counter of `unit`; Duration is not a counter and throws.
  double get(TimeUnit unit) const;
};

/// What converting between units needs: the epoch's length in every unit and
/// the run's length (`maxDuration`, never in `dur`).
struct TimeContext {
  int64_t batchesPerEpoch = 1;
  int64_t samplesPerEpoch = 1;
  int64_t tokensPerEpoch = 0;
  Time maxDuration{1, TimeUnit::Epoch};

  /// `time` as a (fractional) number of batches.
  double toBatches(const Time &time) const;
  /// The run's length in batches.
  double maxBatches() const { return toBatches(maxDuration); }
  /// Fraction of the run done at `now`, in [0, 1] once the run is over.
  double fractionDone(const Timestamp &now) const;
  /// Whether `now` has reached `time`.
  bool reached(const Timestamp &now, const Time &time) const;
};

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_TIME_H
