//===- OpsCudaEmulationTest.cpp - CUDA kernels, run on the host -----------===//
//
// runtime/ops/cuda's kernels (Kernels.cuh, raw pointers) under the host
// emulation of CudaEmulation.h, against aten references in double: every
// primitive, both layouts, every dtype, vector and scalar paths (misaligned
// pointers), warp- and block-per-output reductions and split reductions.
// Then the LibTorch side (CudaKernels.cpp, built with CPU tensors standing
// for CUDA ones) against the CPU kernels. Runs anywhere the CUDA headers
// are; OpsCudaTest checks the real thing on a GPU.
//
//===----------------------------------------------------------------------===//

#include "../../runtime/ops/Kernels.h"
#include "../../runtime/ops/cuda/KernelDType.h"
#include "../../runtime/ops/cuda/Kernels.cuh"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>

// After the LibTorch headers: it defines a few CUDA names for the kernels.
#include "CudaEmulation.h"

namespace gpu = composer::ops::gpu;
using composer::ops::BlurGeometry;
using composer::ops::cpuKernels;
using composer::ops::cudaKernels;
using composer::ops::DeviceKernels;
using composer::ops::MaxPoolGeometry;

namespace {

const at::ScalarType kDtypes[] = {at::kFloat, at::kDouble, at::kBFloat16,
                                  at::kHalf};
const gpu::Layout kLayouts[] = {gpu::Layout::NCHW, gpu::Layout::NHWC};

gpu::DType dtypeOf(at::ScalarType t) {
  std::optional<gpu::DType> dtype = gpu::kernelDType(t);
  if (!dtype)
    ADD_FAILURE() << "no kernel dtype for " << t;
  return dtype.value_or(gpu::DType::Float32);
}

at::MemoryFormat formatOf(gpu::Layout layout) {
  return layout == gpu::Layout::NHWC ? at::MemoryFormat::ChannelsLast
                                     : at::MemoryFormat::Contiguous;
}

at::ScalarType accOf(at::ScalarType t) {
  return t == at::kDouble ? at::kDouble : at::kFloat;
}

gpu::Shape shapeOf(const at::Tensor &t) {
  return {t.size(0), t.size(1), t.size(2), t.size(3)};
}

std::string describe(at::ScalarType dtype, gpu::Layout layout,
                     at::IntArrayRef sizes, bool misaligned) {
  std::ostringstream os;
  os << dtype << (layout == gpu::Layout::NHWC ? " channels_last " : " NCHW ")
     << sizes << (misaligned ? " misaligned" : "");
  return os.str();
}

/// A tensor's bytes as the kernels see them (its memory order), optionally
/// one element past 16-byte alignment so the kernels take scalar paths.
class Raw {
public:
  Raw(const at::Tensor &t, bool misaligned)
      : sizes_(t.sizes().vec()), dtype_(t.scalar_type()),
        format_(t.is_contiguous() ? at::MemoryFormat::Contiguous
                                  : at::MemoryFormat::ChannelsLast) {
    allocate(t.numel(), misaligned);
    at::Tensor dense = t.contiguous(format_);
    std::memcpy(ptr_, dense.data_ptr(), dense.nbytes());
  }

  Raw(at::IntArrayRef sizes, at::ScalarType dtype, at::MemoryFormat format,
      bool misaligned)
      : sizes_(sizes.vec()), dtype_(dtype), format_(format) {
    allocate(c10::multiply_integers(sizes), misaligned);
    // NaN, so an element the kernel never writes shows.
    if (at::isFloatingType(dtype))
      at::from_blob(ptr_, {int64_t(bytes_ / at::elementSize(dtype))},
                    at::TensorOptions(dtype))
          .fill_(NAN);
  }

  void *ptr() const { return ptr_; }

  at::Tensor tensor() const {
    at::Tensor t = at::empty(sizes_, at::TensorOptions(dtype_), format_);
    std::memcpy(t.data_ptr(), ptr_, t.nbytes());
    return t;
  }

private:
  void allocate(int64_t numel, bool misaligned) {
    size_t element = at::elementSize(dtype_);
    bytes_ = size_t(numel) * element;
    buffer_ = at::empty({int64_t(bytes_ + 64)}, at::kByte);
    auto base = reinterpret_cast<uintptr_t>(buffer_.data_ptr());
    base = (base + 15) / 16 * 16 + (misaligned ? element : 0);
    ptr_ = reinterpret_cast<void *>(base);
  }

