//===- OpsTest.cpp - composer:: fused ops against their aten compositions -===//
//
// Each op, forward and gradients, in both memory formats and in fp32, bf16
// and fp16 (the reduced-precision runs against the fp32 composition on the
// same rounded inputs), plus finite-difference gradient checks in double.
//
//===----------------------------------------------------------------------===//

#include "composer/Runtime/Ops.h"
#include "composer/Runtime/UnitGatherer.h"

#include "../../runtime/ops/Kernels.h"

#include <gtest/gtest.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <functional>

using namespace composer::ops;

namespace composer::ops::baseline {
/// The generic loops, whatever the processor (CpuDispatch.cpp picks a build).
const DeviceKernels &kernels();
} // namespace composer::ops::baseline

namespace {

const at::ScalarType kDtypes[] = {at::kFloat, at::kBFloat16, at::kHalf};
const at::MemoryFormat kFormats[] = {at::MemoryFormat::Contiguous,
                                     at::MemoryFormat::ChannelsLast};

std::string describe(at::ScalarType dtype, at::MemoryFormat format) {
  return std::string(c10::toString(dtype)) +
         (format == at::MemoryFormat::ChannelsLast ? " channels_last"
                                                   : " NCHW");
}

/// Tolerances for a result computed in `dtype` against an fp32 reference.
void expectClose(const at::Tensor &actual, const at::Tensor &expected,
                 at::ScalarType dtype, const std::string &what) {
  double tol = dtype == at::kFloat ? 1e-5 : dtype == at::kHalf ? 4e-3 : 3e-2;
  at::Tensor a = actual.to(at::kFloat), e = expected.to(at::kFloat);
  ASSERT_EQ(a.sizes(), e.sizes()) << what;
  double scale = std::max(1.0, e.abs().max().item<double>());
  double err = (a - e).abs().max().item<double>();
  EXPECT_LE(err, tol * scale) << what << ": max error " << err;
}

at::Tensor binomialFilter(int64_t channels) {
  at::Tensor row = torch::tensor({1.0f, 2.0f, 1.0f});
  return (row.unsqueeze(1) * row.unsqueeze(0) / 16)
      .expand({channels, 1, 3, 3})
      .contiguous();
}

/// A leaf in `dtype` and `format` whose values are exactly representable in
/// it, and its fp32 twin.
std::pair<at::Tensor, at::Tensor>
leafPair(at::Tensor values, at::ScalarType dtype, at::MemoryFormat format) {
  at::Tensor low = values.to(dtype).contiguous(format);
  at::Tensor ref = low.to(at::kFloat).contiguous(format);
  return {low.detach().requires_grad_(), ref.detach().requires_grad_()};
}

using Grads = std::vector<at::Tensor>;

Grads gradients(const at::Tensor &out, const std::vector<at::Tensor> &inputs,
                const at::Tensor &gradOut) {
  return torch::autograd::grad({out}, inputs, {gradOut.to(out.scalar_type())},
                               /*retain_graph=*/false);
}

at::Tensor blurReference(const at::Tensor &x, const at::Tensor &filter,
                         at::IntArrayRef stride) {
  return at::conv2d(x, filter.to(x.scalar_type()), {}, stride, 1, 1, x.size(1));
}

TEST(OpsTest, BlurPoolMatchesDepthwiseConv) {
  for (auto dtype : kDtypes)
    for (auto format : kFormats)
      for (std::vector<int64_t> stride :
           {std::vector<int64_t>{1, 1}, {2, 2}, {2, 1}}) {
        SCOPED_TRACE(describe(dtype, format) + " stride " +
                     std::to_string(stride[0]) + "x" +
                     std::to_string(stride[1]));
        torch::manual_seed(0);
        at::Tensor filter = binomialFilter(5);
        auto [x, xRef] = leafPair(torch::randn({3, 5, 9, 8}), dtype, format);
        at::Tensor y = blurPool2d(x, filter, stride);
        at::Tensor yRef = blurReference(xRef, filter, stride);
        expectClose(y, yRef, dtype, "output");
        EXPECT_EQ(y.scalar_type(), dtype);
        EXPECT_TRUE(y.is_contiguous(format));
        at::Tensor dy = torch::randn(yRef.sizes());
        expectClose(gradients(y, {x}, dy)[0], gradients(yRef, {xRef}, dy)[0],
                    dtype, "input gradient");
      }
}

/// The bits c10::BFloat16(float) gives each element of x, in NCHW order (the
/// scalar conversion, which the kernels follow: ATen's vectorized cast
/// writes NaN differently).
at::Tensor roundedBf16Bits(const at::Tensor &x) {
  at::Tensor f = x.to(at::kFloat).contiguous();
  at::Tensor bits = at::empty(f.sizes(), at::kShort);
  const float *src = f.data_ptr<float>();
  int16_t *dst = bits.data_ptr<int16_t>();
  for (int64_t i = 0; i < f.numel(); ++i)
    dst[i] = int16_t(c10::BFloat16(src[i]).x);
  return bits;
}

at::Tensor bf16Bits(const at::Tensor &x) {
  return x.contiguous().view(at::kShort);
}

TEST(OpsTest, BlurStride1InBf16IsTheFloatBlurRounded) {
  // Eighths, and a filter in sixteenths: every sum is exact in float in any
  // order, so bf16 (accumulated in float, rounded once) must equal the fp32
  // kernel's result rounded, and the generic loops' result (the baseline
  // build), bit for bit, ties and NaN included. The kernels are called
  // directly, as blur_pool2d only subsamples below 3x3. Widths cover the
  // edge-only rows (1, 2), partial vectors (short rows), full vectors and the
  // overlapped last one along W (NCHW); channels cover the same along C
  // (channels_last).
  struct Shape {
    int64_t c, h, w;
  };
  const DeviceKernels &generic = baseline::kernels();
  for (auto format : kFormats)
    for (Shape shape :
         {Shape{3, 4, 1}, Shape{3, 3, 2}, Shape{45, 5, 3}, Shape{5, 3, 7},
          Shape{2, 4, 10}, Shape{13, 3, 13}, Shape{8, 1, 21}}) {
      SCOPED_TRACE(describe(at::kBFloat16, format) + " " +
                   std::to_string(shape.c) + "x" + std::to_string(shape.h) +
                   "x" + std::to_string(shape.w));
      torch::manual_seed(3);
      std::vector<int64_t> sizes{2, shape.c, shape.h, shape.w};
      at::Tensor filter =
          torch::randint(-4, 5, {shape.c, 1, 3, 3}).to(at::kFloat) / 16;
      at::Tensor values = torch::randint(-64, 65, sizes).to(at::kFloat) / 8;
      values.view(-1)[values.numel() / 2] = NAN;
      at::Tensor dy = torch::randint(-64, 65, sizes).to(at::kFloat) / 8;
      at::Tensor x = values.to(at::kBFloat16).contiguous(format);
      at::Tensor g = dy.to(at::kBFloat16).contiguous(format);
      auto forward = [&](const DeviceKernels &k, const at::Tensor &in) {
        return k.blur(in, filter, {1, 1});
      };
      auto backward = [&](const DeviceKernels &k, const at::Tensor &in) {
        return k.blurBackward(in, filter, shape.h, shape.w, {1, 1});
      };
      // The bf16 result of `run` on `in`: in `format`, the fp32 result
      // rounded, and the generic loops' result.
      auto expectExact = [&](auto run, const at::Tensor &in, const char *what) {
        at::Tensor out = run(cpuKernels(), in);
        EXPECT_TRUE(out.is_contiguous(format)) << what;
        EXPECT_TRUE(
            at::equal(bf16Bits(out),
                      roundedBf16Bits(run(cpuKernels(), in.to(at::kFloat)))))
            << what << " against fp32";
        EXPECT_TRUE(at::equal(bf16Bits(out), bf16Bits(run(generic, in))))
            << what << " against the generic loops";
      };
      expectExact(forward, x, "output");
      expectExact(backward, g, "input gradient");
    }
}

TEST(OpsTest, BlurPoolSubsamplesInputsSmallerThanTheFilter) {
  at::Tensor x = torch::randn({2, 4, 2, 5}).requires_grad_();
  at::Tensor y = blurPool2d(x, binomialFilter(4), {2, 2});
  EXPECT_TRUE(at::equal(y, x.detach().slice(2, 0, 2, 2).slice(3, 0, 5, 2)));
  at::Tensor dx = gradients(y, {x}, torch::ones(y.sizes()))[0];
  EXPECT_EQ(dx.sum().item<double>(), double(y.numel()));
}

TEST(OpsTest, BlurMaxPoolMatchesMaxPoolThenBlur) {
  struct Pool {
    int64_t kernel, padding, dilation;
  };
  for (auto dtype : kDtypes)
    for (auto format : kFormats)
      for (Pool pool : {Pool{3, 1, 1}, Pool{2, 0, 1}, Pool{3, 1, 2}}) {
        SCOPED_TRACE(describe(dtype, format) + " kernel " +
                     std::to_string(pool.kernel) + " dilation " +
                     std::to_string(pool.dilation));
        torch::manual_seed(1);
        at::Tensor filter = binomialFilter(6);
        // Distinct values: the argmax is unambiguous in every precision.
        at::Tensor values =
            (torch::randperm(2 * 6 * 11 * 10).to(at::kFloat) / 64 - 10)
                .view({2, 6, 11, 10});
        auto [x, xRef] = leafPair(values, dtype, format);
        std::vector<int64_t> k{pool.kernel, pool.kernel},
            p{pool.padding, pool.padding}, d{pool.dilation, pool.dilation};
        at::Tensor y = blurMaxPool2d(x, filter, k, p, d, {2, 2});
        at::Tensor yRef = blurReference(at::max_pool2d(xRef, k, {1, 1}, p, d),
                                        filter, {2, 2});
        expectClose(y, yRef, dtype, "output");
        EXPECT_TRUE(y.is_contiguous(format));
        at::Tensor dy = torch::randn(yRef.sizes());
        expectClose(gradients(y, {x}, dy)[0], gradients(yRef, {xRef}, dy)[0],
                    dtype, "input gradient");
      }
}

/// The aten composition the aten lowering emits for ghost batch norm.
at::Tensor ghostReference(const at::Tensor &x, const at::Tensor &weight,
                          const at::Tensor &bias, const at::Tensor &mean,
                          const at::Tensor &var, bool training, double momentum,
                          int64_t ghost) {
  if (!training)
    return at::batch_norm(x, weight, bias, mean, var, false, momentum, 1e-5,
                          false);
  // Composer's ghost batches: torch.chunk into ceil(n / ghost) pieces.
  int64_t numChunks = (x.size(0) + ghost - 1) / ghost;
  std::vector<at::Tensor> chunks = x.chunk(numChunks);
  std::vector<at::Tensor> normalized;
  for (const at::Tensor &chunk : chunks)
    normalized.push_back(at::batch_norm(chunk, weight, bias, mean, var, true,
                                        momentum / numChunks, 1e-5, false));
  return at::cat(normalized);
}

TEST(OpsTest, GhostBatchNormMatchesChunkedBatchNorm) {
  for (auto dtype : kDtypes)
    for (auto format : kFormats)
      for (bool training : {true, false}) {
        SCOPED_TRACE(describe(dtype, format) +
                     (training ? " training" : " eval"));
        torch::manual_seed(2);
        // 13 samples in ghost batches of 6: Composer's torch.chunk into 3
        // cuts 5, 5, 3 (not 6, 6, 1).
        auto [x, xRef] =
            leafPair(torch::randn({13, 6, 5, 4}) * 3 + 1, dtype, format);
        at::Tensor w0 = torch::rand({6}) + 0.5, b0 = torch::randn({6});
        at::Tensor w = w0.clone().requires_grad_(),
                   b = b0.clone().requires_grad_();
        at::Tensor wRef = w0.clone().requires_grad_(),
                   bRef = b0.clone().requires_grad_();
        at::Tensor mean = torch::randn({6}), var = torch::rand({6}) + 0.5;
        at::Tensor meanRef = mean.clone(), varRef = var.clone();
        at::Tensor y =
            ghostBatchNorm(x, w, b, mean, var, training, 0.1, 1e-5, 6);
        at::Tensor yRef =
            ghostReference(xRef, wRef, bRef, meanRef, varRef, training, 0.1, 6);
        expectClose(y, yRef, dtype, "output");
        EXPECT_TRUE(y.is_contiguous(format));
        expectClose(mean, meanRef, at::kFloat, "running mean");
        expectClose(var, varRef, at::kFloat, "running var");
        at::Tensor dy = torch::randn(yRef.sizes());
        Grads g = gradients(y, {x, w, b}, dy);
        Grads gRef = gradients(yRef, {xRef, wRef, bRef}, dy);
        expectClose(g[0], gRef[0], dtype, "input gradient");
        // Weight and bias gradients sum over the whole batch.
        expectClose(g[1], gRef[1], dtype == at::kFloat ? dtype : at::kBFloat16,
                    "weight gradient");
        expectClose(g[2], gRef[2], dtype, "bias gradient");
      }
}

TEST(OpsTest, GhostBatchNormWithoutAffineOrRunningStats) {
  torch::manual_seed(3);
  at::Tensor x = torch::randn({8, 3, 4, 4}).requires_grad_();
  at::Tensor xRef = x.detach().clone().requires_grad_();
  at::Tensor y = ghostBatchNorm(x, c10::nullopt, c10::nullopt, c10::nullopt,
                                c10::nullopt, false, 0.1, 1e-5, 4);
  // Without running statistics even eval normalizes with the batch's.
  at::Tensor yRef =
      at::batch_norm(xRef, {}, {}, {}, {}, true, 0.1, 1e-5, false);
  expectClose(y, yRef, at::kFloat, "output");
  at::Tensor dy = torch::randn(y.sizes());
  expectClose(gradients(y, {x}, dy)[0], gradients(yRef, {xRef}, dy)[0],
              at::kFloat, "input gradient");
}

TEST(OpsTest, GhostBatchNormOnBatchNorm1dInputs) {
  torch::manual_seed(4);
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{10, 7}, std::vector<int64_t>{10, 7, 5}}) {
    at::Tensor x = torch::randn(shape).requires_grad_();
    at::Tensor xRef = x.detach().clone().requires_grad_();
    at::Tensor mean = torch::zeros({7}), var = torch::ones({7});
    at::Tensor meanRef = mean.clone(), varRef = var.clone();
    at::Tensor y = ghostBatchNorm(x, c10::nullopt, c10::nullopt, mean, var,
                                  true, 0.1, 1e-5, 4);
    at::Tensor yRef =
        ghostReference(xRef, {}, {}, meanRef, varRef, true, 0.1, 4);
    expectClose(y, yRef, at::kFloat, "output");
    expectClose(var, varRef, at::kFloat, "running var");
    at::Tensor dy = torch::randn(y.sizes());
    expectClose(gradients(y, {x}, dy)[0], gradients(yRef, {xRef}, dy)[0],
                at::kFloat, "input gradient");
  }
}

