//===- AtenKinds.td - the aten kinds the passes know -------*- tablegen -*-===//
//
// Every TorchScript node kind a pass, the type rules, autocast or the FLOP
// count recognises, with its traits. A kind a pass names must be here: the
// generated AtenKind enumerators are the only spelling passes use.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_ATEN_KINDS
#define COMPOSER_ATEN_KINDS

include "composer/Dialect/AtenKindBase.td"

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

def : ActivationKind<"relu">;
def : ActivationKind<"gelu">;
def : ActivationKind<"silu">;
def : ActivationKind<"sigmoid">;
def : ActivationKind<"tanh">;
def : ActivationKind<"hardswish">;
def : ActivationKind<"hardsigmoid">;
def : ActivationKind<"elu">;
def : ActivationKind<"selu">;
def : ActivationKind<"celu">;
def : ActivationKind<"leaky_relu">;
def : ActivationKind<"softplus", 0>;
def : ActivationKind<"threshold">;
def : ActivationKind<"hardshrink", 0>;
def : ActivationKind<"softshrink", 0>;
def : ActivationKind<"tanhshrink", 0>;
def : ActivationKind<"log_sigmoid", 0>;
// LibTorch 1.13 has no bf16 CPU kernel for these (hardtanh's backward,
// mish), so CPU autocast must keep them in fp32; CUDA runs them in the
// input's dtype.
let cpuAutocast = AutocastFp32, cudaAutocast = AutocastFollow in {
  def : ActivationKind<"relu6">;
  def : ActivationKind<"hardtanh">;
  def : ActivationKind<"mish">;
}

//===----------------------------------------------------------------------===//
// Elementwise math
//===----------------------------------------------------------------------===//

def : UnaryMathKind<"neg">;
def : UnaryMathKind<"abs">;
def : UnaryMathKind<"exp", AutocastFp32>;
def : UnaryMathKind<"exp2">;
def : UnaryMathKind<"log", AutocastFp32>;
def : UnaryMathKind<"log10", AutocastFp32>;
def : UnaryMathKind<"log2", AutocastFp32>;
def : UnaryMathKind<"log1p", AutocastFp32>;
def : UnaryMathKind<"sqrt">;
def : UnaryMathKind<"rsqrt", AutocastFp32>;
def : UnaryMathKind<"reciprocal">;
def : UnaryMathKind<"sin">;
def : UnaryMathKind<"cos">;
def : UnaryMathKind<"erf">;
def : UnaryMathKind<"square">;
def : RoundingKind<"sign">;
def : RoundingKind<"floor">;
def : RoundingKind<"ceil">;
def : RoundingKind<"round">;
def : RoundingKind<"trunc">;
def : UnaryMathKind<"frac">;
def : RoundingKind<"bitwise_not">;
def : UnaryMathKind<"clamp">;
def : UnaryMathKind<"clamp_min">;
def : UnaryMathKind<"clamp_max">;
def : AtenKind<"logical_not", [ElementwiseUnary, BoolResult]>;
def : AtenKind<"pow", [ElementwiseBinary], AutocastFp32> { let hasInPlace = 1; }

def : BinaryArithmeticKind<"add">;
def : BinaryArithmeticKind<"sub">;
def : BinaryArithmeticKind<"mul">;
def : BinaryArithmeticKind<"div">;
def : BinaryArithmeticKind<"true_divide">;
def : BinaryArithmeticKind<"rsub", 0>;
def : BinaryArithmeticKind<"maximum", 0>;
def : BinaryArithmeticKind<"minimum", 0>;
def : BinaryArithmeticKind<"floor_divide">;
def : BinaryArithmeticKind<"remainder">;
def : ComparisonKind<"eq">;
def : ComparisonKind<"ne">;
def : ComparisonKind<"lt">;
def : ComparisonKind<"le">;
def : ComparisonKind<"gt">;
def : ComparisonKind<"ge">;
// where(condition, self, other): self and other promote.
def : AtenKind<"where", [], AutocastPromote> {
  let autocastOperands = [1, 2];
}
// masked_fill(self, mask, value): the mask broadcasts to self.
def : AtenKind<"masked_fill", [ShapePreserving]> { let hasInPlace = 1; }

//===----------------------------------------------------------------------===//
// Regularization and copies
//===----------------------------------------------------------------------===//

