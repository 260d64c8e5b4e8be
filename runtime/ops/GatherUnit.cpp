//===- GatherUnit.cpp - composer::gather_unit, ZeRO-3's parameter gather --===//
//
// composer::gather_unit(unit, prefetch, params) returns the parameters of
// module `unit` whole. Under full_shard the installed UnitGatherer
// all-gathers them from the ranks' shards, and the op's backward gives it
// the parameters' gradients to reduce-scatter; the op's own inputs (the
// module's placeholders) get none. Without a gatherer it is the identity,
// as its aten lowering is.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Ops.h"
#include "composer/Runtime/UnitGatherer.h"

#include <torch/script.h>
#include <torch/torch.h>

#include <atomic>

namespace {

using composer::runtime::UnitGatherer;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

std::atomic<UnitGatherer *> installedGatherer{nullptr};

class GatherUnitFunction
    : public torch::autograd::Function<GatherUnitFunction> {
public:
  static variable_list forward(AutogradContext *ctx, std::string unit,
                               std::string prefetch, at::TensorList params) {
    ctx->saved_data["unit"] = unit;
    return installedGatherer.load()->gather(unit, prefetch, params);
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    const std::string &unit = ctx->saved_data["unit"].toStringRef();
    UnitGatherer *gatherer = installedGatherer.load();
    TORCH_CHECK(gatherer && gatherer->shards(unit),
                "composer::gather_unit: the sharded parameters of unit '", unit,
                "' were released before backward");
    gatherer->reduceGradients(unit, grads);
    // None for the unit's and prefetch's names and for each placeholder.
    return variable_list(2 + grads.size());
  }
};

std::vector<at::Tensor> gatherUnitOp(c10::string_view unit,
                                     c10::string_view prefetch,
                                     at::TensorList params) {
  UnitGatherer *gatherer = installedGatherer.load();
  std::string name(unit);
  if (!gatherer || !gatherer->shards(name))
    return params.vec();
  return GatherUnitFunction::apply(name, std::string(prefetch), params);
}

void gatherUnitBoxed(const c10::OperatorHandle &, torch::jit::Stack *stack) {
  auto params = torch::jit::pop(*stack).toTensorVector();
  std::string prefetch = torch::jit::pop(*stack).toStringRef();
  std::string unit = torch::jit::pop(*stack).toStringRef();
  torch::jit::push(*stack, gatherUnitOp(unit, prefetch, params));
}

} // namespace

composer::runtime::UnitGatherer *
composer::runtime::setUnitGatherer(UnitGatherer *gatherer) {
  return installedGatherer.exchange(gatherer);
}

namespace composer::ops {

std::vector<at::Tensor> gatherUnit(const std::string &unit,
                                   const std::string &prefetch,
                                   at::TensorList params) {
  static auto op = c10::Dispatcher::singleton().findSchemaOrThrow(
      "composer::gather_unit", "");
  torch::jit::Stack stack = {unit, prefetch, params.vec()};
  op.callBoxed(&stack);
  return stack.back().toTensorVector();
}

} // namespace composer::ops

TORCH_LIBRARY_FRAGMENT(composer, m) {
  m.def("gather_unit(str unit, str prefetch, Tensor[] params) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(composer, CompositeImplicitAutograd, m) {
  m.impl("gather_unit",
         torch::CppFunction::makeFromBoxedFunction<&gatherUnitBoxed>());
}
