//===- ALiBiState.cpp - what composer-alibi assumes of buffers ------------===//
//
// "tril_ones", "arange" and "zeros" (ALiBiState.h) on a buffer the model
// has are what composer-alibi assumed it holds when it rewrote the graph:
// it builds a causal-mask buffer's slices from the sequence length instead,
// removes the embedding of a position-index buffer, and builds a token-type
// buffer's slices as zeros of the sequence length. A tensor that differs
// fails the export, since the exported model would compute something else.
// "tril_ones" and "zeros" also make new state.
//
//===----------------------------------------------------------------------===//

#include "../StateInitializer.h"

#include "composer/Support/ALiBiState.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace composer;

namespace {

/// An initializer that states a buffer's whole value.
class AssumedValue : public StateInitializer {
public:
  AssumedValue(StringRef kind, StringRef holds)
      : StateInitializer(kind, Argument::None), holds(holds) {}

  LogicalResult check(const StateRequest &request, const at::Tensor &tensor,
                      InitializerContext &) const final {
    FailureOr<at::Tensor> expected = getExpected(request, tensor);
    if (failed(expected))
      return failure();
    if (expected->defined() && tensor.sizes() == expected->sizes() &&
        at::equal(tensor.detach().to(request.dtype), *expected))
      return success();
    return emitError(request.loc, "'")
           << request.key << "' does not hold " << holds << " (\"" << getKind()
           << "\"), which a pass assumed when it rewrote the graph "
              "(composer-alibi builds causal masks and token types from the "
              "sequence length and removes embeddings of positions): the "
              "exported model would compute something else";
  }

protected:
  /// The value `tensor` must equal; undefined if no tensor of its shape
  /// can hold it.
  virtual FailureOr<at::Tensor> getExpected(const StateRequest &request,
                                            const at::Tensor &tensor) const = 0;

private:
  /// The value, in words.
  StringRef holds;
};

/// Lower-triangular ones in the last two dimensions, the same in every
/// leading one, of the declared shape.
FailureOr<at::Tensor> makeTrilOnes(const StateRequest &request,
                                   StringRef kind) {
  std::vector<int64_t> shape = request.declared.getSizes().vec();
  if (shape.size() < 2)
    return emitError(request.loc, "'")
           << request.key << "': \"" << kind
           << "\" needs 2 or more dimensions, got " << request.declared;
  return at::ones({shape[shape.size() - 2], shape.back()},
                  at::TensorOptions().dtype(request.dtype))
      .tril()
      .expand(shape)
      .contiguous();
}

class TrilOnes final : public AssumedValue {
public:
  TrilOnes() : AssumedValue(kTrilOnesInit, "lower-triangular ones") {}

  FailureOr<at::Tensor> materialize(const StateRequest &request,
                                    InitializerContext &) const final {
    return makeTrilOnes(request, getKind());
  }

private:
  FailureOr<at::Tensor> getExpected(const StateRequest &request,
                                    const at::Tensor &) const final {
    return makeTrilOnes(request, getKind());
  }
};

class Arange final : public AssumedValue {
public:
  Arange() : AssumedValue(kArangeInit, "0..N-1 along its last dimension") {}

private:
  FailureOr<at::Tensor> getExpected(const StateRequest &request,
                                    const at::Tensor &tensor) const final {
    if (tensor.dim() < 1)
      return at::Tensor();
    return at::arange(tensor.size(-1), at::TensorOptions().dtype(request.dtype))
        .expand(tensor.sizes());
  }
};

class Zeros final : public AssumedValue {
public:
  Zeros() : AssumedValue(kZerosInit, "zeros") {}

  FailureOr<at::Tensor> materialize(const StateRequest &request,
                                    InitializerContext &) const final {
    return at::zeros(request.declared.getSizes().vec(),
                     at::TensorOptions().dtype(request.dtype));
  }

private:
  FailureOr<at::Tensor> getExpected(const StateRequest &request,
                                    const at::Tensor &tensor) const final {
    return at::zeros(tensor.sizes(), at::TensorOptions().dtype(request.dtype));
  }
};

const StateInitializerRegistration registration(std::make_unique<TrilOnes>(),
                                                std::make_unique<Arange>(),
                                                std::make_unique<Zeros>());

} // namespace