TEST(OpsTest, GhostBatchNormCastAwareEqualsCastThenNormalize) {
  for (auto dtype : {at::kBFloat16, at::kHalf})
    for (auto format : kFormats) {
      SCOPED_TRACE(describe(dtype, format));
      torch::manual_seed(5);
      at::Tensor low = torch::randn({8, 4, 6, 6}).to(dtype).contiguous(format);
      at::Tensor x = low.clone().requires_grad_();
      at::Tensor xRef = low.clone().requires_grad_();
      at::Tensor w = torch::rand({4}) + 0.5, b = torch::randn({4});
      at::Tensor mean = torch::zeros({4}), var = torch::ones({4});
      at::Tensor meanRef = mean.clone(), varRef = var.clone();
      at::Tensor y =
          ghostBatchNorm(x, w, b, mean, var, true, 0.1, 1e-5, 4, at::kFloat);
      EXPECT_EQ(y.scalar_type(), at::kFloat);
      at::Tensor yRef = ghostReference(xRef.to(at::kFloat), w, b, meanRef,
                                       varRef, true, 0.1, 4);
      expectClose(y, yRef, at::kFloat, "output");
      expectClose(mean, meanRef, at::kFloat, "running mean");
      at::Tensor dy = torch::randn(y.sizes());
      at::Tensor dx = gradients(y, {x}, dy)[0];
      EXPECT_EQ(dx.scalar_type(), dtype);
      // Both gradients are computed in fp32 and rounded once.
      expectClose(dx, gradients(yRef, {xRef}, dy)[0], dtype, "input gradient");
    }
}

