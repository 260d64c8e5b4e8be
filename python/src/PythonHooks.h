//===- PythonHooks.h - Python callbacks and loggers -------------*- C++ -*-===//
//
// A composer_opt.Callback reaches the engine as a runtime Callback that
// takes the GIL for the events the Python class handles (and only those).
// An exception it raises stops the run after the current batch, so the
// run's end (evaluation, checkpoint) happens, and is raised again when the
// run returns to Python. Any object with log_metrics(metrics, step) (and
// optionally log_hyperparameters(params)) is a logger destination.
//
//===----------------------------------------------------------------------===//
#ifndef COMPOSER_PYTHON_PYTHONHOOKS_H
#define COMPOSER_PYTHON_PYTHONHOOKS_H

#include "composer/Runtime/Algorithm.h"
#include "composer/Runtime/Logger.h"
#include "composer/Runtime/State.h"

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <set>

namespace composer::python {

/// What a Python callback receives as its logger: the run's logger, at the
/// state's current batch unless told a step.
struct LoggerView {
  runtime::Logger *logger;
  const runtime::State *state;
};

/// The first Python exception a callback raised during a run, kept until
/// the run returns.
struct CallbackFailure {
  std::optional<pybind11::error_already_set> error;
};

class PythonCallback final : public runtime::Callback {
public:
  /// `events`: Composer's event names (lower case) `callback` handles.
  PythonCallback(pybind11::object callback, std::set<std::string> events,
                 std::shared_ptr<CallbackFailure> failure);
  ~PythonCallback() override;
  void runEvent(runtime::Event event, runtime::State &state,
                runtime::Logger &logger) override;

private:
  pybind11::object callback_;
  std::set<runtime::Event> events_;
  std::shared_ptr<CallbackFailure> failure_;
  bool failed_ = false;
};

class PythonDestination final : public runtime::LoggerDestination {
public:
  explicit PythonDestination(pybind11::object destination);
  ~PythonDestination() override;
  void logMetrics(const std::map<std::string, double> &metrics,
                  int64_t step) override;
  void logHyperparameters(
      const std::map<std::string, std::string> &hyperparameters) override;

private:
  pybind11::object destination_;
};

/// Keeps the last value logged of every metric (trainer.state's
/// logged_metrics and eval_metrics).
class MetricRecorder final : public runtime::LoggerDestination {
public:
  explicit MetricRecorder(std::shared_ptr<std::map<std::string, double>> into)
      : into_(std::move(into)) {}
  void logMetrics(const std::map<std::string, double> &metrics,
                  int64_t step) override;

private:
  std::shared_ptr<std::map<std::string, double>> into_;
};

/// Composer's lower-case name of `event` ("batch_end").
std::string eventMethodName(runtime::Event event);

} // namespace composer::python

#endif // COMPOSER_PYTHON_PYTHONHOOKS_H
