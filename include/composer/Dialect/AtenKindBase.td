//===- AtenKindBase.td - what a pass may know of a kind ----*- tablegen -*-===//
//
// The classes AtenKinds.td describes TorchScript node kinds with. Passes
// recognise nodes without a typed op (composer.op "aten::...") and typed ops
// by the traits of their kind, generated into a lookup by composer-tblgen
// (-gen-aten-kind-decls / -gen-aten-kind-defs), never by sets of their own.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ATEN_KIND_BASE
#define COMPOSER_ATEN_KIND_BASE

// A property of a kind; `cppName` is its AtenTrait enumerator. Traits
// describe a kind's tensor overloads: its scalar and list overloads (aten::add
// of two ints or two lists) are the same kind, so a pass that relies on a
// trait checks that the operands it reads are tensors.
class AtenTrait<string cppName> {
  string name = cppName;
}

// The result is f(operand 0) element by element; other operands are
// scalars or options (relu, exp, clamp).
def ElementwiseUnary : AtenTrait<"ElementwiseUnary">;
// A float function whose gradient is not zero almost everywhere: what an
// activation can be built of (exp, erf, clamp), unlike rounding, sign or
// bitwise functions.
def HasGradient : AtenTrait<"HasGradient">;
// The result is f(operand 0, operand 1) element by element, the two
// broadcast against each other (add, mul, eq).
def ElementwiseBinary : AtenTrait<"ElementwiseBinary">;
// The result is bool whatever the operands' dtypes (eq, lt, logical_not).
def BoolResult : AtenTrait<"BoolResult">;
// The result has operand 0's shape and dtype whatever the other operands
// are; type inference gives it operand 0's type.
def ShapePreserving : AtenTrait<"ShapePreserving">;
// A nonlinearity a network applies between layers: what GLU gates with, what
// a residual block applies to its sum.
def Activation : AtenTrait<"Activation">;
// Zeroes elements at random in training and is the identity in eval.
def DropoutLike : AtenTrait<"DropoutLike">;
// Returns operand 0's data under another shape or order, without arithmetic
// (a view or a reshape); its in-place form changes operand 0's metadata.
def View : AtenTrait<"View">;

// An fp32-list kind whose kernels compute in fp32 for a low input and round
// only the result (softmax, log_softmax): run on a low input, it differs from
// its fp32 run by that rounding alone.
def AccumulatesInFp32 : AtenTrait<"AccumulatesInFp32">;

// An aten convolution: (input, weight, bias, ...), its weight operand 1.
def Convolution : AtenTrait<"Convolution">;
// A convolution that is transposed whatever its operands; aten::_convolution
// and aten::convolution say so in their `transposed` operand instead.
def Transposed : AtenTrait<"Transposed">;

// How autocast treats a kind on one device, as PyTorch's autocast lists do.
class AutocastClass<string cppName> {
  string name = cppName;
}
// Runs in the input's dtype (no list).
def AutocastFollow : AutocastClass<"Follow">;
// The lower_precision_fp list: its float operands are cast down.
def AutocastLower : AutocastClass<"Lower">;
// The fp32 list: its float operands are cast up.
def AutocastFp32 : AutocastClass<"Fp32">;
// Elementwise arithmetic: where a low operand meets an fp32 one, the low one
// is cast up explicitly, as type promotion would. The cast must be in the
// graph: TorchScript's autodiff does not cast a gradient back to its input's
// dtype, so without it a low op's backward would receive an fp32 gradient.
def AutocastPromote : AutocastClass<"Promote">;
// No type promotion: the operands listed must have one dtype.
def AutocastSameDtype : AutocastClass<"SameDtype">;

