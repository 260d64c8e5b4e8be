//===- AtenKinds.h - the aten kinds the passes know -------------*- C++ -*-===//
//
// The one vocabulary of TorchScript node kinds: AtenKind enumerates the
// kinds in AtenKinds.td, and AtenKindInfo says what each one is (its traits,
// its autocast class per device, its FLOP rule). Passes ask these, for typed
// and generic ops alike, instead of keeping kind sets.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_DIALECT_ATENKINDS_H
#define COMPOSER_DIALECT_ATENKINDS_H

#include "llvm/ADT/BitmaskEnum.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir {
class Operation;
} // namespace mlir

namespace composer {

#include "composer/Dialect/AtenKinds.h.inc"

/// What a kind is; AtenKindBase.td says what each trait guarantees.
enum class AtenTrait : uint32_t {
  None = 0,
  ElementwiseUnary = 1u << 0,
  ElementwiseBinary = 1u << 1,
  ShapePreserving = 1u << 2,
  Activation = 1u << 3,
  DropoutLike = 1u << 4,
  View = 1u << 5,
  Convolution = 1u << 6,
  Transposed = 1u << 7,
  /// Writes operand 0 and returns it (a trailing `_`).
  InPlace = 1u << 8,
  HasGradient = 1u << 9,
  BoolResult = 1u << 10,
  AccumulatesInFp32 = 1u << 11,
  LLVM_MARK_AS_BITMASK_ENUM(/*LargestValue=*/AccumulatesInFp32)
};
LLVM_ENABLE_BITMASK_ENUMS_IN_NAMESPACE();

/// How autocast treats a kind on one device (AtenKindBase.td).
enum class AutocastClass : uint8_t { Follow, Lower, Fp32, Promote, SameDtype };

/// The device whose autocast lists and low-precision kernels a
/// mixed-precision model must run with. `Any` takes the low dtype only where
/// every device does, so the output runs wherever it is loaded.
enum class AutocastDevice { Any, Cpu, Cuda };

/// How the FLOP count reads a generic node of the kind (AtenKindBase.td).
enum class FlopRule : uint8_t {
  Pointwise,
  Free,
  Matmul,
  Addmm,
  Linear,
  Convolution,
  TransposedConvolution,
  Attention,
  Normalization,
  Softmax,
  Unknown,
};

struct AtenKindInfo {
  AtenKind kind;
  /// `aten::<name>`, without an overload.
  const char *name;
  AtenTrait traits;
  AutocastClass cpuAutocast;
  AutocastClass cudaAutocast;
  /// Bit i: the autocast class applies to operand i (zero: to all).
  uint32_t autocastOperandMask;
  FlopRule flopRule;

  llvm::StringRef getName() const { return name; }
  bool has(AtenTrait trait) const { return (traits & trait) == trait; }
  AutocastClass getAutocastClass(AutocastDevice device) const {
    switch (device) {
    case AutocastDevice::Cpu:
      return cpuAutocast;
    case AutocastDevice::Cuda:
      return cudaAutocast;
    case AutocastDevice::Any:
      break;
    }
    // The devices' classes differ only where one has no low kernel (Fp32
    // there); the output must run on both, so Fp32 wins.
    if (cpuAutocast == AutocastClass::Fp32 ||
        cudaAutocast == AutocastClass::Fp32)
      return AutocastClass::Fp32;
    return cpuAutocast;
  }
  /// Whether the autocast class applies to operand `index`.
  bool isAutocastOperand(unsigned index) const {
    return autocastOperandMask == 0 ||
           (index < 32 && (autocastOperandMask >> index & 1));
  }
};

const AtenKindInfo &getAtenKindInfo(AtenKind kind);

/// `aten::<name>` of `kind`.
llvm::StringRef getAtenKindName(AtenKind kind);

/// The kind named `name` (`aten::add` or with an overload, `aten::add.Tensor`),
/// or null if the table has none.
const AtenKindInfo *lookupAtenKind(llvm::StringRef name);

/// The kind `op` computes: a generic op's kind; a typed op's schema, its
/// in-place schema where the op is in place. Null for other ops and kinds
/// outside the table.
const AtenKindInfo *lookupAtenKind(mlir::Operation *op);

/// Whether `op` computes a kind with `trait`.
bool hasAtenTrait(mlir::Operation *op, AtenTrait trait);

} // namespace composer

#endif // COMPOSER_DIALECT_ATENKINDS_H
