//===- Checkpoint.cpp - composer::checkpoint, activation checkpointing ----===//
//
// composer::checkpoint(module, method, inputs, preserved) is
// `module.method(*inputs)` that keeps only its inputs for backward: forward
// runs the method without recording a graph, and backward runs it again, with
// the random state, autocast and grad modes forward had, and differentiates
// that run. So a unit's activations live only while its own backward runs, and
// random ops inside it (dropout, stochastic depth) draw what they drew in
// forward: the gradients equal those of the plain call. The parameters the
// method reads get their gradients from the rerun's backward (re-entrant, as
// torch.utils.checkpoint's), the inputs from the op's. `preserved` are the
// buffers the method writes (batch norm's running statistics): the rerun
// starts from their values before forward and leaves forward's, so a
// checkpointed unit updates them once, as the plain call does.
//
// The compiler's composer-activation-checkpointing pass outlines units into
// methods and calls them through this op; its aten lowering is the plain
// call, for PyTorch without this library.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Ops.h"

#include <ATen/autocast_mode.h>

#include <algorithm>
#include <torch/script.h>
#include <torch/torch.h>

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// The default generators of the devices `inputs` live on, and the CPU's.
std::vector<at::Generator> generatorsFor(at::TensorList inputs) {
  std::vector<at::Generator> generators = {
      at::globalContext().defaultGenerator(at::kCPU)};
  for (const at::Tensor &input : inputs)
    if (!input.is_cpu()) {
      at::Generator generator =
          at::globalContext().defaultGenerator(input.device());
      bool seen = false;
      for (const at::Generator &known : generators)
        seen = seen || known == generator;
      if (!seen)
        generators.push_back(generator);
    }
  return generators;
}

std::vector<at::Tensor> states(std::vector<at::Generator> &generators) {
  std::vector<at::Tensor> result;
  for (at::Generator &generator : generators) {
    std::lock_guard<std::mutex> lock(generator.mutex());
    result.push_back(generator.get_state());
  }
  return result;
}

void restore(std::vector<at::Generator> &generators,
             const std::vector<at::Tensor> &saved) {
  for (size_t i = 0; i < generators.size(); ++i) {
    std::lock_guard<std::mutex> lock(generators[i].mutex());
    generators[i].set_state(saved[i]);
  }
}

/// `module.method(*inputs)` as a list of tensors (a tensor, or a tuple or
/// list of them).
variable_list callMethod(const c10::IValue &module, const std::string &method,
                         at::TensorList inputs) {
  TORCH_CHECK(module.isObject(),
              "composer::checkpoint: expected a module, got ",
              module.tagKind());
  torch::jit::Object object(module.toObject());
  c10::optional<torch::jit::Method> function = object.find_method(method);
  TORCH_CHECK(function, "composer::checkpoint: the module has no method '",
              method, "'");
  std::vector<c10::IValue> arguments(inputs.begin(), inputs.end());
  c10::IValue output = (*function)(std::move(arguments));
  if (output.isTensor())
    return {output.toTensor()};
  variable_list outputs;
  auto take = [&](const c10::IValue &value) {
    TORCH_CHECK(value.isTensor(), "composer::checkpoint: method '", method,
                "' must return tensors, got ", value.tagKind());
    outputs.push_back(value.toTensor());
  };
  if (output.isTuple()) {
    for (const c10::IValue &value : output.toTupleRef().elements())
      take(value);
  } else if (output.isTensorList()) {
    for (const at::Tensor &tensor : output.toTensorVector())
      outputs.push_back(tensor);
  } else {
    take(output);
  }
  return outputs;
}

/// Autocast's switches: the rerun computes in the precisions forward did.
struct AutocastState {
  bool cpu, gpu;
  at::ScalarType cpuType, gpuType;

  static AutocastState current() {
    return {at::autocast::is_cpu_enabled(), at::autocast::is_enabled(),
            at::autocast::get_autocast_cpu_dtype(),
            at::autocast::get_autocast_gpu_dtype()};
  }
  static AutocastState
  from(const ska::flat_hash_map<std::string, c10::IValue> &saved) {
    return {saved.at("autocast_cpu").toBool(),
            saved.at("autocast_gpu").toBool(),
            saved.at("autocast_cpu_dtype").toScalarType(),
            saved.at("autocast_gpu_dtype").toScalarType()};
  }
  void save(ska::flat_hash_map<std::string, c10::IValue> &saved) const {
    saved["autocast_cpu"] = cpu;
    saved["autocast_gpu"] = gpu;
    saved["autocast_cpu_dtype"] = cpuType;
    saved["autocast_gpu_dtype"] = gpuType;
  }
  void set() const {
    at::autocast::set_cpu_enabled(cpu);
    at::autocast::set_enabled(gpu);
    at::autocast::set_autocast_cpu_dtype(cpuType);
    at::autocast::set_autocast_gpu_dtype(gpuType);
  }
};

/// Copies of `tensors`, not recorded.
std::vector<at::Tensor> copies(at::TensorList tensors) {
  at::NoGradGuard noGrad;
  std::vector<at::Tensor> result;
  for (const at::Tensor &tensor : tensors)
    result.push_back(tensor.clone());
  return result;
}