at::Tensor squeezeExciteReference(const at::Tensor &x, const at::Tensor &fc1,
                                  const at::Tensor &fc2) {
  at::Tensor gate =
      at::sigmoid(at::linear(at::relu(at::linear(x.mean({2, 3}), fc1)), fc2));
  return x * gate.unsqueeze(-1).unsqueeze(-1);
}

TEST(OpsTest, SqueezeExciteMatchesComposition) {
  for (auto dtype : kDtypes)
    for (auto format : kFormats) {
      SCOPED_TRACE(describe(dtype, format));
      torch::manual_seed(6);
      auto [x, xRef] = leafPair(torch::randn({4, 12, 7, 6}), dtype, format);
      at::Tensor fc1Init = torch::randn({5, 12}) * 0.3,
                 fc2Init = torch::randn({12, 5}) * 0.3;
      at::Tensor fc1 = fc1Init.clone().requires_grad_(),
                 fc2 = fc2Init.clone().requires_grad_();
      at::Tensor fc1Ref = fc1Init.clone().requires_grad_(),
                 fc2Ref = fc2Init.clone().requires_grad_();
      // fp32 weights on reduced-precision activations, as under autocast.
      at::Tensor y = squeezeExcite(x, fc1, fc2);
      at::Tensor yRef = squeezeExciteReference(xRef, fc1Ref, fc2Ref);
      EXPECT_EQ(y.scalar_type(), dtype);
      EXPECT_TRUE(y.is_contiguous(format));
      expectClose(y, yRef, dtype, "output");
      at::Tensor dy = torch::randn(yRef.sizes());
      Grads g = gradients(y, {x, fc1, fc2}, dy);
      Grads gRef = gradients(yRef, {xRef, fc1Ref, fc2Ref}, dy);
      expectClose(g[0], gRef[0], dtype, "input gradient");
      expectClose(g[1], gRef[1], dtype, "fc1 gradient");
      expectClose(g[2], gRef[2], dtype, "fc2 gradient");
    }
}