def : DropoutKind<"dropout">;
def : DropoutKind<"feature_dropout">;
def : DropoutKind<"alpha_dropout">;
def : DropoutKind<"feature_alpha_dropout">;
def : DataKind<"clone", [ShapePreserving]>;
def : DataKind<"detach", [ShapePreserving]>;
def : DataKind<"contiguous", [ShapePreserving]>;
def : DataKind<"copy_">;
def : DataKind<"to">;
def : DataKind<"type_as">;
def : DataKind<"_autocast_to_reduced_precision">;
def : DataKind<"_autocast_to_full_precision">;

//===----------------------------------------------------------------------===//
// Views and reshapes
//===----------------------------------------------------------------------===//

def : ViewKind<"view">;
def : ViewKind<"view_as">;
def : ViewKind<"reshape">;
def : ViewKind<"reshape_as">;
def : ViewKind<"flatten">;
def : ViewKind<"permute">;
def : ViewKind<"transpose", 1>;
def : ViewKind<"t", 1>;
def : ViewKind<"expand">;
def : ViewKind<"expand_as">;
def : ViewKind<"slice">;
def : ViewKind<"select">;
def : ViewKind<"narrow">;
def : ViewKind<"unsqueeze", 1>;
def : ViewKind<"squeeze", 1>;
def : ViewKind<"unbind">;
def : ViewKind<"chunk">;
def : ViewKind<"split">;
def : ViewKind<"as_strided_">;
def : ViewKind<"swapaxes_">;
def : ViewKind<"swapdims_">;
def : ViewKind<"resize_">;
def : ViewKind<"resize_as_">;
def : ViewKind<"set_">;

//===----------------------------------------------------------------------===//
// Data: joins, indexing, factories, random draws
//===----------------------------------------------------------------------===//

def : DataKind<"cat">;
def : DataKind<"stack">;
def : DataKind<"repeat">;
def : DataKind<"flip">;
def : DataKind<"roll">;
def : DataKind<"pad">;
def : DataKind<"constant_pad_nd">;
def : DataKind<"tril">;
def : DataKind<"triu">;
def : DataKind<"embedding">;
def : DataKind<"index_select">;
def : DataKind<"gather">;
def : DataKind<"index">;
def : DataKind<"zeros">;
def : DataKind<"ones">;
def : DataKind<"zeros_like">;
def : DataKind<"ones_like">;
def : DataKind<"empty">;
def : DataKind<"empty_like">;
def : DataKind<"new_zeros">;
def : DataKind<"new_ones">;
def : DataKind<"full">;
def : DataKind<"arange">;
def : DataKind<"tensor">;
def : DataKind<"scalar_tensor">;
def : DataKind<"rand">;
def : DataKind<"randn">;
def : DataKind<"rand_like">;
def : DataKind<"randn_like">;
def : DataKind<"randint">;
def : DataKind<"bernoulli">;
def : AtenKind<"upsample_nearest2d">;
def : AtenKind<"upsample_bilinear2d">;
def : AtenKind<"upsample_bicubic2d">;

//===----------------------------------------------------------------------===//
// Scalars and lists
//===----------------------------------------------------------------------===//

def : DataKind<"size">;
def : DataKind<"dim">;
def : DataKind<"len">;
def : DataKind<"list">;
def : DataKind<"append">;
def : DataKind<"_set_item">;
def : DataKind<"Int">;
def : DataKind<"ScalarImplicit">;
def : DataKind<"Bool">;
def : DataKind<"float"> { let cppName = "to_float"; }
def : DataKind<"floordiv">;
def : DataKind<"__getitem__"> { let cppName = "getitem"; }
def : DataKind<"__not__"> { let cppName = "not_operator"; }

//===----------------------------------------------------------------------===//
// Contractions: autocast's lower_precision_fp list
//===----------------------------------------------------------------------===//