  std::vector<int64_t> sizes_;
  at::ScalarType dtype_;
  at::MemoryFormat format_;
  at::Tensor buffer_;
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
};

double toleranceOf(at::ScalarType t) {
  switch (t) {
  case at::kDouble:
    return 1e-10;
  case at::kFloat:
    return 2e-5;
  case at::kHalf:
    return 2e-3;
  default:
    return 1.6e-2;
  }
}

/// allclose with rtol = tolerance and atol = tolerance * scale, where scale
/// is the size of the terms a sum cancelled (1 for elementwise results).
void expectClose(const at::Tensor &actual, const at::Tensor &expected,
                 double tolerance, const std::string &what, double scale = 1) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  at::Tensor a = actual.to(at::kDouble), e = expected.to(at::kDouble);
  bool close = at::allclose(a, e, tolerance, tolerance * scale,
                            /*equal_nan=*/true);
  if (!close) {
    at::Tensor diff = (a - e).abs().nan_to_num(1e300);
    int64_t at = diff.flatten().argmax().item<int64_t>();
    ADD_FAILURE() << what << ": max |difference| " << diff.max().item<double>()
                  << " at flat index " << at << " (got "
                  << a.flatten()[at].item<double>() << ", expected "
                  << e.flatten()[at].item<double>() << ")";
  }
}

/// Values in `dtype` and `layout`; small integers when `ties`, so windows
/// hold equal maxima.
at::Tensor activation(at::IntArrayRef sizes, at::ScalarType dtype,
                      gpu::Layout layout, bool ties = false) {
  at::Tensor t = ties ? at::randint(-2, 3, sizes, at::kDouble)
                      : at::randn(sizes, at::kDouble);
  return t.to(dtype).contiguous(formatOf(layout));
}

at::Tensor blurFilter(int64_t channels, at::ScalarType acc) {
  // Random rather than binomial, so a transposed tap shows.
  return at::randn({channels, 1, 3, 3}, at::kDouble).to(acc);
}

//===----------------------------------------------------------------------===//
// Blur
//===----------------------------------------------------------------------===//

struct BlurCase {
  std::vector<int64_t> sizes;
  int64_t sh, sw;
};

const BlurCase kBlurCases[] = {
    {{2, 3, 7, 5}, 1, 1},  {{2, 16, 9, 8}, 2, 2},  {{1, 8, 1, 6}, 2, 1},
    {{3, 5, 4, 4}, 3, 2},  {{1, 264, 3, 4}, 1, 1}, {{1, 2, 40, 70}, 2, 2},
    {{2, 24, 2, 2}, 2, 2},
};

at::Tensor convBlur(const at::Tensor &x, const at::Tensor &filter, int64_t sh,
                    int64_t sw) {
  return at::conv2d(x, filter.to(at::kDouble), {}, {sh, sw}, {1, 1}, {1, 1},
                    x.size(1));
}

TEST(OpsCudaEmulationTest, Blur) {
  for (const BlurCase &c : kBlurCases)
    for (at::ScalarType dtype : kDtypes)
      for (gpu::Layout layout : kLayouts)
        for (bool misaligned : {false, true}) {
          std::string what = describe(dtype, layout, c.sizes, misaligned);
          SCOPED_TRACE(what);
          at::Tensor x = activation(c.sizes, dtype, layout);
          at::Tensor filter = blurFilter(c.sizes[1], accOf(dtype));
          at::Tensor expected = convBlur(x.to(at::kDouble), filter, c.sh, c.sw);
          Raw in(x, misaligned);
          Raw out(expected.sizes(), dtype, formatOf(layout), misaligned);
          ASSERT_EQ(gpu::blur(in.ptr(), out.ptr(), dtypeOf(dtype), layout,
                              shapeOf(x), filter.data_ptr(), {c.sh, c.sw},
                              nullptr),
                    cudaSuccess);
          expectClose(out.tensor(), expected, toleranceOf(dtype),
                      what + " forward");

          // The gradient: conv2d's, through autograd in double.
          at::Tensor g = activation(expected.sizes(), dtype, layout);
          at::Tensor xd = x.to(at::kDouble).requires_grad_();
          at::Tensor gradExpected = torch::autograd::grad(
              {convBlur(xd, filter, c.sh, c.sw)}, {xd}, {g.to(at::kDouble)})[0];
          Raw gradOut(g, misaligned);
          Raw gradIn(x.sizes(), dtype, formatOf(layout), misaligned);
          ASSERT_EQ(gpu::blurBackward(gradOut.ptr(), gradIn.ptr(),
                                      dtypeOf(dtype), layout, shapeOf(x),
                                      filter.data_ptr(), {c.sh, c.sw}, nullptr),
                    cudaSuccess);
          expectClose(gradIn.tensor(), gradExpected, toleranceOf(dtype),
                      what + " backward");
        }
}

//===----------------------------------------------------------------------===//
// Max pool + blur
//===----------------------------------------------------------------------===//

struct MaxBlurCase {
  std::vector<int64_t> sizes;
  gpu::MaxPool pool;
  int64_t sh, sw;
};

