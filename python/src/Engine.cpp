//===- Engine.cpp - composer_opt._engine, the trainer in process ----------===//
//
// Binds the runtime's Trainer to Python: composer_opt.Trainer writes its
// arguments as a recipe (the same reader composer-train uses, so both runs
// of one job are the same run) and brings the model, its loaders, callbacks
// and loggers in process. The GIL is released while the engine runs and
// taken back only where Python runs (PythonLoader.h, PythonHooks.h).
//
//===----------------------------------------------------------------------===//

#include "PythonHooks.h"
#include "PythonLoader.h"
#include "Recipe.h"

#include "composer/Runtime/Algorithms.h"
#include "composer/Runtime/Distributed.h"
#include "composer/Runtime/Interrupt.h"
#include "composer/Runtime/ProcessSettings.h"
#include "composer/Runtime/Trainer.h"

#include "llvm/Support/raw_ostream.h"

#include <pybind11/stl.h>
#include <torch/csrc/jit/python/module_python.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/utils/pybind.h>

#include <csignal>
#include <type_traits>
#include <variant>

namespace py = pybind11;
using namespace composer::runtime;
using composer::python::CallbackFailure;
using composer::python::LoggerView;
using composer::python::PythonLoader;

namespace {

/// The signal handlers of SIGINT and SIGTERM as they were before a run, put
/// back when it returns.
class InterruptScope {
public:
  InterruptScope() {
    sigaction(SIGINT, nullptr, &interrupt_);
    sigaction(SIGTERM, nullptr, &terminate_);
    clearInterruptSignal();
    installInterruptHandlers();
  }
  ~InterruptScope() {
    sigaction(SIGINT, &interrupt_, nullptr);
    sigaction(SIGTERM, &terminate_, nullptr);
  }

private:
  struct sigaction interrupt_ = {}, terminate_ = {};
};

py::object wrapModule(const torch::jit::Module &module) {
  return py::module_::import("torch.jit._recursive")
      .attr("wrap_cpp_module")(py::cast(module));
}

py::dict timestampOf(const Timestamp &now) {
  py::dict timestamp;
  timestamp["epoch"] = now.epoch;
  timestamp["batch"] = now.batch;
  timestamp["sample"] = now.sample;
  timestamp["token"] = now.token;
  timestamp["batch_in_epoch"] = now.batchInEpoch;
  timestamp["sample_in_epoch"] = now.sampleInEpoch;
  timestamp["token_in_epoch"] = now.tokenInEpoch;
  return timestamp;
}

py::dict columnsOf(const Batch &batch) {
  py::dict columns;
  if (batch.input.defined())
    columns["input"] = batch.input;
  if (batch.target.defined())
    columns["target"] = batch.target;
  for (const auto &[name, values] : batch.columns)
    columns[py::str(name)] = values;
  return columns;
}

class Engine {
public:
  Engine(const std::string &recipe, py::object module,
         std::map<std::string, std::shared_ptr<PythonLoader>> loaders,
         std::vector<std::pair<py::object, std::set<std::string>>> callbacks,
         std::vector<py::object> loggers) {
    c10::optional<torch::jit::Module> model = torch::jit::as_module(module);
    if (!model)
      throw py::type_error("expected a torch.jit.ScriptModule");
    // What composer-train applies to itself, so both run the same steps:
    // freed host memory stays mapped, denormals flush to zero on this
    // thread (where the engine runs) unless COMPOSER_KEEP_DENORMALS is set.
    applyTrainingProcessSettings();
    composer::train::SuppliedInputs supplied;
    supplied.model = *model;
    for (auto &[key, loader] : loaders)
      supplied.loaders[key] = loader;
    DistributedEnv env = DistributedEnv::fromEnvironment();
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    std::optional<TrainerConfig> config = composer::train::loadRecipeText(
        recipe, "<composer_opt.Trainer>", supplied, errorStream, env);
    if (!config)
      throw py::value_error(llvm::StringRef(errors).rtrim().str());
    failure_ = std::make_shared<CallbackFailure>();
    for (auto &[callback, events] : callbacks)
      config->callbacks.push_back(
          std::make_unique<composer::python::PythonCallback>(callback, events,
                                                             failure_));
    metrics_ = std::make_shared<std::map<std::string, double>>();
    config->logger.addDestination(
        std::make_unique<composer::python::MetricRecorder>(metrics_));
    if (env.rank == 0)
      for (py::object &logger : loggers)
        config->logger.addDestination(
            std::make_unique<composer::python::PythonDestination>(logger));
    py::gil_scoped_release released;
    if (env.distributed())
      config->communicator =
          createCommunicator(env, config->device, config->distributedTimeout);
    // The trainer sets TorchScript's process-wide graph optimization for
    // its runs; the Python process keeps its own between them (scripting a
    // module under the trainer's setting compiles it differently).
    torch::jit::GraphOptimizerEnabledGuard processSetting(
        torch::jit::getGraphExecutorOptimize());
    trainer_ = std::make_unique<Trainer>(std::move(*config));
    trainerOptimizes_ = torch::jit::getGraphExecutorOptimize();
  }

