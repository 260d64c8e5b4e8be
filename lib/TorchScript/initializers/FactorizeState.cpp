//===- FactorizeState.cpp - composer-factorize's SVD factors -------------===//
//
// "svd_first:<key>" / "svd_second:<key>" (FactorizeState.h): a factor of the
// best rank-r approximation of the model's tensor <key>, W (out, fan_in) =
// U S V^T: sqrt(S_r) V_r^T shaped (r, W's other dims) or U_r sqrt(S_r)
// shaped (out, r, 1...), r read from the declared shape. The pair computes W
// exactly at r = min(out, fan_in). "svd_first_t" / "svd_second_t": W is the
// source's transpose (a 2-D source stored [in, out]).
//
//===----------------------------------------------------------------------===//

#include "../StateInitializer.h"

#include "composer/Support/FactorizeState.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include <ATen/Parallel.h>

using namespace mlir;
using namespace composer;

namespace {

/// The leading singular triplets of a weight W reshaped to (out, fan_in),
/// W ~ U S V^T, in float64 (computeTruncatedSvd).
struct Svd {
  at::Tensor u, s, vh;
};

/// The SVDs of one export, by source key ("^T" appended for a transpose):
/// both factors of a pair, and pairs of the same weight, slice one SVD.
struct SvdCache {
  llvm::StringMap<Svd> svds;
};

/// The `rank` leading singular triplets of `matrix` (m x n), in float64,
/// each pair's sign fixed so that the largest entry of U's column is
/// positive (LAPACK's signs are arbitrary; fixed, a reference computing the
/// same SVD gets the same factors).
///
/// From the eigendecomposition of the smaller Gram matrix (W W^T if m <= n):
/// U_r, then V_r = W^T U_r / S_r. Its cost is one threaded matrix product
/// and a k x k eigensolver (k = min(m, n)), where LAPACK's SVD of the whole
/// matrix grows with max(m, n) too. U_r U_r^T W is W's projection on U_r,
/// so the pair reproduces W exactly at full rank however the small singular
/// values round; dividing by them is what needs them accurate, so a matrix
/// whose r-th singular value is below 1e-6 of the largest (squared, under
/// float64's precision) takes the full SVD.
Svd computeTruncatedSvd(const at::Tensor &matrix, int64_t rank) {
  at::Tensor w = matrix.to(at::kDouble);
  bool wide = w.size(0) <= w.size(1);
  at::Tensor gram = wide ? w.mm(w.t()) : w.t().mm(w);
  auto [eigenvalues, eigenvectors] = at::linalg_eigh(gram);
  // Descending, the leading `rank`.
  at::Tensor s = eigenvalues.flip(0).slice(0, 0, rank).clamp_min(0).sqrt();
  at::Tensor basis = eigenvectors.flip(1).slice(1, 0, rank);
  double largest = s[0].item<double>();
  at::Tensor u, vh;
  if (largest > 0 && s[rank - 1].item<double>() > 1e-6 * largest) {
    at::Tensor other = (wide ? w.t().mm(basis) : w.mm(basis)) / s;
    u = wide ? basis : other;
    vh = (wide ? other : basis).t();
  } else {
    // On one thread: LAPACK's SVD makes many small BLAS calls, each an
    // OpenMP parallel region, and a region's barrier spins while the
    // machine's other work holds the cores; one thread has no barrier.
    struct OneThread {
      int saved = at::get_num_threads();
      OneThread() { at::set_num_threads(1); }
      ~OneThread() { at::set_num_threads(saved); }
    } oneThread;
    auto [fullU, fullS, fullVh] = at::linalg_svd(w, /*full_matrices=*/false);
    u = fullU.slice(1, 0, rank);
    s = fullS.slice(0, 0, rank);
    vh = fullVh.slice(0, 0, rank);
  }
  at::Tensor peak = u.gather(0, u.abs().argmax(0).unsqueeze(0));
  at::Tensor signs = at::where(peak < 0, -1.0, 1.0);
  return Svd{u * signs, s, vh * signs.t()};
}

/// One of the four factor kinds.
class SvdFactor final : public StateInitializer {
public:
  SvdFactor(StringRef kind, bool first, bool transposed)
      : StateInitializer(kind, Argument::Required, "key"), first(first),
        transposed(transposed) {}

  FailureOr<at::Tensor> materialize(const StateRequest &request,
                                    InitializerContext &context) const final;

private:
  /// sqrt(S_r) V_r^T, else U_r sqrt(S_r).
  bool first;
  /// Of the source's transpose.
  bool transposed;
};

FailureOr<at::Tensor>
SvdFactor::materialize(const StateRequest &request,
                       InitializerContext &context) const {
  StringRef key = request.key, source = request.argument;
  Location loc = request.loc;
  std::optional<at::Tensor> weight = context.lookupTensor(source);
  if (!weight || !weight->is_floating_point() || weight->dim() < 2 ||
      weight->numel() == 0 || (transposed && weight->dim() != 2))
    return emitError(loc, "'")
           << key << "': SVD source '" << source
           << "' is not a non-empty floating-point tensor of "
           << (transposed ? "2" : "2 or more") << " dimensions in the model";
  if (transposed)
    weight = weight->t();
  int64_t out = weight->size(0);
  int64_t fanIn = weight->numel() / out;
  ArrayRef<int64_t> shape = request.declared.getSizes();
  int64_t rank = shape.size() >= 2 ? shape[first ? 0 : 1] : 0;
  std::vector<int64_t> expected(weight->dim(), 1);
  if (first)
    expected = weight->sizes().vec();
  else
    expected[0] = out;
  expected[first ? 0 : 1] = rank;
  if (shape != ArrayRef<int64_t>(expected) || rank < 1 ||
      rank > std::min(out, fanIn))
    return emitError(loc, "'")
           << key << "' " << request.declared << " is not a rank-r "
           << (first ? "first" : "second") << " factor of '" << source << "' ("
           << ArrayRef<int64_t>(weight->sizes().vec())
           << "), 1 <= r <= " << std::min(out, fanIn);
  llvm::StringMap<Svd> &svds = context.getData<SvdCache>().svds;
  std::string cacheKey = (source + (transposed ? "^T" : "")).str();
  auto it = svds.find(cacheKey);
  if (it == svds.end() || it->second.s.size(0) < rank)
    it = svds.insert_or_assign(
                 cacheKey, computeTruncatedSvd(
                               weight->detach().reshape({out, fanIn}), rank))
             .first;
  const Svd &svd = it->second;
  at::Tensor root = svd.s.slice(0, 0, rank).sqrt();
  at::Tensor factor = first ? root.unsqueeze(1) * svd.vh.slice(0, 0, rank)
                            : svd.u.slice(1, 0, rank) * root.unsqueeze(0);
  return factor.reshape(shape.vec()).to(request.dtype).contiguous();
}

const StateInitializerRegistration registration(
    std::make_unique<SvdFactor>(kSvdFirstInit, /*first=*/true,
                                /*transposed=*/false),
    std::make_unique<SvdFactor>(kSvdSecondInit, /*first=*/false,
                                /*transposed=*/false),
    std::make_unique<SvdFactor>(kSvdFirstOfTransposeInit, /*first=*/true,
                                /*transposed=*/true),
    std::make_unique<SvdFactor>(kSvdSecondOfTransposeInit, /*first=*/false,
                                /*transposed=*/true));

} // namespace
