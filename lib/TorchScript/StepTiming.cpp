//===- StepTiming.cpp - timing training steps of an archive ---------------===//
//
// The plugin's second entry point (TorchScriptPlugin.h): what one training
// step of an exported model costs on this machine, for composer-opt
// --report-costs. A step is what any trainer does: forward in training
// mode, a loss (the mean of the first output), backward.
//
//===----------------------------------------------------------------------===//

#include "composer/TorchScript/TorchScriptPlugin.h"

#include "RuntimeLibrary.h"

#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <chrono>

using namespace composer;

namespace {

/// The first tensor of a forward's output (a tensor, or the first one in a
/// tuple, list or dict); undefined if there is none.
at::Tensor firstTensor(const c10::IValue &value) {
  if (value.isTensor())
    return value.toTensor();
  if (value.isTuple()) {
    for (const c10::IValue &element : value.toTupleRef().elements())
      if (at::Tensor tensor = firstTensor(element); tensor.defined())
        return tensor;
  }
  if (value.isList()) {
    for (const c10::IValue &element : value.toListRef())
      if (at::Tensor tensor = firstTensor(element); tensor.defined())
        return tensor;
  }
  if (value.isGenericDict()) {
    for (const auto &entry : value.toGenericDict())
      if (at::Tensor tensor = firstTensor(entry.value()); tensor.defined())
        return tensor;
  }
  return at::Tensor();
}

} // namespace

extern "C" __attribute__((visibility("default"))) bool
composerTimeTrainingSteps(const char *path,
                          const std::vector<TensorSpec> *inputs,
                          unsigned warmup, unsigned timed,
                          std::vector<double> *seconds, std::string *error) {
  try {
    // As composer-train runs a step: in its process settings (without them,
    // glibc's page faults made short steps 1-4x slower and spread them
    // widely), with its composer:: ops registered (models lowered to them
    // load), and with `jit_optimize: false`, its default.
    static bool settled = [] {
      std::string ignored; // Without the runtime, steps run as they are.
      llvm::sys::DynamicLibrary runtime = loadRuntimeLibrary(ignored);
      if (auto apply = reinterpret_cast<void (*)()>(runtime.getAddressOfSymbol(
              "composerApplyTrainingProcessSettings")))
        apply();
      return true;
    }();
    (void)settled;
    // Restored after: the caller may be a Python process (report_costs).
    torch::jit::GraphOptimizerEnabledGuard optimize(false);
    torch::jit::Module module = torch::jit::load(path);
    module.train();
    // The same inputs for every model timed.
    at::manual_seed(0);
    std::vector<c10::IValue> arguments;
    for (const TensorSpec &spec : *inputs) {
      auto options = at::TensorOptions().dtype(
          static_cast<at::ScalarType>(static_cast<int8_t>(spec.dtype)));
      arguments.push_back(at::isFloatingType(options.dtype().toScalarType())
                              ? at::randn(spec.sizes, options)
                              : at::zeros(spec.sizes, options));
    }
    std::vector<at::Tensor> parameters;
    for (const at::Tensor &parameter : module.parameters())
      parameters.push_back(parameter);
    auto step = [&] {
      for (at::Tensor &parameter : parameters)
        parameter.mutable_grad() = at::Tensor();
      at::Tensor output = firstTensor(module.forward(arguments));
      if (!output.defined())
        throw std::runtime_error("the model's output holds no tensor");
      at::Tensor loss = output.to(at::kFloat).mean();
      if (loss.requires_grad())
        loss.backward();
    };
    for (unsigned i = 0; i < warmup; ++i)
      step();
    for (unsigned i = 0; i < timed; ++i) {
      auto start = std::chrono::steady_clock::now();
      step();
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - start;
      seconds->push_back(elapsed.count());
    }
    return true;
  } catch (const std::exception &e) {
    // LibTorch's first line, without a backtrace or source context; for
    // an error inside TorchScript code, whose first line only says so, the
    // last line (the error raised).
    std::string message = e.what();
    size_t start = message.find_first_not_of(" \n");
    message = start == std::string::npos ? "" : message.substr(start);
    std::string first = message.substr(0, message.find('\n'));
    size_t end = message.find_last_not_of(" \n");
    std::string last =
        end == std::string::npos ? "" : message.substr(0, end + 1);
    last = last.substr(last.rfind('\n') + 1);
    *error =
        first.find("failed in the TorchScript interpreter") != std::string::npos
            ? last
            : first;
    return false;
  }
}