/// Central differences of sum(f(inputs) * probe) against autograd, in double.
void gradcheck(const std::function<at::Tensor(const Grads &)> &f,
               Grads inputs) {
  for (at::Tensor &t : inputs)
    t = t.to(at::kDouble).detach().requires_grad_();
  at::Tensor probe = torch::randn(f(inputs).sizes(), at::kDouble);
  Grads analytic = torch::autograd::grad({(f(inputs) * probe).sum()}, inputs);
  const double eps = 1e-6;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // Perturb storage in place (channels_last tensors do not view as 1-D);
    // `numeric` has the input's strides, so storage positions line up.
    int64_t count = inputs[i].numel();
    at::Tensor flat = inputs[i].detach().as_strided({count}, {1});
    at::Tensor numeric = at::zeros_like(inputs[i]);
    at::Tensor numericFlat = numeric.as_strided({count}, {1});
    for (int64_t j = 0; j < flat.numel(); ++j) {
      torch::NoGradGuard noGrad;
      double saved = flat[j].item<double>();
      flat[j] = saved + eps;
      double plus = (f(inputs) * probe).sum().item<double>();
      flat[j] = saved - eps;
      double minus = (f(inputs) * probe).sum().item<double>();
      flat[j] = saved;
      numericFlat[j] = (plus - minus) / (2 * eps);
    }
    double err = (analytic[i] - numeric).abs().max().item<double>();
    EXPECT_LT(err, 1e-6) << "input " << i;
  }
}