// How FlopCountOpInterface counts a generic node of the kind.
class FlopRule<string cppName> {
  string name = cppName;
}
def PointwiseFlops : FlopRule<"Pointwise">;   // FLOPs per output element
def FreeFlops : FlopRule<"Free">;             // moves or makes data
def MatmulFlops : FlopRule<"Matmul">;         // mm, bmm, matmul
def AddmmFlops : FlopRule<"Addmm">;           // beta * input + alpha * a @ b
def LinearFlops : FlopRule<"Linear">;         // x W^T + b
def ConvolutionFlops : FlopRule<"Convolution">;
def TransposedConvolutionFlops : FlopRule<"TransposedConvolution">;
def AttentionFlops : FlopRule<"Attention">;   // softmax(q k^T) v
def NormalizationFlops : FlopRule<"Normalization">;
def SoftmaxFlops : FlopRule<"Softmax">;
def UnknownFlops : FlopRule<"Unknown">;       // a count is not attempted

// One TorchScript node kind, `aten::<name>` (the schema name without its
// overload). Names and schemas follow torch-mlir's GeneratedTorchOps.td
// (Torch_AtenReluOp is aten::relu). `cppName` is its AtenKind enumerator when
// the name is no C++ identifier. `hasInPlace` also declares `<name>_`, which
// writes operand 0: it keeps the kind's traits and autocast class, and it is
// shape-preserving unless the kind is a View.
class AtenKind<string kindName, list<AtenTrait> kindTraits = [],
               AutocastClass autocast = AutocastFollow,
               FlopRule flops = PointwiseFlops> {
  string name = kindName;
  string cppName = "";
  list<AtenTrait> traits = kindTraits;
  AutocastClass cpuAutocast = autocast;
  AutocastClass cudaAutocast = autocast;
  // The operands the autocast class applies to: the float inputs a Lower
  // kind casts, the operands a Promote or SameDtype kind matches. Empty for
  // a Lower kind is all of them.
  list<int> autocastOperands = [];
  FlopRule flopRule = flops;
  bit hasInPlace = 0;
}

class ActivationKind<string name, bit inplace = 1>
    : AtenKind<name, [ElementwiseUnary, ShapePreserving, Activation,
                      HasGradient]> {
  let hasInPlace = inplace;
}
class UnaryMathKind<string name, AutocastClass autocast = AutocastFollow>
    : AtenKind<name, [ElementwiseUnary, ShapePreserving, HasGradient],
               autocast> {
  let hasInPlace = 1;
}
// Integer-valued functions of one tensor (rounding, sign, bitwise).
class RoundingKind<string name>
    : AtenKind<name, [ElementwiseUnary, ShapePreserving]> {
  let hasInPlace = 1;
}
class BinaryArithmeticKind<string name, bit inplace = 1>
    : AtenKind<name, [ElementwiseBinary], AutocastPromote> {
  let autocastOperands = [0, 1];
  let hasInPlace = inplace;
}
class ComparisonKind<string name>
    : AtenKind<name, [ElementwiseBinary, BoolResult]>;
class DropoutKind<string name>
    : AtenKind<name, [DropoutLike, ShapePreserving]> {
  let hasInPlace = 1;
}
class ViewKind<string name, bit inplace = 0>
    : AtenKind<name, [View], AutocastFollow, FreeFlops> {
  let hasInPlace = inplace;
}
// Moves, indexes or makes data without arithmetic; scalar and list ops.
class DataKind<string name, list<AtenTrait> traits = []>
    : AtenKind<name, traits, AutocastFollow, FreeFlops>;
class LowPrecisionKind<string name, FlopRule flops = PointwiseFlops,
                       list<AtenTrait> traits = []>
    : AtenKind<name, traits, AutocastLower, flops>;
class Fp32Kind<string name, FlopRule flops = PointwiseFlops>
    : AtenKind<name, [], AutocastFp32, flops>;
class SameDtypeKind<string name, list<int> operands>
    : AtenKind<name, [], AutocastSameDtype> {
  let autocastOperands = operands;
  let hasInPlace = 1;
}

#endif // COMPOSER_ATEN_KIND_BASE