const MaxBlurCase kMaxBlurCases[] = {
    {{2, 16, 9, 8}, {3, 3, 1, 1, 1, 1}, 2, 2}, // ResNet's stem
    {{2, 3, 7, 5}, {2, 2, 0, 0, 1, 1}, 2, 2},
    {{1, 8, 7, 9}, {3, 3, 1, 1, 2, 2}, 1, 1},
    {{2, 5, 6, 7}, {3, 2, 1, 1, 1, 2}, 2, 1},
    {{1, 264, 4, 3}, {1, 1, 0, 0, 1, 1}, 2, 2},
    {{1, 2, 33, 40}, {3, 3, 1, 1, 1, 1}, 2, 2},
};

at::Tensor maxBlurReference(const at::Tensor &x, const at::Tensor &filter,
                            const MaxBlurCase &c) {
  const gpu::MaxPool &p = c.pool;
  at::Tensor m = at::max_pool2d(x, {p.kernelH, p.kernelW}, {1, 1},
                                {p.padH, p.padW}, {p.dilationH, p.dilationW});
  return convBlur(m, filter, c.sh, c.sw);
}

void checkMaxBlur(const MaxBlurCase &c, at::ScalarType dtype,
                  gpu::Layout layout, bool misaligned, const at::Tensor &x,
                  const std::string &what) {
  at::Tensor filter = blurFilter(c.sizes[1], accOf(dtype));
  at::Tensor expected = maxBlurReference(x.to(at::kDouble), filter, c);
  Raw in(x, misaligned);
  Raw out(expected.sizes(), dtype, formatOf(layout), misaligned);
  ASSERT_EQ(gpu::maxBlur(in.ptr(), out.ptr(), dtypeOf(dtype), layout,
                         shapeOf(x), filter.data_ptr(), c.pool, {c.sh, c.sw},
                         nullptr),
            cudaSuccess);
  expectClose(out.tensor(), expected, toleranceOf(dtype), what + " forward");

  at::Tensor g = activation(expected.sizes(), dtype, layout);
  at::Tensor xd = x.to(at::kDouble).requires_grad_();
  at::Tensor gradExpected = torch::autograd::grad(
      {maxBlurReference(xd, filter, c)}, {xd}, {g.to(at::kDouble)})[0];
  Raw gradOut(g, misaligned);
  Raw gradIn(x.sizes(), dtype, formatOf(layout), misaligned);
  ASSERT_EQ(gpu::maxBlurBackward(
                gradOut.ptr(), in.ptr(), gradIn.ptr(), dtypeOf(dtype), layout,
                shapeOf(x), filter.data_ptr(), c.pool, {c.sh, c.sw}, nullptr),
            cudaSuccess);
  expectClose(gradIn.tensor(), gradExpected, toleranceOf(dtype),
              what + " backward");
}

TEST(OpsCudaEmulationTest, MaxBlur) {
  for (const MaxBlurCase &c : kMaxBlurCases)
    for (at::ScalarType dtype : kDtypes)
      for (gpu::Layout layout : kLayouts)
        for (bool misaligned : {false, true}) {
          std::string what = describe(dtype, layout, c.sizes, misaligned);
          SCOPED_TRACE(what);
          checkMaxBlur(c, dtype, layout, misaligned,
                       activation(c.sizes, dtype, layout), what);
        }
}

TEST(OpsCudaEmulationTest, MaxBlurTiesPickTheFirstMaximum) {
  // Small integers: most windows hold several maxima, and the gradient
  // must go to the one max_pool2d picks.
  for (const MaxBlurCase &c : kMaxBlurCases)
    for (at::ScalarType dtype : kDtypes)
      for (gpu::Layout layout : kLayouts) {
        std::string what = describe(dtype, layout, c.sizes, false) + " ties";
        SCOPED_TRACE(what);
        checkMaxBlur(c, dtype, layout, false,
                     activation(c.sizes, dtype, layout, /*ties=*/true), what);
      }
}

