//===- PythonHooks.cpp - Python callbacks and loggers ---------------------===//

#include "PythonHooks.h"

#include <pybind11/stl.h>

#include <cctype>
#include <iostream>

namespace py = pybind11;
using namespace composer::runtime;

namespace composer::python {

std::string eventMethodName(Event event) {
  std::string name = eventName(event);
  for (char &c : name)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

PythonCallback::PythonCallback(py::object callback,
                               std::set<std::string> events,
                               std::shared_ptr<CallbackFailure> failure)
    : callback_(std::move(callback)), failure_(std::move(failure)) {
  for (int i = 0; i <= int(Event::PredictEnd); ++i)
    if (events.erase(eventMethodName(Event(i))))
      events_.insert(Event(i));
  if (!events.empty())
    throw py::value_error("unknown event '" + *events.begin() + "'");
}

PythonCallback::~PythonCallback() {
  py::gil_scoped_acquire gil;
  callback_ = py::object();
}

void PythonCallback::runEvent(Event event, State &state, Logger &logger) {
  if (failed_ || !events_.count(event))
    return;
  py::gil_scoped_acquire gil;
  try {
    callback_.attr("run_event")(
        eventMethodName(event),
        py::cast(&state, py::return_value_policy::reference),
        LoggerView{&logger, &state});
  } catch (py::error_already_set &error) {
    // The run ends after this batch, as a stopper ends it; the error is
    // raised again once it has.
    failed_ = true;
    if (!failure_->error)
      failure_->error = std::move(error);
    state.stopRequested = true;
    state.stopReason =
        "a callback raised an exception at " + std::string(eventName(event));
  }
}

PythonDestination::PythonDestination(py::object destination)
    : destination_(std::move(destination)) {}

PythonDestination::~PythonDestination() {
  py::gil_scoped_acquire gil;
  destination_ = py::object();
}

void PythonDestination::logMetrics(const std::map<std::string, double> &metrics,
                                   int64_t step) {
  py::gil_scoped_acquire gil;
  destination_.attr("log_metrics")(metrics, step);
}

void PythonDestination::logHyperparameters(
    const std::map<std::string, std::string> &hyperparameters) {
  py::gil_scoped_acquire gil;
  if (py::hasattr(destination_, "log_hyperparameters"))
    destination_.attr("log_hyperparameters")(hyperparameters);
}

void MetricRecorder::logMetrics(const std::map<std::string, double> &metrics,
                                int64_t) {
  for (const auto &[name, value] : metrics)
    (*into_)[name] = value;
}

} // namespace composer::python
