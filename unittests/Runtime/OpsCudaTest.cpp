//===- OpsCudaTest.cpp - the composer:: ops on CUDA against CPU -----------===//
//
// On a machine with a GPU and a CUDA LibTorch: each primitive of
// CudaKernels against the CPU one, each public op (through the dispatcher, as a
// TorchScript model calls it) forward and backward on CUDA against CPU, in
// fp32, bf16 and fp16, NCHW and channels_last, and every op's gradient
// against central differences in double. Skips without a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/ops/Kernels.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <sstream>

using composer::ops::BlurGeometry;
using composer::ops::DeviceKernels;
using composer::ops::MaxPoolGeometry;

#define SKIP_WITHOUT_CUDA()                                                    \
  do {                                                                         \
    if (!torch::cuda::is_available())                                          \
      GTEST_SKIP() << "no CUDA device";                                        \
  } while (false)

namespace {

const at::ScalarType kLowAndFloat[] = {at::kFloat, at::kBFloat16, at::kHalf};
const at::MemoryFormat kFormats[] = {at::MemoryFormat::Contiguous,
                                     at::MemoryFormat::ChannelsLast};

std::string describe(at::ScalarType dtype, at::MemoryFormat format,
                     at::IntArrayRef sizes) {
  std::ostringstream os;
  os << dtype
     << (format == at::MemoryFormat::ChannelsLast ? " channels_last "
                                                  : " NCHW ")
     << sizes;
  return os.str();
}

/// Tolerance of a result in `dtype` computed two ways (CPU and CUDA), each
/// rounded once.
double toleranceOf(at::ScalarType dtype) {
  switch (dtype) {
  case at::kDouble:
    return 1e-10;
  case at::kFloat:
    return 1e-4;
  case at::kHalf:
    return 4e-3;
  default:
    return 3e-2;
  }
}

/// allclose on the CPU in double, atol scaled by the reference's size.
void expectNear(const at::Tensor &actual, const at::Tensor &expected,
                double tolerance, const std::string &what) {
  ASSERT_TRUE(actual.defined() && expected.defined()) << what;
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  at::Tensor a = actual.detach().cpu().to(at::kDouble);
  at::Tensor e = expected.detach().cpu().to(at::kDouble);
  double scale = std::max(1.0, e.abs().nan_to_num(0).max().item<double>());
  if (!at::allclose(a, e, tolerance, tolerance * scale, /*equal_nan=*/true)) {
    at::Tensor diff = (a - e).abs().nan_to_num(1e300).flatten();
    int64_t at = diff.argmax().item<int64_t>();
    ADD_FAILURE() << what << ": max |difference| " << diff[at].item<double>()
                  << " at flat index " << at << " (got "
                  << a.flatten()[at].item<double>() << ", expected "
                  << e.flatten()[at].item<double>() << "), tolerance "
                  << tolerance << " x " << scale;
  }
}

/// The CUDA result keeps the CPU result's dtype and memory format.
void expectSameKind(const at::Tensor &cuda, const at::Tensor &cpu,
                    const std::string &what) {
  EXPECT_TRUE(cuda.is_cuda()) << what;
  EXPECT_EQ(cuda.scalar_type(), cpu.scalar_type()) << what;
  EXPECT_EQ(cuda.is_contiguous(), cpu.is_contiguous()) << what;
  EXPECT_EQ(cuda.is_contiguous(at::MemoryFormat::ChannelsLast),
            cpu.is_contiguous(at::MemoryFormat::ChannelsLast))
      << what;
}

at::Tensor randomActivation(at::IntArrayRef sizes, at::ScalarType dtype,
                            at::MemoryFormat format) {
  return at::randn(sizes).to(dtype).contiguous(format);
}

at::Tensor blurFilter(int64_t channels) {
  // BlurPool's binomial filter, as composer-blurpool stores it.
  at::Tensor taps = at::tensor({1.0f, 2.0f, 1.0f});
  return (taps.view({3, 1}) * taps.view({1, 3}) / 16)
      .expand({channels, 1, 3, 3})
      .contiguous();
}

//===----------------------------------------------------------------------===//
// The ops through the dispatcher
//===----------------------------------------------------------------------===//

/// composer::<name> called boxed, as TorchScript calls it.
at::Tensor callOp(const char *name, std::vector<c10::IValue> args) {
  static auto &dispatcher = c10::Dispatcher::singleton();
  c10::OperatorHandle op = dispatcher.findSchemaOrThrow(name, "");
  torch::jit::Stack stack(std::move(args));
  op.callBoxed(&stack);
  return stack.at(0).toTensor();
}

std::vector<int64_t> pair(int64_t a, int64_t b) { return {a, b}; }

at::Tensor blurPool2d(const at::Tensor &x, const at::Tensor &filter,
                      int64_t stride) {
  return callOp("composer::blur_pool2d", {x, filter, pair(stride, stride)});
}

at::Tensor blurMaxPool2d(const at::Tensor &x, const at::Tensor &filter) {
  // ResNet's stem: max_pool2d(3, stride 2, padding 1) made BlurPool's.
  return callOp("composer::blur_max_pool2d",
                {x, filter, pair(3, 3), pair(1, 1), pair(1, 1), pair(2, 2)});
}

at::Tensor ghostBatchNorm(const at::Tensor &x, const at::Tensor &weight,
                          const at::Tensor &bias, const at::Tensor &mean,
                          const at::Tensor &var, bool training,
                          int64_t ghostBatchSize,
                          c10::optional<at::ScalarType> dtype = {}) {
  auto optional = [](const at::Tensor &t) {
    return t.defined() ? c10::IValue(t) : c10::IValue();
  };
  return callOp("composer::ghost_batch_norm",
                {x, optional(weight), optional(bias), optional(mean),
                 optional(var), training, 0.1, 1e-5, ghostBatchSize,
                 dtype ? c10::IValue(*dtype) : c10::IValue()});
}

at::Tensor squeezeExcite(const at::Tensor &x, const at::Tensor &fc1,
                         const at::Tensor &fc2) {
  return callOp("composer::squeeze_excite", {x, fc1, fc2});
}

/// Leaves for autograd: copies of `tensors` on `device`, requiring grad.
std::vector<at::Tensor> leaves(const std::vector<at::Tensor> &tensors,
                               at::Device device) {
  std::vector<at::Tensor> out;
  for (const at::Tensor &t : tensors)
    out.push_back(t.to(device).detach().requires_grad_());
  return out;
}

/// Runs `f` on CPU and on CUDA copies of `inputs` (all differentiable),
/// and compares outputs and the gradients of sum(output * w).
void compareOnDevices(
    const std::function<at::Tensor(const std::vector<at::Tensor> &)> &f,
    const std::vector<at::Tensor> &inputs, double tolerance,
    const std::string &what) {
  std::vector<at::Tensor> cpu = leaves(inputs, at::kCPU);
  std::vector<at::Tensor> cuda = leaves(inputs, at::kCUDA);
  at::Tensor yCpu = f(cpu), yCuda = f(cuda);
  expectSameKind(yCuda, yCpu, what + " output");
  expectNear(yCuda, yCpu, tolerance, what + " output");
  at::Tensor w = at::randn(yCpu.sizes()).to(yCpu.scalar_type());
  auto gCpu = torch::autograd::grad({yCpu}, cpu, {w});
  auto gCuda = torch::autograd::grad({yCuda}, cuda, {w.to(at::kCUDA)});
  for (size_t i = 0; i < inputs.size(); ++i)
    expectNear(gCuda[i], gCpu[i], tolerance,
               what + " gradient of input " + std::to_string(i));
}

TEST(OpsCudaTest, BlurPool2d) {
  SKIP_WITHOUT_CUDA();
  const std::vector<int64_t> shapes[] = {
      {8, 64, 56, 56}, {4, 32, 15, 17}, {2, 16, 2, 5}, {3, 3, 7, 7}};
  for (const auto &sizes : shapes)
    for (int64_t stride : {1, 2})
      for (at::ScalarType dtype : kLowAndFloat)
        for (at::MemoryFormat format : kFormats) {
          std::string what = describe(dtype, format, sizes) + " stride " +
                             std::to_string(stride);
          SCOPED_TRACE(what);
          at::Tensor filter = blurFilter(sizes[1]);
          compareOnDevices(
              [&](const std::vector<at::Tensor> &in) {
                return blurPool2d(in[0], filter.to(in[0].device()), stride);
              },
              {randomActivation(sizes, dtype, format)}, toleranceOf(dtype),
              what);
        }
}

TEST(OpsCudaTest, BlurMaxPool2d) {
  SKIP_WITHOUT_CUDA();
  const std::vector<int64_t> shapes[] = {
      {4, 64, 56, 56}, {4, 24, 15, 17}, {2, 3, 5, 4}};
  for (const auto &sizes : shapes)
    for (at::ScalarType dtype : kLowAndFloat)
      for (at::MemoryFormat format : kFormats) {
        std::string what = describe(dtype, format, sizes);
        SCOPED_TRACE(what);
        at::Tensor filter = blurFilter(sizes[1]);
        compareOnDevices(
            [&](const std::vector<at::Tensor> &in) {
              return blurMaxPool2d(in[0], filter.to(in[0].device()));
            },
            {randomActivation(sizes, dtype, format)}, toleranceOf(dtype), what);
        // Small integers: ties everywhere, and both devices must pick the
        // same maximum.
        compareOnDevices(
            [&](const std::vector<at::Tensor> &in) {
              return blurMaxPool2d(in[0], filter.to(in[0].device()));
            },
            {at::randint(-2, 3, sizes).to(dtype).contiguous(format)},
            toleranceOf(dtype), what + " ties");
      }
}

TEST(OpsCudaTest, GhostBatchNorm) {
  SKIP_WITHOUT_CUDA();
  const std::vector<int64_t> shapes[] = {{64, 64, 28, 28}, {10, 24, 7, 9}};
  for (const auto &sizes : shapes)
    for (at::ScalarType dtype : kLowAndFloat)
      for (at::MemoryFormat format : kFormats)
        for (bool training : {true, false}) {
          std::string what = describe(dtype, format, sizes) +
                             (training ? " training" : " eval");
          SCOPED_TRACE(what);
          int64_t c = sizes[1];
          at::Tensor weight = at::rand({c}) + 0.5, bias = at::randn({c});
          at::Tensor mean = at::randn({c}), var = at::rand({c}) + 0.5;
          at::Tensor meanCuda = mean.cuda(), varCuda = var.cuda();
          at::Tensor meanCpu = mean.clone(), varCpu = var.clone();
          compareOnDevices(
              [&](const std::vector<at::Tensor> &in) {
                bool onCuda = in[0].is_cuda();
                return ghostBatchNorm(in[0], in[1], in[2],
                                      onCuda ? meanCuda : meanCpu,
                                      onCuda ? varCuda : varCpu, training, 4);
              },
              {randomActivation(sizes, dtype, format), weight, bias},
              // Statistics over few values in low precision: looser.
              2 * toleranceOf(dtype), what);
          expectNear(meanCuda, meanCpu, 1e-4, what + " running mean");
          expectNear(varCuda, varCpu, 1e-4, what + " running var");
        }
}

TEST(OpsCudaTest, GhostBatchNormCastAware) {
  // dtype=float32 on a bf16/fp16 input: equals the op on input.float().
  SKIP_WITHOUT_CUDA();
  for (at::ScalarType dtype : {at::kBFloat16, at::kHalf})
    for (at::MemoryFormat format : kFormats) {
      std::string what = describe(dtype, format, {16, 32, 14, 14});
      SCOPED_TRACE(what);
      at::Tensor weight = at::rand({32}) + 0.5, bias = at::randn({32});
      compareOnDevices(
          [&](const std::vector<at::Tensor> &in) {
            at::Tensor y = ghostBatchNorm(in[0], in[1], in[2], {}, {}, true, 8,
                                          at::kFloat);
            EXPECT_EQ(y.scalar_type(), at::kFloat);
            return y;
          },
          {randomActivation({16, 32, 14, 14}, dtype, format), weight, bias},
          toleranceOf(at::kFloat) * 10, what);
    }
}

TEST(OpsCudaTest, SqueezeExcite) {
  SKIP_WITHOUT_CUDA();
  const std::vector<int64_t> shapes[] = {{32, 256, 14, 14}, {4, 24, 5, 7}};
  for (const auto &sizes : shapes)
    for (at::ScalarType dtype : kLowAndFloat)
      for (at::MemoryFormat format : kFormats) {
        std::string what = describe(dtype, format, sizes);
        SCOPED_TRACE(what);
        int64_t c = sizes[1], latent = 16;
        compareOnDevices(
            [&](const std::vector<at::Tensor> &in) {
              return squeezeExcite(in[0], in[1], in[2]);
            },
            {randomActivation(sizes, dtype, format),
             at::randn({latent, c}) / std::sqrt(double(c)),
             at::randn({c, latent}) / std::sqrt(double(latent))},
            2 * toleranceOf(dtype), what);
      }
}

//===----------------------------------------------------------------------===//
// Gradients against central differences, in double on CUDA
//===----------------------------------------------------------------------===//

/// The elements of t in memory order (a view), whatever its memory format.
at::Tensor memoryOrder(const at::Tensor &t) {
  if (!t.is_contiguous() && t.dim() == 4 &&
      t.is_contiguous(at::MemoryFormat::ChannelsLast))
    return t.permute({0, 2, 3, 1}).view(-1);
  return t.view(-1);
}

/// Checks autograd's gradient of sum(f(inputs) * w) with respect to input
/// `which` against central differences.
void gradcheck(
    const std::function<at::Tensor(const std::vector<at::Tensor> &)> &f,
    std::vector<at::Tensor> inputs, size_t which, const std::string &what,
    double eps = 1e-6, double tolerance = 1e-6) {
  for (at::Tensor &t : inputs)
    t = t.detach().requires_grad_(true);
  at::Tensor y = f(inputs);
  at::Tensor w = at::randn_like(y);
  at::Tensor analytic =
      torch::autograd::grad({y}, {inputs[which]}, {w})[0].contiguous(
          inputs[which].suggest_memory_format());
  at::NoGradGuard noGrad;
  at::Tensor x = inputs[which].detach();
  inputs[which] = x;
  at::Tensor flat = memoryOrder(x);
  at::Tensor expected = memoryOrder(analytic).cpu();
  for (int64_t i = 0; i < flat.numel(); ++i) {
    double saved = flat[i].item<double>();
    flat[i].fill_(saved + eps);
    double up = (f(inputs) * w).sum().item<double>();
    flat[i].fill_(saved - eps);
    double down = (f(inputs) * w).sum().item<double>();
    flat[i].fill_(saved);
    double numeric = (up - down) / (2 * eps);
    double got = expected[i].item<double>();
    if (std::abs(numeric - got) > tolerance * (1 + std::abs(numeric))) {
      ADD_FAILURE() << what << ": d/d element " << i << " of input " << which
                    << ": autograd " << got << ", central difference "
                    << numeric;
      return;
    }
  }
}

at::Tensor doubleCuda(at::IntArrayRef sizes, at::MemoryFormat format) {
  return at::randn(sizes, at::TensorOptions(at::kDouble).device(at::kCUDA))
      .contiguous(format);
}

TEST(OpsCudaTest, GradientsMatchCentralDifferences) {
  SKIP_WITHOUT_CUDA();
  for (at::MemoryFormat format : kFormats) {
    std::string layout =
        format == at::MemoryFormat::ChannelsLast ? "channels_last" : "NCHW";
    at::Tensor filter = blurFilter(3).to(at::kCUDA, at::kDouble);
    for (int64_t stride : {1, 2})
      gradcheck(
          [&](const std::vector<at::Tensor> &in) {
            return blurPool2d(in[0], filter, stride);
          },
          {doubleCuda({2, 3, 6, 5}, format)}, 0,
          "blur_pool2d " + layout + " stride " + std::to_string(stride));
    gradcheck(
        [&](const std::vector<at::Tensor> &in) {
          return blurMaxPool2d(in[0], filter);
        },
        {doubleCuda({2, 3, 7, 6}, format)}, 0, "blur_max_pool2d " + layout);

    auto gbn = [&](const std::vector<at::Tensor> &in) {
      return ghostBatchNorm(in[0], in[1], in[2], {}, {}, true, 2);
    };
    std::vector<at::Tensor> gbnInputs = {
        doubleCuda({5, 3, 3, 4}, format),
        at::rand({3}, at::TensorOptions(at::kDouble).device(at::kCUDA)) + 0.5,
        at::randn({3}, at::TensorOptions(at::kDouble).device(at::kCUDA))};
    for (size_t i = 0; i < gbnInputs.size(); ++i)
      gradcheck(gbn, gbnInputs, i,
                "ghost_batch_norm " + layout + ", input " + std::to_string(i));

    auto se = [&](const std::vector<at::Tensor> &in) {
      return squeezeExcite(in[0], in[1], in[2]);
    };
    auto options = at::TensorOptions(at::kDouble).device(at::kCUDA);
    std::vector<at::Tensor> seInputs = {doubleCuda({2, 6, 4, 3}, format),
                                        at::randn({4, 6}, options),
                                        at::randn({6, 4}, options)};
    for (size_t i = 0; i < seInputs.size(); ++i)
      gradcheck(se, seInputs, i,
                "squeeze_excite " + layout + ", input " + std::to_string(i));
  }
}

//===----------------------------------------------------------------------===//
// The primitives, the stream and the device
//===----------------------------------------------------------------------===//

TEST(OpsCudaTest, PrimitivesMatchCpu) {
  SKIP_WITHOUT_CUDA();
  const DeviceKernels &gpu = composer::ops::cudaKernels();
  const DeviceKernels &cpu = composer::ops::cpuKernels();
  const at::ScalarType dtypes[] = {at::kFloat, at::kBFloat16, at::kHalf,
                                   at::kDouble};
  const std::vector<int64_t> shapes[] = {{8, 64, 56, 56},
                                         {32, 256, 14, 14},
                                         {6, 40, 9, 7},
                                         {3, 3, 1, 5},
                                         {2, 2048, 7, 7}};
  for (const auto &sizes : shapes)
    for (at::ScalarType dtype : dtypes)
      for (at::MemoryFormat format : kFormats) {
        std::string what = describe(dtype, format, sizes);
        SCOPED_TRACE(what);
        double tol = toleranceOf(dtype);
        double sumTol = dtype == at::kDouble ? 1e-10 : 1e-4;
        at::ScalarType acc = dtype == at::kDouble ? at::kDouble : at::kFloat;
        at::Tensor x = randomActivation(sizes, dtype, format);
        at::Tensor dy = randomActivation(sizes, dtype, format);
        at::Tensor xc = x.cuda(), dyc = dy.cuda();
        at::Tensor filter = blurFilter(sizes[1]);
        BlurGeometry s2{2, 2};
        MaxPoolGeometry pool{3, 3, 1, 1, 1, 1};

        at::Tensor y = cpu.blur(x, filter, s2);
        at::Tensor yc = gpu.blur(xc, filter.cuda(), s2);
        expectSameKind(yc, y, what + " blur");
        expectNear(yc, y, tol, what + " blur");
        at::Tensor g = randomActivation(y.sizes(), dtype, format);
        expectNear(
            gpu.blurBackward(g.cuda(), filter.cuda(), sizes[2], sizes[3], s2),
            cpu.blurBackward(g, filter, sizes[2], sizes[3], s2), tol,
            what + " blurBackward");
        if (sizes[2] >= 2 && sizes[3] >= 2) {
          expectNear(gpu.maxBlur(xc, filter.cuda(), pool, s2),
                     cpu.maxBlur(x, filter, pool, s2), tol, what + " maxBlur");
          expectNear(gpu.maxBlurBackward(g.cuda(), xc, filter.cuda(), pool, s2),
                     cpu.maxBlurBackward(g, x, filter, pool, s2), tol,
                     what + " maxBlurBackward");
        }

        expectNear(gpu.channelMean(xc), cpu.channelMean(x), sumTol,
                   what + " channelMean");
        expectNear(gpu.channelDot(dyc, xc), cpu.channelDot(dy, x), sumTol,
                   what + " channelDot");
        at::Tensor scale = at::randn({sizes[0], sizes[1]}).to(acc);
        at::Tensor shift = at::randn({sizes[0], sizes[1]}).to(acc);
        expectNear(gpu.scaleChannels(xc, scale.cuda(), shift.cuda(), dtype),
                   cpu.scaleChannels(x, scale, shift, dtype), tol,
                   what + " scaleChannels");
        for (int64_t chunk : {int64_t(1), int64_t(2), int64_t(32)}) {
          std::string c = what + " chunk " + std::to_string(chunk);
          auto [mean, var] = cpu.chunkStats(x, chunk);
          auto [meanc, varc] = gpu.chunkStats(xc, chunk);
          expectNear(meanc, mean, sumTol, c + " chunkStats mean");
          expectNear(varc, var, sumTol, c + " chunkStats var");
          auto [sumDy, sumDyXmu] = cpu.chunkGradStats(dy, x, mean, chunk);
          auto [sumDyc, sumDyXmuc] =
              gpu.chunkGradStats(dyc, xc, mean.cuda(), chunk);
          expectNear(sumDyc, sumDy, sumTol, c + " chunkGradStats dy");
          expectNear(sumDyXmuc, sumDyXmu, sumTol,
                     c + " chunkGradStats dy (x - mean)");
          int64_t k = (sizes[0] + chunk - 1) / chunk;
          at::Tensor a = at::randn({k, sizes[1]}).to(acc),
                     b = at::randn({k, sizes[1]}).to(acc),
                     cc = at::randn({k, sizes[1]}).to(acc);
          expectNear(gpu.chunkAffine(xc, a.cuda(), b.cuda(), chunk, dtype),
                     cpu.chunkAffine(x, a, b, chunk, dtype), tol,
                     c + " chunkAffine");
          expectNear(gpu.chunkAffine2(dyc, xc, a.cuda(), b.cuda(), cc.cuda(),
                                      chunk, dtype),
                     cpu.chunkAffine2(dy, x, a, b, cc, chunk, dtype), tol,
                     c + " chunkAffine2");
        }
      }
}

TEST(OpsCudaTest, ReductionsAreDeterministic) {
  // Split reductions merge partial states in a fixed order: the same bits
  // every run.
  SKIP_WITHOUT_CUDA();
  const DeviceKernels &gpu = composer::ops::cudaKernels();
  for (at::MemoryFormat format : kFormats) {
    at::Tensor x =
        randomActivation({256, 64, 56, 56}, at::kBFloat16, format).cuda();
    auto [mean, var] = gpu.chunkStats(x, 256);
    for (int run = 0; run < 3; ++run) {
      auto [mean2, var2] = gpu.chunkStats(x, 256);
      EXPECT_TRUE(at::equal(mean, mean2));
      EXPECT_TRUE(at::equal(var, var2));
    }
  }
}

TEST(OpsCudaTest, RunsOnTheCurrentStreamAndDevice) {
  SKIP_WITHOUT_CUDA();
  at::Tensor x = randomActivation({16, 64, 32, 32}, at::kFloat,
                                  at::MemoryFormat::ChannelsLast);
  at::Tensor filter = blurFilter(64);
  at::Tensor expected = blurPool2d(x.cuda(), filter.cuda(), 2).cpu();
  {
    // A side stream: the op's kernels must queue behind the copy on it.
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
    c10::cuda::CUDAStreamGuard guard(side);
    at::Tensor y = blurPool2d(x.cuda(), filter.cuda(), 2);
    side.synchronize();
    expectNear(y, expected, 1e-6, "side stream");
  }
  if (torch::cuda::device_count() >= 2) {
    // Tensors on device 1 while device 0 is current.
    at::Device one(at::kCUDA, 1);
    at::Tensor y = blurPool2d(x.to(one), filter.to(one), 2);
    EXPECT_EQ(y.device(), one);
    expectNear(y, expected, 1e-6, "device 1");
  }
}

TEST(OpsCudaTest, RejectsMixedDevices) {
  SKIP_WITHOUT_CUDA();
  const DeviceKernels &gpu = composer::ops::cudaKernels();
  at::Tensor x = at::randn({2, 4, 8, 8}, at::kCUDA);
  EXPECT_THROW(gpu.channelDot(x, x.cpu()), c10::Error);
  EXPECT_THROW(gpu.blur(x.cpu(), blurFilter(4), {2, 2}), c10::Error);
}

} // namespace
