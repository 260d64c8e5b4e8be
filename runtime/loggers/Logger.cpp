//===- Logger.cpp - Fan metrics out to every destination ------------------===//

#include "composer/Runtime/Logger.h"

namespace composer::runtime {

LoggerDestination::~LoggerDestination() = default;

void Logger::addDestination(std::unique_ptr<LoggerDestination> destination) {
  if (destination)
    destinations_.push_back(std::move(destination));
}

void Logger::logMetrics(const std::map<std::string, double> &metrics,
                        int64_t step) {
  if (metrics.empty())
    return;
  for (auto &destination : destinations_)
    destination->logMetrics(metrics, step);
}

void Logger::logHyperparameters(
    const std::map<std::string, std::string> &hyperparameters) {
  for (auto &destination : destinations_)
    destination->logHyperparameters(hyperparameters);
}

void Logger::flush() {
  for (auto &destination : destinations_)
    destination->flush();
}

} // namespace composer::runtime
