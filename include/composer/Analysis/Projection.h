//===- Projection.h - learned linear maps, however written ------*- C++ -*-===//
//
// A projection is a learned affine map of a tensor's last dimension,
// y = x W^T + b, in the forms models write it:
//   - nn.Linear: aten::linear(x, W, b), W stored [out, in];
//   - GPT-2's Conv1D: W stored [in, out], x flattened to 2-D, multiplied by
//     addmm and viewed back to x's leading sizes:
//       addmm(b, x.view(-1, x.size(-1)), W).view(x.size()[:-1] + [out]);
//   - addmm(b, x, W) on a 2-D x.
// The methods that look for linears (stochastic depth's branches, GLU's
// feed-forwards, gyro dropout's feature sizes) see every form through it.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ANALYSIS_PROJECTION_H
#define COMPOSER_ANALYSIS_PROJECTION_H

#include "composer/Dialect/Composer.h"

#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace composer {

/// How a projection stores its weight.
enum class WeightLayout {
  /// [out, in], as nn.Linear.
  OutIn,
  /// [in, out], as GPT-2's Conv1D and addmm's mat2.
  InOut,
};

struct Projection {
  /// x, with any leading dimensions.
  mlir::Value input;
  mlir::Value weight;
  /// A tensor, or a None value.
  mlir::Value bias;
  /// y: x's leading sizes and the out features.
  mlir::Value result;
  WeightLayout layout = WeightLayout::OutIn;
  /// The op that multiplies: the linear or the addmm.
  mlir::Operation *product = nullptr;
  /// The ops that compute `result` from `input`, in block order: the
  /// product, and for a flattened input the two views and the size reads
  /// and lists that only they use. Erasing them in reverse order leaves
  /// nothing dead.
  llvm::SmallVector<mlir::Operation *> ops;

  /// The dimension of the weight that holds the out (in) features.
  unsigned getOutFeaturesDim() const {
    return layout == WeightLayout::OutIn ? 0 : 1;
  }
  unsigned getInFeaturesDim() const { return 1 - getOutFeaturesDim(); }

  /// Whether the projection's ops are all that read `input`.
  bool readsAllOfInput() const;
};

/// Whether `op` is the multiplying op of some projection form (a linear, or
/// an addmm with unit alpha and beta), whatever surrounds it.
bool isProjectionProduct(mlir::Operation *op);

/// The projection whose multiplying op is `product`.
std::optional<Projection> matchProjectionAt(mlir::Operation *product);

/// The projection that computes `result`.
std::optional<Projection> matchProjection(mlir::Value result);

/// The projections that read `input` as their x.
llvm::SmallVector<Projection> findProjectionsOf(mlir::Value input);

} // namespace composer

#endif // COMPOSER_ANALYSIS_PROJECTION_H