TEST(OpsTest, GradcheckInDouble) {
  torch::manual_seed(7);
  for (auto format : kFormats) {
    SCOPED_TRACE(describe(at::kDouble, format));
    at::Tensor filter = binomialFilter(3).to(at::kDouble);
    at::Tensor x = torch::randn({2, 3, 5, 6}).contiguous(format);
    gradcheck(
        [&](const Grads &in) {
          return blurPool2d(in[0], filter, {2, 2});
        },
        {x});
    at::Tensor distinct = (torch::randperm(2 * 3 * 5 * 6).to(at::kFloat) / 8)
                              .view({2, 3, 5, 6})
                              .contiguous(format);
    gradcheck(
        [&](const Grads &in) {
          return blurMaxPool2d(in[0], filter, {3, 3}, {1, 1}, {1, 1}, {2, 2});
        },
        {distinct});
    gradcheck(
        [&](const Grads &in) {
          return ghostBatchNorm(in[0], in[1], in[2], c10::nullopt, c10::nullopt,
                                true, 0.1, 1e-5, 2);
        },
        {x, torch::rand({3}) + 0.5, torch::randn({3})});
    gradcheck(
        [&](const Grads &in) { return squeezeExcite(in[0], in[1], in[2]); },
        {x, torch::randn({2, 3}), torch::randn({3, 2})});
  }
}