  ~Engine() {
    py::gil_scoped_release released;
    trainer_.reset();
  }

  void fit(std::optional<std::string> duration) {
    if (duration)
      trainer_->extendDuration(parseTime(*duration));
    {
      InterruptScope interrupts;
      inEngine([&] { trainer_->fit(); });
    }
    int stopSignal = trainer_->interruptedBy();
    if (stopSignal == SIGINT) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    }
    if (stopSignal == SIGTERM) {
      PyErr_SetObject(PyExc_SystemExit,
                      py::int_(interruptExitStatus(SIGTERM)).ptr());
      throw py::error_already_set();
    }
  }

  void evaluate() {
    inEngine([&] { trainer_->evaluate(); });
  }

  py::list predict(PythonLoader &loader, int64_t subsetNumBatches) {
    std::vector<c10::IValue> outputs;
    inEngine([&] { outputs = trainer_->predict(loader, subsetNumBatches); });
    py::list result;
    for (const c10::IValue &output : outputs)
      result.append(torch::jit::toPyObject(output));
    return result;
  }

  void exportForInference(const std::string &modelPath,
                          const std::string &stateDictPath,
                          const std::set<std::string> &names) {
    inEngine(
        [&] { trainer_->exportForInference(modelPath, stateDictPath, names); });
  }

  State &state() { return trainer_->state(); }
  const std::map<std::string, double> &metrics() const { return *metrics_; }
  int64_t microbatchSize() const { return trainer_->microbatchSize(); }
  std::optional<std::string> lastCheckpoint() const {
    return trainer_->lastCheckpoint();
  }
  std::optional<std::string> resumedFrom() const {
    return trainer_->resumedFrom();
  }

private:
  /// Runs `work` in the engine: under the trainer's graph optimization,
  /// without the GIL; then raises what a Python callback raised meanwhile.
  template <typename Work> void inEngine(Work work) {
    {
      torch::jit::GraphOptimizerEnabledGuard optimizes(trainerOptimizes_);
      py::gil_scoped_release released;
      work();
    }
    raiseCallbackFailure();
  }

  void raiseCallbackFailure() {
    if (!failure_->error)
      return;
    py::error_already_set error = std::move(*failure_->error);
    failure_->error.reset();
    throw error;
  }

  std::unique_ptr<Trainer> trainer_;
  /// The graph optimization the trainer asked for (TrainerConfig).
  bool trainerOptimizes_ = false;
  std::shared_ptr<CallbackFailure> failure_;
  std::shared_ptr<std::map<std::string, double>> metrics_;
};

py::object optionDefault(const OptionValue &value) {
  return std::visit(
      [](const auto &alternative) -> py::object {
        using T = std::decay_t<decltype(alternative)>;
        if constexpr (std::is_same_v<T, Time>)
          return py::str(alternative.str());
        else
          return py::cast(alternative);
      },
      value);
}

/// Every registered runtime algorithm with its options: (name, [(key,
/// type, default or None when required, doc)]).
py::list describeAlgorithms() {
  py::list algorithms;
  for (const AlgorithmInfo *info : getRegisteredAlgorithms()) {
    py::list options;
    for (const OptionInfo &option : info->options)
      options.append(py::make_tuple(
          option.key, describeOptionType(option.type()),
          option.required ? py::none() : optionDefault(option.defaultValue),
          option.doc));
    algorithms.append(py::make_tuple(info->name, options));
  }
  return algorithms;
}

