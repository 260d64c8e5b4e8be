//===- Logger.h - Metrics to JSONL, TensorBoard and the console -*- C++ -*-===//
#ifndef COMPOSER_RUNTIME_LOGGER_H
#define COMPOSER_RUNTIME_LOGGER_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace composer::runtime {

/// Where metrics go. Names are Composer's: "loss/train/total",
/// "metrics/eval/Accuracy", "throughput/samples_per_sec", "lr-SGD/group0".
class LoggerDestination {
public:
  virtual ~LoggerDestination();
  virtual void logMetrics(const std::map<std::string, double> &metrics,
                          int64_t step) = 0;
  virtual void logHyperparameters(
      const std::map<std::string, std::string> &hyperparameters) {}
  virtual void flush() {}
};

/// Fans metrics out to every destination.
class Logger {
public:
  void addDestination(std::unique_ptr<LoggerDestination> destination);
  void logMetrics(const std::map<std::string, double> &metrics, int64_t step);
  void
  logHyperparameters(const std::map<std::string, std::string> &hyperparameters);
  void flush();

private:
  std::vector<std::unique_ptr<LoggerDestination>> destinations_;
};

/// One JSON object per line: {"step": N, "<metric>": value, ...}. Appends, so
/// a resumed run continues the same file.
std::unique_ptr<LoggerDestination> createJsonlLogger(const std::string &path);

/// A TensorBoard event file (`events.out.tfevents.<time>.<host>`) in `dir`,
/// holding scalar summaries; TensorBoard opens it as written.
std::unique_ptr<LoggerDestination>
createTensorBoardLogger(const std::string &dir);

/// The masked CRC-32C of TFRecord framing (exposed for tests).
uint32_t maskedCrc32c(const char *data, size_t size);

} // namespace composer::runtime

#endif // COMPOSER_RUNTIME_LOGGER_H