/// Resolves `composer` the way a saved module's `ops.composer` resolves: to
/// the operator namespace.
struct ComposerOpsResolver : torch::jit::Resolver {
  std::shared_ptr<torch::jit::SugaredValue>
  resolveValue(const std::string &name, torch::jit::GraphFunction &fn,
               const torch::jit::SourceRange &loc) override {
    if (name == "composer")
      return std::make_shared<torch::jit::BuiltinModule>("composer");
    return torch::jit::nativeResolver()->resolveValue(name, fn, loc);
  }
  c10::TypePtr resolveType(const std::string &,
                           const torch::jit::SourceRange &) override {
    return nullptr;
  }
};

TEST(OpsTest, CallableFromTorchScript) {
  torch::jit::CompilationUnit unit;
  unit.define(c10::nullopt, R"JIT(
def blur(x, w):
    return composer.blur_pool2d(x, w, [2, 2])
)JIT",
              std::make_shared<ComposerOpsResolver>(), nullptr);
  at::Tensor x = torch::randn({1, 2, 6, 6});
  at::Tensor filter = binomialFilter(2);
  at::Tensor y = unit.run_method("blur", x, filter).toTensor();
  EXPECT_TRUE(at::allclose(y, blurReference(x, filter, {2, 2})));
}

/// A module whose `unit` reads a parameter and draws a dropout mask, called
/// plainly and through composer::checkpoint.
torch::jit::Module checkpointedModule() {
  torch::jit::Module module("__torch__.CheckpointTest");
  module.register_parameter("weight", torch::randn({6, 6}).requires_grad_(),
                            false);
  module.register_buffer("count", torch::zeros({}));
  module.define(R"JIT(
def stateful(self, x: Tensor) -> Tensor:
    self.count.add_(1.0)
    return torch.matmul(x, self.weight) * self.count
def stateful_plain(self, x: Tensor) -> Tensor:
    return self.stateful(x)
def stateful_checked(self, x: Tensor) -> Tensor:
    return composer.checkpoint(self, "stateful", [x], [self.count])[0]
def unit(self, x: Tensor) -> Tuple[Tensor, Tensor]:
    h = torch.dropout(torch.tanh(torch.matmul(x, self.weight)), 0.5, True)
    return h, h * 2.0
def plain(self, x: Tensor) -> Tensor:
    a, b = self.unit(x)
    return a + b
def checked(self, x: Tensor) -> Tensor:
    outputs = composer.checkpoint(self, "unit", [x], [])
    return outputs[0] + outputs[1]
def missing(self, x: Tensor) -> Tensor:
    return composer.checkpoint(self, "absent", [x], [])[0]
)JIT",
                std::make_shared<ComposerOpsResolver>());
  return module;
}

TEST(CheckpointOpTest, GradientsEqualThePlainCallWithDropout) {
  torch::jit::Module module = checkpointedModule();
  at::Tensor weight = module.attr("weight").toTensor();
  at::Tensor x = torch::randn({4, 6});
  auto run = [&](const char *method) {
    at::Tensor input = x.clone().requires_grad_();
    torch::manual_seed(7);
    at::Tensor out = module.run_method(method, input).toTensor();
    at::Tensor afterForward = torch::rand({3});
    (out * out).sum().backward();
    at::Tensor afterBackward = torch::rand({3});
    at::Tensor weightGrad = weight.grad().clone();
    weight.mutable_grad().reset();
    return std::make_tuple(out, input.grad(), weightGrad, afterForward,
                           afterBackward);
  };
  auto [plain, plainInputGrad, plainWeightGrad, plainAfterForward,
        plainAfterBackward] = run("plain");
  auto [checked, inputGrad, weightGrad, afterForward, afterBackward] =
      run("checked");
  // Dropout was on, and the rerun drew the same mask.
  EXPECT_GT((plain == 0).sum().item<int64_t>(), 0);
  EXPECT_TRUE(torch::equal(checked, plain));
  EXPECT_TRUE(torch::equal(inputGrad, plainInputGrad));
  EXPECT_TRUE(torch::equal(weightGrad, plainWeightGrad));
  // Forward draws as the plain call does; the rerun leaves the stream as
  // it found it.
  EXPECT_TRUE(torch::equal(afterForward, plainAfterForward));
  EXPECT_TRUE(torch::equal(afterBackward, plainAfterBackward));
  // What backward keeps is the op's node with the inputs, not the unit's.
  ASSERT_TRUE(checked.grad_fn());
  EXPECT_EQ(checked.grad_fn()->next_edges().size(), 2u);
  EXPECT_NE(checked.grad_fn()->next_edges()[0].function->name().find(
                "CheckpointFunction"),
            std::string::npos);
}