def : LowPrecisionKind<"conv1d", ConvolutionFlops, [Convolution]>;
def : LowPrecisionKind<"conv2d", ConvolutionFlops, [Convolution]>;
def : LowPrecisionKind<"conv3d", ConvolutionFlops, [Convolution]>;
// Transposed or not by their `transposed` operand, which autocast and the
// FLOP count read.
def : LowPrecisionKind<"_convolution", ConvolutionFlops, [Convolution]>;
def : LowPrecisionKind<"convolution", ConvolutionFlops, [Convolution]>;
def : LowPrecisionKind<"conv_tbc">;
// LibTorch 1.13 has no bf16 CPU kernel for transposed convolutions.
let cpuAutocast = AutocastFp32 in {
  def : LowPrecisionKind<"conv_transpose1d", TransposedConvolutionFlops,
                         [Convolution, Transposed]>;
  def : LowPrecisionKind<"conv_transpose2d", TransposedConvolutionFlops,
                         [Convolution, Transposed]>;
  def : LowPrecisionKind<"conv_transpose3d", TransposedConvolutionFlops,
                         [Convolution, Transposed]>;
}
def : LowPrecisionKind<"mm", MatmulFlops>;
def : LowPrecisionKind<"bmm", MatmulFlops>;
def : LowPrecisionKind<"matmul", MatmulFlops>;
def : LowPrecisionKind<"addmm", AddmmFlops>;
def : LowPrecisionKind<"baddbmm", AddmmFlops>;
def : LowPrecisionKind<"addbmm">;
def : LowPrecisionKind<"linear", LinearFlops>;
def : LowPrecisionKind<"prelu">;
// query, key, value, embed_dim, num_head, the qkv and projection weights and
// biases are cast; the masks after them keep their dtype.
def : LowPrecisionKind<"_native_multi_head_attention"> {
  let autocastOperands = [0, 1, 2, 3, 4, 5, 6, 7, 8];
}
// Composites of bmm and mm: their inner products run in the low dtype, and
// they fail on operands of mixed dtypes.
// The equation is not read.
def : LowPrecisionKind<"einsum", UnknownFlops>;
def : LowPrecisionKind<"tensordot">;
def : LowPrecisionKind<"chain_matmul">;
def : LowPrecisionKind<"linalg_multi_dot">;
def : LowPrecisionKind<"inner">;
def : AtenKind<"scaled_dot_product_attention", [], AutocastFollow,
               AttentionFlops>;

//===----------------------------------------------------------------------===//
// Normalizations, softmax, reductions and losses: autocast's fp32 list
//===----------------------------------------------------------------------===//

def : AtenKind<"batch_norm", [], AutocastFollow, NormalizationFlops>;
def : AtenKind<"instance_norm", [], AutocastFollow, NormalizationFlops>;
def : Fp32Kind<"layer_norm", NormalizationFlops>;
def : Fp32Kind<"group_norm", NormalizationFlops>;
def : AtenKind<"softmax", [AccumulatesInFp32], AutocastFp32, SoftmaxFlops>;
def : AtenKind<"log_softmax", [AccumulatesInFp32], AutocastFp32, SoftmaxFlops>;
def : Fp32Kind<"logsumexp">;
def : Fp32Kind<"sum">;
def : Fp32Kind<"mean">;
def : Fp32Kind<"prod">;
def : Fp32Kind<"cumsum">;
def : Fp32Kind<"norm">;
def : Fp32Kind<"cdist">;
def : Fp32Kind<"var">;
def : Fp32Kind<"std">;
def : Fp32Kind<"var_mean">;
def : Fp32Kind<"std_mean">;
def : Fp32Kind<"cross_entropy">;
def : Fp32Kind<"nll_loss">;
def : Fp32Kind<"mse_loss">;
def : Fp32Kind<"l1_loss">;
def : Fp32Kind<"smooth_l1_loss">;
def : Fp32Kind<"huber_loss">;
def : Fp32Kind<"kl_div">;
def : Fp32Kind<"binary_cross_entropy">;
def : Fp32Kind<"binary_cross_entropy_with_logits">;

//===----------------------------------------------------------------------===//
// No type promotion: operands that must share a dtype
//===----------------------------------------------------------------------===//

def : SameDtypeKind<"lerp", [0, 1, 2]>;
def : SameDtypeKind<"index_put", [0, 2]>;
def : SameDtypeKind<"masked_scatter", [0, 2]>;
def : SameDtypeKind<"index_copy", [0, 3]>;
def : SameDtypeKind<"index_add", [0, 3]>;
def : SameDtypeKind<"scatter", [0, 3]>;
def : SameDtypeKind<"scatter_add", [0, 3]>;
let hasInPlace = 0 in {
  def : SameDtypeKind<"dot", [0, 1]>;
  def : SameDtypeKind<"vdot", [0, 1]>;
  def : SameDtypeKind<"mv", [0, 1]>;
  def : SameDtypeKind<"outer", [0, 1]>;
}

//===----------------------------------------------------------------------===//
// Pooling (typed ops; generic when an operand is no constant)
//===----------------------------------------------------------------------===//

def : AtenKind<"max_pool2d">;
def : AtenKind<"avg_pool2d">;
def : AtenKind<"adaptive_avg_pool2d">;

#endif // COMPOSER_ATEN_KINDS