TEST(OpsCudaEmulationTest, MaxBlurNaNWinsAsInMaxPool) {
  const MaxBlurCase &c = kMaxBlurCases[0];
  for (at::ScalarType dtype : {at::kFloat, at::kBFloat16})
    for (gpu::Layout layout : kLayouts) {
      std::string what = describe(dtype, layout, c.sizes, false) + " NaN";
      SCOPED_TRACE(what);
      at::Tensor x = activation(c.sizes, dtype, layout, /*ties=*/true);
      // Two NaNs in one window and one alone, in every plane.
      x.select(2, 2).select(2, 3).fill_(NAN);
      x.select(2, 3).select(2, 4).fill_(NAN);
      x.select(2, 7).select(2, 0).fill_(NAN);
      checkMaxBlur(c, dtype, layout, false, x, what);
    }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

struct ReduceCase {
  std::vector<int64_t> sizes;
  int64_t chunk;
};

const ReduceCase kReduceCases[] = {
    {{2, 3, 7, 5}, 1},     {{3, 16, 4, 4}, 1},  {{2, 5, 1, 1}, 1},
    {{5, 6, 5, 7}, 2},     {{5, 64, 3, 3}, 2},  {{5, 6, 5, 7}, 7},
    {{2, 2, 96, 96}, 2},   // a block per output
    {{1, 2, 191, 193}, 1}, // and split across blocks
    {{4, 3, 60, 40}, 4},   {{1, 264, 3, 3}, 1},
};

/// The groups of `chunk` samples along dim 0.
std::vector<at::Tensor> groups(const at::Tensor &t, int64_t chunk) {
  return t.split(chunk, 0);
}

/// Per (group, channel): f of each group's (n, h, w) values, as (K, C).
template <typename F>
at::Tensor perGroup(const at::Tensor &t, int64_t chunk, F f) {
  std::vector<at::Tensor> rows;
  for (const at::Tensor &g : groups(t, chunk))
    rows.push_back(f(g));
  return at::stack(rows);
}

struct Reduced {
  at::Tensor out0, out1;
};

Reduced runReduce(gpu::Reduction kind, const at::Tensor &dy,
                  const at::Tensor &x, gpu::Layout layout, int64_t chunk,
                  const at::Tensor &center, bool misaligned) {
  at::ScalarType acc = accOf(x.scalar_type());
  int64_t groupsCount = (x.size(0) + chunk - 1) / chunk;
  Raw xs(x, misaligned);
  std::unique_ptr<Raw> dys;
  if (dy.defined())
    dys = std::make_unique<Raw>(dy, misaligned);
  at::Tensor out0 = at::full({groupsCount, x.size(1)}, NAN, acc);
  at::Tensor out1 = at::full({groupsCount, x.size(1)}, NAN, acc);
  size_t bytes = gpu::reduceWorkspaceBytes(kind, dtypeOf(x.scalar_type()),
                                           layout, shapeOf(x), chunk);
  at::Tensor workspace = at::empty({int64_t(bytes) + 1}, at::kByte);
  bool two = kind == gpu::Reduction::Stats || kind == gpu::Reduction::GradStats;
  cudaError_t err = gpu::reduce(
      kind, dys ? dys->ptr() : nullptr,
      dtypeOf(dy.defined() ? dy.scalar_type() : x.scalar_type()), xs.ptr(),
      dtypeOf(x.scalar_type()), layout, shapeOf(x), chunk,
      center.defined() ? center.data_ptr() : nullptr, out0.data_ptr(),
      two ? out1.data_ptr() : nullptr, workspace.data_ptr(), bytes, nullptr);
  EXPECT_EQ(err, cudaSuccess);
  return {out0, out1};
}

TEST(OpsCudaEmulationTest, Reductions) {
  for (const ReduceCase &c : kReduceCases) {
    // Large outputs also under other device sizes: splits and block shapes
    // follow the multiprocessor count.
    int64_t perOutput = std::min(c.chunk, c.sizes[0]) * c.sizes[2] * c.sizes[3];
    std::vector<int> smCounts = {4};
    if (perOutput > 4096)
      smCounts = {1, 4, 64};
    for (int sms : smCounts)
      for (at::ScalarType dtype : kDtypes)
        for (gpu::Layout layout : kLayouts)
          for (bool misaligned : {false, true}) {
            // Double has the same paths as float, and a slow emulation.
            if (misaligned && dtype == at::kDouble)
              continue;
            cudaEmulation::multiprocessorCount = sms;
            std::string what = describe(dtype, layout, c.sizes, misaligned) +
                               " chunk " + std::to_string(c.chunk) + ", " +
                               std::to_string(sms) + " SMs";
            SCOPED_TRACE(what);
            at::Tensor x = activation(c.sizes, dtype, layout);
            at::Tensor dy = activation(c.sizes, dtype, layout);
            at::Tensor xd = x.to(at::kDouble), dyd = dy.to(at::kDouble);
            double tol = dtype == at::kDouble ? 1e-10 : 2e-5;
            // Sums cancel terms of about 1: their rounding grows with the
            // root of their count.
            double sumScale = std::sqrt(double(perOutput));
            at::ScalarType acc = accOf(dtype);

            Reduced mean = runReduce(gpu::Reduction::Mean, {}, x, layout,
                                     c.chunk, {}, misaligned);
            expectClose(mean.out0,
                        perGroup(xd, c.chunk,
                                 [](auto g) {
                                   return g.mean({0, 2, 3});
                                 }),
                        tol, what + " mean");

            Reduced dot = runReduce(gpu::Reduction::Dot, dy, x, layout, c.chunk,
                                    {}, misaligned);
            expectClose(dot.out0,
                        perGroup(dyd * xd, c.chunk,
                                 [](auto g) {
                                   return g.sum({0, 2, 3});
                                 }),
                        tol, what + " dot", sumScale);

            Reduced stats = runReduce(gpu::Reduction::Stats, {}, x, layout,
                                      c.chunk, {}, misaligned);
            expectClose(stats.out0,
                        perGroup(xd, c.chunk,
                                 [](auto g) {
                                   return g.mean({0, 2, 3});
                                 }),
                        tol, what + " stats mean");
            expectClose(stats.out1,
                        perGroup(xd, c.chunk,
                                 [](auto g) {
                                   return g.var({0, 2, 3}, /*unbiased=*/false);
                                 }),
                        tol, what + " stats variance");

            at::Tensor center = perGroup(xd, c.chunk, [](auto g) {
                                  return g.mean({0, 2, 3});
                                }).to(acc);
            Reduced grad = runReduce(gpu::Reduction::GradStats, dy, x, layout,
                                     c.chunk, center, misaligned);
            expectClose(grad.out0,
                        perGroup(dyd, c.chunk,
                                 [](auto g) {
                                   return g.sum({0, 2, 3});
                                 }),
                        tol, what + " sum dy", sumScale);
            std::vector<at::Tensor> rows;
            auto xg = groups(xd, c.chunk), dg = groups(dyd, c.chunk);
            for (size_t k = 0; k < xg.size(); ++k)
              rows.push_back(
                  (dg[k] *
                   (xg[k] - center[k].to(at::kDouble).view({1, -1, 1, 1})))
                      .sum({0, 2, 3}));
            expectClose(grad.out1, at::stack(rows), tol,
                        what + " sum dy (x - mean)", sumScale);
          }
  }
  cudaEmulation::multiprocessorCount = 4;
}

TEST(OpsCudaEmulationTest, SplitReductionsUseTheWorkspace) {
  // The split cases above must really split, or the merge goes untested.
  cudaEmulation::multiprocessorCount = 4;
  for (gpu::Layout layout : kLayouts)
    EXPECT_GT(gpu::reduceWorkspaceBytes(gpu::Reduction::Stats,
                                        gpu::DType::Float32, layout,
                                        {1, 2, 191, 193}, 1),
              0u);
  // Without it, a split reduction refuses to run.
  at::Tensor x = at::randn({1, 2, 191, 193});
  at::Tensor out = at::empty({1, 2}), out1 = at::empty({1, 2});
  EXPECT_EQ(gpu::reduce(gpu::Reduction::Stats, nullptr, gpu::DType::Float32,
                        x.data_ptr(), gpu::DType::Float32, gpu::Layout::NCHW,
                        shapeOf(x), 1, nullptr, out.data_ptr(), out1.data_ptr(),
                        nullptr, 0, nullptr),
            cudaErrorInvalidValue);
}

TEST(OpsCudaEmulationTest, StatisticsAreSoundAwayFromZero) {
  // Mean 100, spread 1: E[x^2] - E[x]^2 in float loses about three digits
  // of the variance; Welford does not.
  for (gpu::Layout layout : kLayouts) {
    at::Tensor x = (at::randn({8, 4, 32, 32}, at::kDouble) + 100)
                       .to(at::kFloat)
                       .contiguous(formatOf(layout));
    Reduced stats =
        runReduce(gpu::Reduction::Stats, {}, x, layout, 4, {}, false);
    at::Tensor xd = x.to(at::kDouble);
    expectClose(stats.out1,
                perGroup(xd, 4,
                         [](auto g) {
                           return g.var({0, 2, 3}, /*unbiased=*/false);
                         }),
                1e-5, "variance");
  }
}

TEST(OpsCudaEmulationTest, GradStatsFloatGradientOfLowPrecisionInput) {
  for (at::ScalarType dtype : {at::kBFloat16, at::kHalf})
    for (gpu::Layout layout : kLayouts) {
      SCOPED_TRACE(describe(dtype, layout, {5, 16, 6, 6}, false));
      at::Tensor x = activation({5, 16, 6, 6}, dtype, layout);
      at::Tensor dy = activation({5, 16, 6, 6}, at::kFloat, layout);
      at::Tensor center = at::randn({3, 16});
      Reduced r =
          runReduce(gpu::Reduction::GradStats, dy, x, layout, 2, center, false);
      at::Tensor xd = x.to(at::kDouble), dyd = dy.to(at::kDouble);
      std::vector<at::Tensor> rows;
      auto xg = groups(xd, 2), dg = groups(dyd, 2);
      for (size_t k = 0; k < xg.size(); ++k)
        rows.push_back(
            (dg[k] * (xg[k] - center[k].to(at::kDouble).view({1, -1, 1, 1})))
                .sum({0, 2, 3}));
      expectClose(r.out1, at::stack(rows), 2e-5, "sum dy (x - center)",
                  std::sqrt(2.0 * 36));
    }
}

//===----------------------------------------------------------------------===//
// Affine maps
//===----------------------------------------------------------------------===//

/// a, b, c per (group, channel), broadcast over each group's samples.
at::Tensor expand(const at::Tensor &perGroup, int64_t n, int64_t chunk) {
  std::vector<at::Tensor> rows;
  for (int64_t s = 0; s < n; ++s)
    rows.push_back(perGroup[s / chunk]);
  return at::stack(rows).to(at::kDouble).view({n, -1, 1, 1});
}

struct AffineTypes {
  at::ScalarType p, q, out;
  bool hasQ;
};

const AffineTypes kAffineTypes[] = {
    {at::kFloat, at::kFloat, at::kFloat, false},
    {at::kDouble, at::kDouble, at::kDouble, false},
    {at::kBFloat16, at::kBFloat16, at::kBFloat16, false},
    {at::kHalf, at::kHalf, at::kHalf, false},
    {at::kBFloat16, at::kBFloat16, at::kFloat, false},
    {at::kHalf, at::kHalf, at::kFloat, false},
    {at::kFloat, at::kFloat, at::kBFloat16, false},
    {at::kFloat, at::kFloat, at::kHalf, false},
    {at::kFloat, at::kFloat, at::kFloat, true},
    {at::kDouble, at::kDouble, at::kDouble, true},
    {at::kBFloat16, at::kBFloat16, at::kBFloat16, true},
    {at::kHalf, at::kHalf, at::kHalf, true},
    {at::kFloat, at::kBFloat16, at::kBFloat16, true},
    {at::kFloat, at::kHalf, at::kHalf, true},
};

TEST(OpsCudaEmulationTest, ChannelAffine) {
  const ReduceCase cases[] = {{{2, 3, 7, 5}, 1},
                              {{5, 16, 4, 4}, 2},
                              {{5, 64, 3, 3}, 3},
                              {{3, 40, 2, 6}, 5},
                              {{2, 264, 1, 3}, 1}};
  for (const ReduceCase &c : cases)
    for (const AffineTypes &t : kAffineTypes)
      for (gpu::Layout layout : kLayouts)
        for (bool misaligned : {false, true})
          for (bool constant : {false, true}) {
            std::string what = describe(t.p, layout, c.sizes, misaligned) +
                               (t.hasQ ? " two inputs" : " one input") +
                               " out " + c10::toString(t.out) +
                               (constant ? " with c" : "");
            SCOPED_TRACE(what);
            int64_t n = c.sizes[0], k = (n + c.chunk - 1) / c.chunk;
            at::ScalarType acc = accOf(t.out);
            at::Tensor p = activation(c.sizes, t.p, layout);
            at::Tensor q = activation(c.sizes, t.q, layout);
            at::Tensor a = at::randn({k, c.sizes[1]}).to(acc);
            at::Tensor b = at::randn({k, c.sizes[1]}).to(acc);
            at::Tensor cc = at::randn({k, c.sizes[1]}).to(acc);
            at::Tensor expected = expand(a, n, c.chunk) * p.to(at::kDouble);
            if (t.hasQ)
              expected = expected + expand(b, n, c.chunk) * q.to(at::kDouble);
            if (constant)
              expected = expected + expand(cc, n, c.chunk);
            Raw ps(p, misaligned), qs(q, misaligned);
            Raw out(p.sizes(), t.out, formatOf(layout), misaligned);
            ASSERT_TRUE(gpu::channelAffineSupported(
                dtypeOf(t.p), t.hasQ, dtypeOf(t.q), dtypeOf(t.out)));
            ASSERT_EQ(gpu::channelAffine(
                          ps.ptr(), dtypeOf(t.p), t.hasQ ? qs.ptr() : nullptr,
                          dtypeOf(t.q), out.ptr(), dtypeOf(t.out), layout,
                          shapeOf(p), c.chunk, a.data_ptr(),
                          t.hasQ ? b.data_ptr() : nullptr,
                          constant ? cc.data_ptr() : nullptr, nullptr),
                      cudaSuccess);
            expectClose(out.tensor(), expected, toleranceOf(t.out), what);
          }
}

//===----------------------------------------------------------------------===//
// Refusals
//===----------------------------------------------------------------------===//

TEST(OpsCudaEmulationTest, UnsupportedCallsAreRefused) {
  float data[64] = {};
  gpu::Shape shape{1, 1, 8, 8};
  EXPECT_EQ(gpu::blur(data, data, gpu::DType::Float32, gpu::Layout::NCHW, shape,
                      data, {0, 1}, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(gpu::blur(data, data, gpu::DType::Float32, gpu::Layout::NCHW,
                      {1, 1, 0, 8}, data, {1, 1}, nullptr),
            cudaErrorInvalidValue);
  EXPECT_FALSE(gpu::reduceSupported(gpu::Reduction::Dot, gpu::DType::Float32,
                                    gpu::DType::BFloat16));
  EXPECT_TRUE(gpu::reduceSupported(gpu::Reduction::GradStats,
                                   gpu::DType::Float32, gpu::DType::Float16));
  EXPECT_FALSE(gpu::channelAffineSupported(
      gpu::DType::BFloat16, true, gpu::DType::Float16, gpu::DType::Float16));
  EXPECT_EQ(gpu::channelAffine(data, gpu::DType::BFloat16, data,
                               gpu::DType::Float16, data, gpu::DType::Float16,
                               gpu::Layout::NCHW, shape, 1, data, data, nullptr,
                               nullptr),
            cudaErrorInvalidValue);
  // Nothing to do is no error.
  EXPECT_EQ(gpu::blur(nullptr, nullptr, gpu::DType::Float32, gpu::Layout::NHWC,
                      {0, 3, 4, 4}, nullptr, {2, 2}, nullptr),
            cudaSuccess);
}

//===----------------------------------------------------------------------===//
// The LibTorch side against the CPU kernels
//===----------------------------------------------------------------------===//

/// One primitive's results on both devices, compared.
void expectSame(const at::Tensor &cuda, const at::Tensor &cpu, double tolerance,
                const std::string &what, double scale = 1) {
  EXPECT_EQ(cuda.scalar_type(), cpu.scalar_type()) << what;
  EXPECT_EQ(cuda.is_contiguous(), cpu.is_contiguous()) << what;
  expectClose(cuda, cpu, tolerance, what, scale);
}

TEST(OpsCudaEmulationTest, CudaKernelsMatchCpuKernels) {
  const DeviceKernels &onGpu = cudaKernels(), &onCpu = cpuKernels();
  for (at::ScalarType dtype : kDtypes)
    for (gpu::Layout layout : kLayouts) {
      std::string what = describe(dtype, layout, {5, 16, 9, 8}, false);
      SCOPED_TRACE(what);
      double tol = 2 * toleranceOf(dtype);
      double sumTol = dtype == at::kDouble ? 1e-10 : 1e-4;
      at::ScalarType acc = accOf(dtype);
      at::Tensor x = activation({5, 16, 9, 8}, dtype, layout);
      at::Tensor filter = at::rand({16, 1, 3, 3});
      BlurGeometry stride{2, 2};
      MaxPoolGeometry pool{3, 3, 1, 1, 1, 1};

      at::Tensor y = onGpu.blur(x, filter, stride);
      expectSame(y, onCpu.blur(x, filter, stride), tol, what + " blur");
      at::Tensor g = activation(y.sizes(), dtype, layout);
      expectSame(onGpu.blurBackward(g, filter, 9, 8, stride),
                 onCpu.blurBackward(g, filter, 9, 8, stride), tol,
                 what + " blurBackward");
      y = onGpu.maxBlur(x, filter, pool, stride);
      expectSame(y, onCpu.maxBlur(x, filter, pool, stride), tol,
                 what + " maxBlur");
      expectSame(onGpu.maxBlurBackward(g, x, filter, pool, stride),
                 onCpu.maxBlurBackward(g, x, filter, pool, stride), tol,
                 what + " maxBlurBackward");

      at::Tensor dy = activation(x.sizes(), dtype, layout);
      expectSame(onGpu.channelMean(x), onCpu.channelMean(x), sumTol,
                 what + " channelMean");
      expectSame(onGpu.channelDot(dy, x), onCpu.channelDot(dy, x), sumTol,
                 what + " channelDot", 10);
      at::Tensor scale = at::randn({5, 16}).to(acc);
      at::Tensor shift = at::randn({5, 16}).to(acc);
      expectSame(onGpu.scaleChannels(x, scale, {}, dtype),
                 onCpu.scaleChannels(x, scale, {}, dtype), tol,
                 what + " scaleChannels");
      expectSame(onGpu.scaleChannels(x, scale, shift, dtype),
                 onCpu.scaleChannels(x, scale, shift, dtype), tol,
                 what + " scaleChannels with shift");

      auto [mean, var] = onGpu.chunkStats(x, 2);
      auto [cpuMean, cpuVar] = onCpu.chunkStats(x, 2);
      expectSame(mean, cpuMean, sumTol, what + " chunkStats mean");
      expectSame(var, cpuVar, sumTol, what + " chunkStats variance");
      auto [sumDy, sumDyXmu] = onGpu.chunkGradStats(dy, x, mean, 2);
      auto [cpuSumDy, cpuSumDyXmu] = onCpu.chunkGradStats(dy, x, mean, 2);
      expectSame(sumDy, cpuSumDy, sumTol, what + " chunkGradStats dy", 10);
      expectSame(sumDyXmu, cpuSumDyXmu, sumTol,
                 what + " chunkGradStats dy (x - mean)", 10);

      at::Tensor a = at::randn({3, 16}).to(acc), b = at::randn({3, 16}).to(acc),
                 c = at::randn({3, 16}).to(acc);
      expectSame(onGpu.chunkAffine(x, a, b, 2, dtype),
                 onCpu.chunkAffine(x, a, b, 2, dtype), tol,
                 what + " chunkAffine");
      expectSame(onGpu.chunkAffine2(dy, x, a, b, c, 2, dtype),
                 onCpu.chunkAffine2(dy, x, a, b, c, 2, dtype), tol,
                 what + " chunkAffine2");
      if (dtype == at::kBFloat16 || dtype == at::kHalf)
        expectSame(onGpu.chunkAffine(x, a, b, 2, at::kFloat),
                   onCpu.chunkAffine(x, a, b, 2, at::kFloat), 2e-5,
                   what + " chunkAffine to float");
    }
}

TEST(OpsCudaEmulationTest, CudaKernelsTakeMixedDtypes) {
  // Pairs the kernels take as they are (float dy of a low-precision x) and
  // pairs CudaKernels casts first; the CPU kernels see one dtype.
  const DeviceKernels &onGpu = cudaKernels(), &onCpu = cpuKernels();
  for (gpu::Layout layout : kLayouts)
    for (auto [dyType, xType] :
         {std::pair{at::kFloat, at::kBFloat16},
          std::pair{at::kFloat, at::kHalf}, std::pair{at::kBFloat16, at::kHalf},
          std::pair{at::kHalf, at::kFloat}}) {
      std::string what = describe(xType, layout, {4, 8, 5, 6}, false) + " dy " +
                         c10::toString(dyType);
      SCOPED_TRACE(what);
      at::Tensor x = activation({4, 8, 5, 6}, xType, layout);
      at::Tensor dy = activation({4, 8, 5, 6}, dyType, layout);
      at::Tensor xf = x.to(at::kFloat), dyf = dy.to(at::kFloat);
      at::Tensor mean = at::randn({2, 8});
      auto [sumDy, sumDyXmu] = onGpu.chunkGradStats(dy, x, mean, 2);
      auto [cpuSumDy, cpuSumDyXmu] = onCpu.chunkGradStats(dyf, xf, mean, 2);
      expectClose(sumDy, cpuSumDy, 1e-4, what + " sum dy", 10);
      expectClose(sumDyXmu, cpuSumDyXmu, 1e-4, what + " sum dy (x - mean)", 10);
      expectClose(onGpu.channelDot(dy, x), onCpu.channelDot(dyf, xf), 1e-4,
                  what + " channelDot", 10);
      at::Tensor a = at::randn({2, 8}), b = at::randn({2, 8}),
                 c = at::randn({2, 8});
      at::Tensor out = onGpu.chunkAffine2(dy, x, a, b, c, 2, xType);
      EXPECT_EQ(out.scalar_type(), xType);
      expectClose(out, onCpu.chunkAffine2(dyf, xf, a, b, c, 2, at::kFloat),
                  2 * toleranceOf(xType), what + " chunkAffine2");
    }
}

/// Runs f, expecting a c10::Error whose message holds `part`.
template <typename F> void expectError(F f, const std::string &part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one saying '" << part << "'";
  } catch (const c10::Error &e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(OpsCudaEmulationTest, CudaKernelsCheckTheContract) {
  const DeviceKernels &kernels = cudaKernels();
  at::Tensor x = at::randn({2, 4, 6, 6});
  at::Tensor filter = at::rand({4, 1, 3, 3});
  expectError([&] { kernels.blur(x[0], filter, {2, 2}); }, "4-D");
  expectError(
      [&] {
        kernels.blur(x.transpose(2, 3), filter, {2, 2});
      },
      "must be contiguous");
  expectError(
      [&] {
        kernels.blur(x.to(at::kInt), filter, {2, 2});
      },
      "bfloat16");
  expectError(
      [&] {
        kernels.blur(x, at::rand({4, 3, 3}), {2, 2});
      },
      "(4, 1, 3, 3) filter");
  expectError([&] { kernels.blur(x, filter, {0, 2}); }, "stride");
  expectError(
      [&] {
        kernels.channelDot(x.contiguous(at::MemoryFormat::ChannelsLast), x);
      },
      "channels_last");
  expectError(
      [&] {
        kernels.chunkAffine(x, at::rand({2, 4}), at::rand({2, 4}), 2,
                            at::kFloat);
      },
      "of 1 x 4 values");
  expectError(
      [&] {
        kernels.blurBackward(x, filter, 20, 20, {2, 2});
      },
      "does not match");
}

} // namespace