/// The gradient of `weight` for `method` run on `x` (which may not require
/// grad), and what the module's count buffer holds afterwards.
std::pair<at::Tensor, double> weightGradient(torch::jit::Module &module,
                                             const char *method,
                                             const at::Tensor &x) {
  at::Tensor weight = module.attr("weight").toTensor();
  module.attr("count").toTensor().zero_();
  at::Tensor out = module.run_method(method, x).toTensor();
  (out * out).sum().backward();
  at::Tensor grad = weight.grad().clone();
  weight.mutable_grad().reset();
  return {grad, module.attr("count").toTensor().item<double>()};
}

TEST(CheckpointOpTest, ParametersGetGradientsWhenNoInputNeedsOne) {
  torch::jit::Module module = checkpointedModule();
  at::Tensor x = torch::randn({4, 6});
  auto [plain, plainCount] = weightGradient(module, "stateful_plain", x);
  auto [checked, count] = weightGradient(module, "stateful_checked", x);
  ASSERT_TRUE(checked.defined());
  EXPECT_TRUE(torch::equal(checked, plain));
}

TEST(CheckpointOpTest, TheRerunStartsFromThePreservedBuffers) {
  torch::jit::Module module = checkpointedModule();
  at::Tensor x = torch::randn({4, 6}).requires_grad_();
  auto [plain, plainCount] = weightGradient(module, "stateful_plain", x);
  auto [checked, count] = weightGradient(module, "stateful_checked", x);
  // A rerun that started from forward's count would scale by 2, and leave
  // 2 behind.
  EXPECT_EQ(plainCount, 1.0);
  EXPECT_EQ(count, 1.0);
  EXPECT_TRUE(torch::equal(checked, plain));
}

TEST(CheckpointOpTest, WithoutGradModeItIsThePlainCall) {
  torch::jit::Module module = checkpointedModule();
  at::NoGradGuard noGrad;
  at::Tensor out =
      module.run_method("stateful_checked", torch::randn({4, 6})).toTensor();
  EXPECT_FALSE(out.grad_fn());
  EXPECT_EQ(module.attr("count").toTensor().item<double>(), 1.0);
}

TEST(CheckpointOpTest, AMissingMethodIsNamed) {
  torch::jit::Module module = checkpointedModule();
  try {
    module.run_method("missing", torch::randn({2, 6}));
    FAIL() << "no error";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("has no method 'absent'"),
              std::string::npos)
        << e.what();
  }
}

/// Holds unit "w" whole, as a one-rank full_shard would, and counts what
/// the op asks of it.
class WholeUnitGatherer final : public composer::runtime::UnitGatherer {
public:
  explicit WholeUnitGatherer(at::Tensor whole) : whole(std::move(whole)) {}

  bool shards(const std::string &unit) const override { return unit == "w"; }
  std::vector<at::Tensor> gather(const std::string &, const std::string &,
                                 at::TensorList params) override {
    EXPECT_EQ(params.size(), 1u);
    ++gathers;
    return {whole.clone()};
  }
  void reduceGradients(const std::string &, at::TensorList grads) override {
    ++reductions;
    reduced = reduced.defined() ? reduced + grads[0] : grads[0].clone();
  }

  at::Tensor whole, reduced;
  int gathers = 0, reductions = 0;
};

/// Installs a gatherer for one scope.
struct InstalledGatherer {
  explicit InstalledGatherer(composer::runtime::UnitGatherer *gatherer)
      : previous(composer::runtime::setUnitGatherer(gatherer)) {}
  ~InstalledGatherer() { composer::runtime::setUnitGatherer(previous); }
  composer::runtime::UnitGatherer *previous;
};