void assign(at::TensorList tensors, at::TensorList values) {
  at::NoGradGuard noGrad;
  for (size_t i = 0; i < tensors.size(); ++i)
    tensors[i].copy_(values[i]);
}

class CheckpointFunction
    : public torch::autograd::Function<CheckpointFunction> {
public:
  /// `anchor` is empty, or one leaf that requires grad when no input does:
  /// the op's outputs must require grad whenever the parameters the method
  /// reads do, or their gradients would never be computed.
  static variable_list forward(AutogradContext *ctx, c10::IValue module,
                               std::string method, at::TensorList inputs,
                               at::TensorList preserved,
                               at::TensorList anchor) {
    std::vector<at::Generator> generators = generatorsFor(inputs);
    ctx->saved_data["rng"] = c10::List<at::Tensor>(states(generators));
    ctx->saved_data["module"] = module;
    ctx->saved_data["method"] = method;
    ctx->saved_data["preserved"] = c10::List<at::Tensor>(preserved.vec());
    ctx->saved_data["preserved_before"] =
        c10::List<at::Tensor>(copies(preserved));
    ctx->saved_data["anchors"] = static_cast<int64_t>(anchor.size());
    AutocastState::current().save(ctx->saved_data);
    ctx->save_for_backward(inputs.vec());
    // Function::apply runs forward with grad mode off: no graph is kept.
    return callMethod(module, method, inputs);
  }

  static variable_list backward(AutogradContext *ctx,
                                variable_list gradOutputs) {
    variable_list saved = ctx->get_saved_variables();
    variable_list inputs;
    for (const at::Tensor &input : saved)
      inputs.push_back(input.detach().requires_grad_(input.requires_grad()));
    std::vector<at::Generator> generators = generatorsFor(inputs);
    std::vector<at::Tensor> now = states(generators);
    restore(generators, ctx->saved_data["rng"].toTensorVector());
    // The rerun starts from the state forward started from and leaves the
    // state forward left.
    std::vector<at::Tensor> preserved =
        ctx->saved_data["preserved"].toTensorVector();
    std::vector<at::Tensor> afterForward = copies(preserved);
    assign(preserved, ctx->saved_data["preserved_before"].toTensorVector());
    variable_list outputs;
    {
      torch::AutoGradMode enable(true);
      AutocastState outside = AutocastState::current();
      AutocastState::from(ctx->saved_data).set();
      outputs = callMethod(ctx->saved_data["module"],
                           ctx->saved_data["method"].toStringRef(), inputs);
      outside.set();
    }
    restore(generators, now);
    variable_list differentiable, grads;
    for (size_t i = 0; i < outputs.size() && i < gradOutputs.size(); ++i)
      if (outputs[i].requires_grad() && gradOutputs[i].defined()) {
        differentiable.push_back(outputs[i]);
        grads.push_back(gradOutputs[i]);
      }
    if (!differentiable.empty())
      torch::autograd::backward(differentiable, grads);
    // After the rerun's backward, which may read them as the rerun saw them.
    assign(preserved, afterForward);
    // None for the module and the method's name, then each input's, then
    // none for the preserved buffers and the anchor.
    variable_list result = {at::Tensor(), at::Tensor()};
    for (const at::Tensor &input : inputs)
      result.push_back(input.requires_grad() ? input.grad() : at::Tensor());
    result.resize(result.size() + preserved.size() +
                  ctx->saved_data["anchors"].toInt());
    return result;
  }
};

std::vector<at::Tensor> checkpointOp(const c10::IValue &module,
                                     c10::string_view method,
                                     at::TensorList inputs,
                                     at::TensorList preserved) {
  // Without a graph to record (evaluation) it is the plain call.
  if (!at::GradMode::is_enabled())
    return callMethod(module, std::string(method), inputs);
  std::vector<at::Tensor> anchor;
  if (std::none_of(inputs.begin(), inputs.end(), [](const at::Tensor &input) {
        return input.requires_grad();
      }))
    anchor.push_back(at::empty({0}).requires_grad_(true));
  return CheckpointFunction::apply(module, std::string(method), inputs,
                                   preserved, at::TensorList(anchor));
}

void checkpointBoxed(const c10::OperatorHandle &, torch::jit::Stack *stack) {
  auto preserved = torch::jit::pop(*stack).toTensorVector();
  auto inputs = torch::jit::pop(*stack).toTensorVector();
  std::string method = torch::jit::pop(*stack).toStringRef();
  c10::IValue module = torch::jit::pop(*stack);
  torch::jit::push(*stack, checkpointOp(module, method, inputs, preserved));
}

} // namespace

namespace composer::ops {

std::vector<at::Tensor> checkpoint(const c10::IValue &module,
                                   const std::string &method,
                                   at::TensorList inputs,
                                   at::TensorList preserved) {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow(
      "composer::checkpoint", "");
  torch::jit::Stack stack = {module, method, inputs.vec(), preserved.vec()};
  op.callBoxed(&stack);
  return stack.back().toTensorVector();
}

} // namespace composer::ops

TORCH_LIBRARY_FRAGMENT(composer, m) {
  m.def("checkpoint(Any module, str method, Tensor[] inputs, "
        "Tensor[] preserved) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(composer, CompositeImplicitAutograd, m) {
  m.impl("checkpoint",
         torch::CppFunction::makeFromBoxedFunction<&checkpointBoxed>());
}