/// A run that must stop (TrainingError) or lost a peer (DistributedError)
/// raises composer_opt.TrainingError, as composer_opt.train() does.
void translateErrors() {
  py::register_exception_translator([](std::exception_ptr pointer) {
    auto raise = [](const std::exception &error) {
      py::object type =
          py::module_::import("composer_opt._train").attr("TrainingError");
      PyErr_SetString(type.ptr(), error.what());
    };
    try {
      if (pointer)
        std::rethrow_exception(pointer);
    } catch (const TrainingError &error) {
      raise(error);
    } catch (const DistributedError &error) {
      raise(error);
    }
  });
}

} // namespace

PYBIND11_MODULE(_engine, m) {
  m.doc() = "The training engine in process (composer_opt.Trainer).";
  translateErrors();
  m.def("algorithms", &describeAlgorithms);

  py::class_<PythonLoader, std::shared_ptr<PythonLoader>>(m, "Loader")
      .def(py::init<py::object, py::handle, int64_t, int64_t, int64_t,
                    std::string, std::string, bool>(),
           py::arg("feed"), py::arg("first_batch"),
           py::arg("batches_per_epoch"), py::arg("samples_per_epoch"),
           py::arg("dataset_size"), py::arg("input_name"),
           py::arg("target_name"), py::arg("prefetch"));

  py::class_<State>(m, "State")
      .def_property_readonly(
          "timestamp", [](const State &s) { return timestampOf(s.timestamp); })
      .def_property_readonly("model",
                             [](const State &s) { return wrapModule(s.model); })
      .def_property_readonly("loss",
                             [](const State &s) -> py::object {
                               if (!s.loss.defined())
                                 return py::none();
                               return py::cast(s.loss.detach());
                             })
      .def_property_readonly("outputs",
                             [](const State &s) -> py::object {
                               if (!s.outputs.defined())
                                 return py::none();
                               return py::cast(s.outputs.detach());
                             })
      .def_property_readonly("batch",
                             [](const State &s) { return columnsOf(s.batch); })
      .def_property_readonly("eval_metrics",
                             [](const State &s) { return s.evalMetrics; })
      .def_property_readonly("eval_label",
                             [](const State &s) { return s.evalLabel; })
      .def_property_readonly("rank", [](const State &s) { return s.rank; })
      .def_property_readonly("world_size",
                             [](const State &s) { return s.worldSize; })
      .def_property_readonly(
          "max_duration",
          [](const State &s) { return s.time.maxDuration.str(); })
      .def_property_readonly(
          "batches_per_epoch",
          [](const State &s) { return s.time.batchesPerEpoch; })
      .def_property_readonly("device",
                             [](const State &s) { return s.device.str(); })
      .def_property_readonly("stop_requested",
                             [](const State &s) { return s.stopRequested; })
      .def(
          "stop_training",
          [](State &s, const std::string &reason) {
            s.stopRequested = true;
            s.stopReason = reason;
          },
          py::arg("reason") = "stop_training() was called");

  py::class_<LoggerView>(m, "Logger")
      .def(
          "log_metrics",
          [](LoggerView &view, const std::map<std::string, double> &metrics,
             std::optional<int64_t> step) {
            view.logger->logMetrics(metrics,
                                    step.value_or(view.state->timestamp.batch));
          },
          py::arg("metrics"), py::arg("step") = py::none())
      .def("log_hyperparameters",
           [](LoggerView &view,
              const std::map<std::string, std::string> &hyperparameters) {
             view.logger->logHyperparameters(hyperparameters);
           });

  py::class_<Engine>(m, "Engine")
      .def(py::init<const std::string &, py::object,
                    std::map<std::string, std::shared_ptr<PythonLoader>>,
                    std::vector<std::pair<py::object, std::set<std::string>>>,
                    std::vector<py::object>>(),
           py::arg("recipe"), py::arg("model"), py::arg("loaders"),
           py::arg("callbacks"), py::arg("loggers"))
      .def("fit", &Engine::fit, py::arg("duration") = py::none())
      .def("eval", &Engine::evaluate)
      .def("export_for_inference", &Engine::exportForInference,
           py::arg("model_path"), py::arg("state_dict_path"), py::arg("names"))
      .def("predict", &Engine::predict, py::arg("loader"),
           py::arg("subset_num_batches") = 0)
      .def_property_readonly("state", &Engine::state,
                             py::return_value_policy::reference_internal)
      .def_property_readonly("logged_metrics", &Engine::metrics)
      .def_property_readonly("microbatch_size", &Engine::microbatchSize)
      .def_property_readonly("last_checkpoint", &Engine::lastCheckpoint)
      .def_property_readonly("resumed_from", &Engine::resumedFrom);
}