/// A unit that gathers its weight, as composer-shard-params rewrites one.
torch::jit::Module gatheringModule(at::Tensor weight) {
  torch::jit::Module module("__torch__.GatherUnitTest");
  module.register_parameter("weight", weight.requires_grad_(), false);
  module.define(R"JIT(
def unit(self, x: Tensor) -> Tensor:
    w = composer.gather_unit("w", "", [self.weight])[0]
    return torch.dropout(torch.tanh(torch.matmul(x, w)), 0.5, True)
def plain(self, x: Tensor) -> Tensor:
    return self.unit(x)
def checked(self, x: Tensor) -> Tensor:
    return composer.checkpoint(self, "unit", [x], [])[0]
)JIT",
                std::make_shared<ComposerOpsResolver>());
  return module;
}

TEST(GatherUnitOpTest, WithoutAGathererItIsTheIdentity) {
  at::Tensor weight = torch::randn({6, 6}).requires_grad_();
  std::vector<at::Tensor> out = gatherUnit("w", "", {weight});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].is_same(weight));
}

TEST(GatherUnitOpTest, GathersInForwardAndTheRerunAndReducesOnce) {
  at::Tensor whole = torch::randn({6, 6});
  at::Tensor x = torch::randn({4, 6});
  // The unsharded model: the op passes the weight through.
  torch::jit::Module reference = gatheringModule(whole.clone());
  torch::manual_seed(3);
  at::Tensor expected = reference.run_method("plain", x).toTensor();
  (expected * expected).sum().backward();
  at::Tensor expectedGrad = reference.attr("weight").toTensor().grad();
  ASSERT_TRUE(expectedGrad.defined());

  for (const char *method : {"plain", "checked"}) {
    SCOPED_TRACE(method);
    // Sharded: the module holds a placeholder, which gets no gradient.
    torch::jit::Module sharded = gatheringModule(torch::empty({0}));
    WholeUnitGatherer gatherer(whole);
    InstalledGatherer installed(&gatherer);
    torch::manual_seed(3);
    at::Tensor out = sharded.run_method(method, x).toTensor();
    (out * out).sum().backward();
    EXPECT_TRUE(torch::equal(out, expected));
    // Checkpointed, backward's rerun gathers again.
    EXPECT_EQ(gatherer.gathers, std::string(method) == "checked" ? 2 : 1);
    EXPECT_EQ(gatherer.reductions, 1);
    ASSERT_TRUE(gatherer.reduced.defined());
    EXPECT_TRUE(torch::equal(gatherer.reduced, expectedGrad));
    EXPECT_FALSE(sharded.attr("weight").toTensor().grad().defined());
  }
}

TEST(GatherUnitOpTest, AUnitTheGathererDoesNotShardPassesThrough) {
  WholeUnitGatherer gatherer(torch::randn({6, 6}));
  InstalledGatherer installed(&gatherer);
  at::Tensor weight = torch::randn({6, 6}).requires_grad_();
  std::vector<at::Tensor> out = gatherUnit("other", "", {weight});
  EXPECT_TRUE(out[0].is_same(weight));
  EXPECT_EQ(gatherer.gathers, 0);
}

TEST(OpsTest, BadInputsAreDiagnosed) {
  at::Tensor x = torch::randn({1, 4, 8, 8});
  EXPECT_THROW(
      {
        try {
          blurPool2d(x, binomialFilter(3), {2, 2});
        } catch (const c10::Error &e) {
          EXPECT_NE(std::string(e.what()).find("(4, 1, 3, 3) filter"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      c10::Error);
  EXPECT_THROW(blurPool2d(x, binomialFilter(4).requires_grad_(), {2, 2}),
               c10::Error);
  EXPECT_THROW(squeezeExcite(x, torch::randn({2, 3}), torch::randn({4, 2})),
               c10::Error);
  EXPECT_THROW(ghostBatchNorm(torch::randn({1, 4, 1, 1}), c10::nullopt,
                              c10::nullopt, c10::nullopt, c10::nullopt, true,
                              0.1, 1e-5, 4),
               c10::Error);
}

} // namespace
