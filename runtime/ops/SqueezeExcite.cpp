//===- SqueezeExcite.cpp - composer::squeeze_excite -----------------------===//
//
// input * sigmoid(fc2 relu(fc1 mean_hw(input))): the passes over the
// activation on the device's channel primitives (Kernels.h), the small
// fully connected layers with aten. Backend kernels, autograd, schemas and
// the C++ entry point.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "composer/Runtime/Ops.h"

#include <torch/autograd.h>

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

namespace composer::ops {
namespace impl {
namespace {

//===----------------------------------------------------------------------===//
// Backend kernels (CPU and CUDA)
//===----------------------------------------------------------------------===//

/// (output, pooled, hidden, gate): the per-(n, c) and per-(n, latent) values
/// backward needs.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor>
squeezeExciteForward(const at::Tensor &input, const at::Tensor &fc1,
                     const at::Tensor &fc2) {
  const char *op = "composer::squeeze_excite";
  at::Tensor x = activation(input, op);
  int64_t c = x.size(1);
  TORCH_CHECK(fc1.dim() == 2 && fc1.size(1) == c && fc2.dim() == 2 &&
                  fc2.size(0) == c && fc2.size(1) == fc1.size(0),
              op, ": expected fc1 (L, ", c, ") and fc2 (", c, ", L), got fc1 ",
              fc1.sizes(), " and fc2 ", fc2.sizes());
  const DeviceKernels &k = kernelsFor(x);
  at::Tensor pooled = k.channelMean(x);
  at::ScalarType acc = pooled.scalar_type();
  at::Tensor hidden = at::relu(at::linear(pooled, fc1.to(acc)));
  at::Tensor gate = at::sigmoid(at::linear(hidden, fc2.to(acc)));
  at::Tensor out = k.scaleChannels(x, gate, at::Tensor(), x.scalar_type());
  return {out, pooled, hidden, gate};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
squeezeExciteBackward(const at::Tensor &gradOutput, const at::Tensor &input,
                      const at::Tensor &fc1, const at::Tensor &fc2,
                      const at::Tensor &pooled, const at::Tensor &hidden,
                      const at::Tensor &gate) {
  at::Tensor x = activation(input, "composer::squeeze_excite_backward");
  at::Tensor dy = gradientLike(gradOutput, x).to(x.scalar_type());
  const DeviceKernels &k = kernelsFor(x);
  at::ScalarType acc = pooled.scalar_type();
  // Through the gate: y = x * g, g = sigmoid(fc2 h), h = relu(fc1 mean(x)).
  at::Tensor dGate = k.channelDot(dy, x);
  at::Tensor dLogit = dGate * gate * (1 - gate);
  at::Tensor dFc2 = dLogit.t().mm(hidden);
  at::Tensor dHidden = dLogit.mm(fc2.to(acc)) * (hidden > 0);
  at::Tensor dFc1 = dHidden.t().mm(pooled);
  at::Tensor dPooled = dHidden.mm(fc1.to(acc)) / double(x.size(2) * x.size(3));
  at::Tensor dInput = k.scaleChannels(dy, gate, dPooled, x.scalar_type());
  return {dInput, dFc1.to(fc1.scalar_type()), dFc2.to(fc2.scalar_type())};
}

} // namespace
} // namespace impl

//===----------------------------------------------------------------------===//
// Autograd
//===----------------------------------------------------------------------===//

namespace {

class SqueezeExciteFunction
    : public torch::autograd::Function<SqueezeExciteFunction> {
public:
  static at::Tensor forward(AutogradContext *ctx, const at::Tensor &input,
                            const at::Tensor &fc1, const at::Tensor &fc2) {
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto op = composerOp<decltype(impl::squeezeExciteForward)>(
        "composer::_squeeze_excite_forward");
    auto [out, pooled, hidden, gate] = op.call(input, fc1, fc2);
    ctx->save_for_backward({input, fc1, fc2, pooled, hidden, gate});
    return out;
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    static auto op = composerOp<decltype(impl::squeezeExciteBackward)>(
        "composer::squeeze_excite_backward");
    variable_list s = ctx->get_saved_variables();
    auto [dx, dFc1, dFc2] =
        op.call(grads[0], s[0], s[1], s[2], s[3], s[4], s[5]);
    return {dx, dFc1, dFc2};
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// C++ entry point
//===----------------------------------------------------------------------===//

at::Tensor squeezeExcite(const at::Tensor &input, const at::Tensor &fc1,
                         const at::Tensor &fc2) {
  static auto op =
      composerOp<decltype(squeezeExcite)>("composer::squeeze_excite");
  return op.call(input, fc1, fc2);
}

} // namespace composer::ops

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

using namespace composer::ops;

TORCH_LIBRARY_FRAGMENT(composer, m) {
  m.def("squeeze_excite(Tensor input, Tensor fc1, Tensor fc2) -> Tensor");
  m.def("_squeeze_excite_forward(Tensor input, Tensor fc1, Tensor fc2) "
        "-> (Tensor, Tensor, Tensor, Tensor)");
  m.def("squeeze_excite_backward(Tensor grad_output, Tensor input, "
        "Tensor fc1, Tensor fc2, Tensor pooled, Tensor hidden, Tensor gate) "
        "-> (Tensor, Tensor, Tensor)");
}

COMPOSER_LIBRARY_IMPL_BACKENDS(m) {
  m.impl("squeeze_excite", OutputOf<impl::squeezeExciteForward>::call);
  m.impl("_squeeze_excite_forward", impl::squeezeExciteForward);
  m.impl("squeeze_excite_backward", impl::squeezeExciteBackward);
}

TORCH_LIBRARY_IMPL(composer, Autograd, m) {
  m.impl("squeeze_excite",
         AutogradKernel<SqueezeExciteFunction, decltype(squeezeExcite)>::call);
}
