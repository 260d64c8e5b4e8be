//===- ComposerOps.td - composer dialect ops ---------------*- tablegen -*-===//

#ifndef COMPOSER_OPS
#define COMPOSER_OPS

include "composer/Dialect/ComposerDialect.td"
include "composer/Dialect/ComposerTypes.td"
include "composer/Dialect/ComposerAttributes.td"
include "composer/Dialect/ComposerInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

// An op with a type rule of its own rather than InferTorchTypeOpInterface's
// elementwise default; the rules are in lib/Dialect/TypeInference.cpp.
def Composer_OwnTypeRule
    : DeclareOpInterfaceMethods<InferTorchTypeOpInterface, ["inferResultType"]>;

// An op whose FLOP count is not FlopCountOpInterface's elementwise default;
// the counts are in lib/Dialect/FlopCosts.cpp.
def Composer_OwnFlopCost
    : DeclareOpInterfaceMethods<FlopCountOpInterface, ["getFlopCost"]>;

//===----------------------------------------------------------------------===//
// Model state: parameter and buffer symbols, module attributes.
//===----------------------------------------------------------------------===//

class Composer_StateDeclOp<string mnemonic>
    : Composer_Op<mnemonic, [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<Composer_AnyTensor>:$type,
                       UnitAttr:$frozen,
                       UnitAttr:$channels_last,
                       OptionalAttr<AnyAttr>:$initializer);
  let assemblyFormat = [{
    $sym_name (`frozen` $frozen^)? (`channels_last` $channels_last^)?
    (`init` `(` $initializer^ `)`)? attr-dict `:` $type
  }];
  let extraClassDeclaration = [{
    ::composer::TorchTensorType getTensorType() {
      return ::llvm::cast<::composer::TorchTensorType>(getType());
    }
  }];
  let hasVerifier = 1;
}

def Composer_ParameterOp : Composer_StateDeclOp<"parameter"> {
  let summary = "a parameter of the model, named by its state_dict key";
  let description = [{
    `frozen` means requires_grad is false; `channels_last` that the tensor is
    stored in channels_last memory format (4-D only). `init` is set on
    parameters a pass creates; the exporter materializes them from it
    (broadcasting it to the declared shape). On state the model has,
    `init("tril_ones")` is what a pass assumed it holds, and export checks
    it (composer-alibi's causal masks). Example:
    `composer.parameter @"conv1.weight" : !composer.tensor<64x3x7x7xf32>`
  }];
}

def Composer_BufferOp : Composer_StateDeclOp<"buffer"> {
  let summary = "a buffer of the model, named by its state_dict key";
}

def Composer_GetParamOp : Composer_Op<"get_param", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    Composer_OwnTypeRule,
    MemoryEffects<[MemRead]>]> {
  let summary = "the tensor of a parameter or buffer symbol";
  let description = [{
    The result aliases the module's tensor: in-place updates through it (such
    as BatchNorm's running statistics) update the module's state.
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Composer_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let extraClassDeclaration = [{
    /// The type of the composer.parameter or composer.buffer the name refers
    /// to; null if it refers to neither.
    ::composer::TorchTensorType
    getDeclaredType(::mlir::SymbolTableCollection &symbolTables);
  }];
}

def Composer_GetAttrOp : Composer_Op<"get_attr", [MemoryEffects<[MemRead]>]> {
  let summary = "a non-tensor-state module attribute, by dotted path";
  let description = [{
    Reads module attributes that are not parameters or buffers, such as the
    `training` flag: `%t = composer.get_attr "layer1.0.bn1.training" : !composer.bool`.
    `imported` is an int attribute's value in the model imported (an
    attention's head count): type refinement reads it where nothing in the
    model assigns the attribute. Export reads the attribute itself.
  }];
  let arguments = (ins StrAttr:$path, OptionalAttr<I64Attr>:$imported);
  let results = (outs AnyType:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::llvm::StringRef":$path), [{
      build($_builder, $_state, result, path, ::mlir::IntegerAttr());
    }]>
  ];
  let assemblyFormat = "$path attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Composer_SetAttrOp : Composer_Op<"set_attr", [MemoryEffects<[MemWrite]>]> {
  let summary = "assigns a module attribute, by dotted path";
  let arguments = (ins StrAttr:$path, AnyType:$value);
  let assemblyFormat = "$path `,` $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Constants and the generic op.
//===----------------------------------------------------------------------===//

def Composer_ConstantOp : Composer_Op<"constant", [ConstantLike, Pure,
                                                   Composer_OwnTypeRule]> {
  let summary = "a TorchScript constant";
  let description = [{
    The value is an IntegerAttr (int), FloatAttr (float), BoolAttr, StringAttr
    (str, or device name for `!composer.device`), UnitAttr (None), ArrayAttr
    (list or tuple) or DenseElementsAttr (tensor). Syntax as the LLVM dialect's:
    `composer.constant(1) : !composer.int`, `composer.constant(none) : !composer.none`.
  }];
  let arguments = (ins AnyAttr:$value);
  let results = (outs AnyType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Composer_GenericOp : Composer_Op<"op", [Composer_OwnFlopCost,
    DeclareOpInterfaceMethods<InferTorchTypeOpInterface,
                              ["inferResultType", "inferResultTypeAt"]>]> {
  let summary = "any TorchScript node the dialect has no typed op for";
  let description = [{
    `kind` is the node kind (`aten::size`, `prim::ListConstruct`, ...), and
    `attrs` its node attributes. Conservatively has side effects. Its type
    rules (lib/Dialect/TypeInference.cpp) give the kinds AtenKinds.td calls
    ShapePreserving operand 0's shape and dtype, broadcast the
    ElementwiseBinary ones, and know the views, indexing and factories a
    transformer's attention uses, with integers read from aten::size.
    `%n = composer.op "aten::size"(%x, %c0) : (!composer.tensor, !composer.int) -> !composer.int`
  }];
  let arguments = (ins StrAttr:$kind, Variadic<AnyType>:$operands,
                       OptionalAttr<DictionaryAttr>:$attrs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $kind `(` $operands `)` attr-dict `:` functional-type($operands, $results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether the node is of `kind` (any overload).
    bool isKind(::composer::AtenKind kind) {
      return getKind().split('.').first == ::composer::getAtenKindName(kind);
    }
    /// The table's entry for the node's kind, or null.
    const ::composer::AtenKindInfo *getKindInfo() {
      return ::composer::lookupAtenKind(getKind());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Control flow.
//===----------------------------------------------------------------------===//

def Composer_YieldOp : Composer_Op<"yield", [Pure, Terminator,
    ParentOneOf<["IfOp", "LoopOp", "CheckpointOp", "CheckpointCallOp"]>,
    ReturnLike]> {
  let summary = "ends a region of composer.if, composer.loop or a checkpoint";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def Composer_IfOp : Composer_Op<"if", [RecursiveMemoryEffects]> {
  let summary = "prim::If";
  let arguments = (ins Composer_BoolValue:$condition);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$thenRegion, SizedRegion<1>:$elseRegion);
  let assemblyFormat = [{
    $condition (`->` `(` type($results)^ `)`)? $thenRegion `else` $elseRegion attr-dict
  }];
  let hasVerifier = 1;
}

def Composer_LoopOp : Composer_Op<"loop", [RecursiveMemoryEffects]> {
  let summary = "prim::Loop";
  let description = [{
    Runs while the iteration index is below `max_trip_count` and the condition
    holds. The body's arguments are the index and the carried values; it yields
    the next condition and the next carried values.
  }];
  let arguments = (ins Composer_IntValue:$max_trip_count,
                       Composer_BoolValue:$condition,
                       Variadic<AnyType>:$inits);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $max_trip_count `,` $condition (`iter_args` `(` $inits^ `:` type($inits) `)`)?
    (`->` `(` type($results)^ `)`)? $body attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Activation checkpointing.
//===----------------------------------------------------------------------===//

// A unit of the model whose activations are recomputed in backward rather
// than kept. The region is the unit's ops, isolated from above: its
// arguments are the tensors it takes, and it reads the model's state by
// symbol, so it is a method of the model as it stands.
class Composer_CheckpointOpBase<string mnemonic, list<Trait> traits = []>
    : Composer_Op<mnemonic, !listconcat(traits, [
        IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects,
        AttrSizedOperandSegments, RecomputedRegionOpInterface])> {
  let arguments = (ins StrAttr:$unit, Variadic<Composer_AnyTensor>:$inputs,
                       Variadic<Composer_AnyTensor>:$preserved);
  let results = (outs Variadic<Composer_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $unit `(` $inputs `)` (`preserve` `(` $preserved^ `)`)? attr-dict `:`
    functional-type($inputs, $results) (`,` type($preserved)^)? $body
  }];
  let hasVerifier = 1;
}

def Composer_CheckpointOp
    : Composer_CheckpointOpBase<"checkpoint", [MethodOpInterface]> {
  let summary = "a unit whose activations are recomputed in backward";
  let description = [{
    Computes its region on `inputs` (the region's arguments) and returns
    what the region yields; in training, only `inputs` are kept for
    backward, which runs the region again with the random state and autocast
    modes forward had, so its draws and gradients are forward's. `unit` is
    the module path the unit was (`h.3`, `layer2.1`). `preserved` are the
    buffers the region writes (batch norm's running statistics, gyro
    dropout's step): backward reruns it on their values from before forward,
    then puts back those forward left, so the rerun writes nothing. Lowers
    to the runtime's composer::checkpoint (composer.checkpoint_call) or to
    aten as the plain computation. Numerics: exact.
  }];
}

def Composer_CheckpointCallOp : Composer_CheckpointOpBase<"checkpoint_call"> {
  let summary = "composer.checkpoint lowered to the runtime's operator";
  let description = [{
    Exported as a method of the model, `checkpointed_<unit>` (dots become
    underscores), whose graph is the region, and a call
    `composer::checkpoint(self, "<method>", inputs, preserved)` whose
    results are the op's (docs/runtime-ops.md).
  }];
}

//===----------------------------------------------------------------------===//
// Parameter sharding (ZeRO-3).
//===----------------------------------------------------------------------===//

def Composer_GatherUnitOp : Composer_Op<"gather_unit", [
    MethodOpInterface, MemoryEffects<[MemRead]>]> {
  let summary = "a unit's parameters, whole, where they live sharded";
  let description = [{
    Returns `params`, the reads of the parameters of module `unit` (`h.3`;
    empty for the root: the parameters outside every unit). Under
    full_shard, where each rank holds one shard of the unit's flattened
    parameters, the runtime's composer::gather_unit all-gathers them
    instead, and its backward reduce-scatters their gradients into the
    shard; `prefetch` names the unit whose gather it starts next. Anywhere
    else (one rank, or lowered to aten) it is the identity. Numerics: exact.
  }];
  let arguments = (ins StrAttr:$unit, OptionalAttr<StrAttr>:$prefetch,
                       Variadic<Composer_AnyTensor>:$params);
  let results = (outs Variadic<Composer_AnyTensor>:$results);
  let assemblyFormat = [{
    $unit `(` $params `)` (`prefetch` $prefetch^)? attr-dict `:`
    functional-type($params, $results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Typed TorchScript operators.
//===----------------------------------------------------------------------===//

// An op for one TorchScript schema. Operands are the schema's non-attribute
// arguments in schema order, so import and export are generic.
class Composer_TorchOp<string mnemonic, string schema, string inplaceSchema,
                       list<Trait> traits = []>
    : Composer_Op<mnemonic, !listconcat(traits, [TorchSchemaOpInterface,
                                                 FlopCountOpInterface])> {
  let results = (outs Composer_AnyTensor:$result);
  code schemaDecl = [{
    static ::llvm::StringRef getTorchSchema() { return "}] # schema # [{"; }
    static ::llvm::StringRef getInplaceTorchSchema() { return "}] # inplaceSchema # [{"; }
  }];
  let extraClassDeclaration = schemaDecl;
}

class Composer_PureTorchOp<string mnemonic, string schema, list<Trait> traits = []>
    : Composer_TorchOp<mnemonic, schema, "", !listconcat(traits, [Pure])> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// Ops with an in-place variant: `inplace` selects it and makes the op write
// its first operand.
class Composer_MaybeInplaceTorchOp<string mnemonic, string schema,
                                   string inplaceSchema,
                                   list<Trait> traits = []>
    : Composer_TorchOp<mnemonic, schema, inplaceSchema,
                       !listconcat(traits, [DeclareOpInterfaceMethods<
                                               MemoryEffectsOpInterface>])> {
  let assemblyFormat = [{
    operands (`inplace` $inplace^)? attr-dict `:` functional-type(operands, results)
  }];
}

class Composer_UnaryTorchOp<string mnemonic, string schema, string inplaceSchema>
    : Composer_MaybeInplaceTorchOp<mnemonic, schema, inplaceSchema,
                                   [Composer_PreservesLayout,
                                    InferTorchTypeOpInterface]> {
  let arguments = (ins Composer_AnyTensor:$self, UnitAttr:$inplace);
}

def Composer_Conv2dOp : Composer_PureTorchOp<"conv2d", "aten::conv2d", [
    Composer_OwnFlopCost,
    ConvolutionOpInterface,
    Composer_OwnTypeRule]> {
  let summary = "2-D convolution (aten::conv2d)";
  let arguments = (ins Composer_AnyTensor:$input, Composer_AnyTensor:$weight,
                       Composer_TensorOrNone:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, I64Attr:$groups);
  let hasVerifier = 1;
}

def Composer_ConvolutionOp
    : Composer_PureTorchOp<"convolution", "aten::_convolution", [
    Composer_OwnFlopCost,
        DeclareOpInterfaceMethods<ConvolutionOpInterface, ["isTransposed"]>,
        Composer_OwnTypeRule]> {
  let summary = "N-D convolution as traced models record it (aten::_convolution)";
  let arguments = (ins Composer_AnyTensor:$input, Composer_AnyTensor:$weight,
                       Composer_TensorOrNone:$bias,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, BoolAttr:$transposed,
                       DenseI64ArrayAttr:$output_padding, I64Attr:$groups,
                       BoolAttr:$benchmark, BoolAttr:$deterministic,
                       BoolAttr:$cudnn_enabled, BoolAttr:$allow_tf32);
  let hasVerifier = 1;
}

def Composer_BatchNormOp
    : Composer_TorchOp<"batch_norm", "aten::batch_norm", "",
                       [Composer_OwnFlopCost, Composer_PreservesLayout,
                        InferTorchTypeOpInterface,
                        MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "batch normalization (aten::batch_norm)";
  let description = [{
    Writes the running statistics when `training` is true, so it has effects.
  }];
  let arguments = (ins Composer_AnyTensor:$input,
                       Composer_TensorOrNone:$weight, Composer_TensorOrNone:$bias,
                       Composer_TensorOrNone:$running_mean,
                       Composer_TensorOrNone:$running_var,
                       Composer_BoolValue:$training, Composer_FloatValue:$momentum,
                       F64Attr:$eps, BoolAttr:$cudnn_enabled);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Composer_MaxPool2dOp : Composer_PureTorchOp<"max_pool2d", "aten::max_pool2d", [
    Composer_OwnFlopCost,
    Composer_PreservesLayout, Composer_OwnTypeRule]> {
  let summary = "2-D max pooling (aten::max_pool2d)";
  let arguments = (ins Composer_AnyTensor:$self, DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilation, BoolAttr:$ceil_mode);
  let hasVerifier = 1;
}

def Composer_AvgPool2dOp : Composer_PureTorchOp<"avg_pool2d", "aten::avg_pool2d", [
    Composer_OwnFlopCost,
    Composer_PreservesLayout, Composer_OwnTypeRule]> {
  let summary = "2-D average pooling (aten::avg_pool2d)";
  let arguments = (ins Composer_AnyTensor:$self, DenseI64ArrayAttr:$kernel_size,
                       DenseI64ArrayAttr:$stride, DenseI64ArrayAttr:$padding,
                       BoolAttr:$ceil_mode, BoolAttr:$count_include_pad,
                       OptionalAttr<I64Attr>:$divisor_override);
  let hasVerifier = 1;
}

def Composer_AdaptiveAvgPool2dOp
    : Composer_PureTorchOp<"adaptive_avg_pool2d", "aten::adaptive_avg_pool2d", [
    Composer_OwnFlopCost,
        Composer_PreservesLayout, Composer_OwnTypeRule]> {
  let summary = "2-D adaptive average pooling (aten::adaptive_avg_pool2d)";
  let arguments = (ins Composer_AnyTensor:$self, DenseI64ArrayAttr:$output_size);
  let hasVerifier = 1;
}

def Composer_LinearOp : Composer_PureTorchOp<"linear", "aten::linear", [
    Composer_OwnFlopCost,
    Composer_OwnTypeRule]> {
  let summary = "affine map x W^T + b (aten::linear)";
  let arguments = (ins Composer_AnyTensor:$input, Composer_AnyTensor:$weight,
                       Composer_TensorOrNone:$bias);
}

def Composer_MatmulOp : Composer_PureTorchOp<"matmul", "aten::matmul", [
    Composer_OwnFlopCost,
    Composer_OwnTypeRule]> {
  let summary = "matrix product (aten::matmul)";
  let arguments = (ins Composer_AnyTensor:$self, Composer_AnyTensor:$other);
}

def Composer_ReluOp : Composer_UnaryTorchOp<"relu", "aten::relu", "aten::relu_">;
def Composer_SigmoidOp
    : Composer_UnaryTorchOp<"sigmoid", "aten::sigmoid", "aten::sigmoid_">;
def Composer_SiluOp : Composer_UnaryTorchOp<"silu", "aten::silu", "aten::silu_">;
def Composer_HardswishOp
    : Composer_UnaryTorchOp<"hardswish", "aten::hardswish", "aten::hardswish_">;

def Composer_GeluOp : Composer_PureTorchOp<"gelu", "aten::gelu", [
    Composer_PreservesLayout, InferTorchTypeOpInterface]> {
  let summary = "GELU activation (aten::gelu)";
  let arguments = (ins Composer_AnyTensor:$self, StrAttr:$approximate);
}

class Composer_BinaryTorchOp<string mnemonic, string schema, string inplaceSchema>
    : Composer_MaybeInplaceTorchOp<mnemonic, schema, inplaceSchema,
                                   [Composer_PreservesLayout,
                                    Composer_ElementwiseBinary,
                                    InferTorchTypeOpInterface]> {
  let arguments = (ins Composer_AnyTensor:$self, Composer_AnyTensor:$other,
                       UnitAttr:$inplace);
}

def Composer_AddOp : Composer_MaybeInplaceTorchOp<"add", "aten::add.Tensor",
                                                  "aten::add_.Tensor",
                                                  [Composer_PreservesLayout,
                                                   Composer_ElementwiseBinary,
                                                   InferTorchTypeOpInterface]> {
  let summary = "self + alpha * other (aten::add.Tensor)";
  let arguments = (ins Composer_AnyTensor:$self, Composer_AnyTensor:$other,
                       AnyAttrOf<[I64Attr, F64Attr]>:$alpha, UnitAttr:$inplace);
}

def Composer_MulOp
    : Composer_BinaryTorchOp<"mul", "aten::mul.Tensor", "aten::mul_.Tensor">;

def Composer_LayerNormOp
    : Composer_PureTorchOp<"layer_norm", "aten::layer_norm",
                           [Composer_OwnFlopCost, InferTorchTypeOpInterface]> {
  let summary = "layer normalization (aten::layer_norm)";
  let arguments = (ins Composer_AnyTensor:$input,
                       DenseI64ArrayAttr:$normalized_shape,
                       Composer_TensorOrNone:$weight, Composer_TensorOrNone:$bias,
                       F64Attr:$eps, BoolAttr:$cudnn_enable);
}

def Composer_GroupNormOp
    : Composer_PureTorchOp<"group_norm", "aten::group_norm",
                           [Composer_OwnFlopCost, Composer_PreservesLayout,
                            InferTorchTypeOpInterface]> {
  let summary = "group normalization (aten::group_norm)";
  let arguments = (ins Composer_AnyTensor:$input, I64Attr:$num_groups,
                       Composer_TensorOrNone:$weight, Composer_TensorOrNone:$bias,
                       F64Attr:$eps, BoolAttr:$cudnn_enabled);
}

def Composer_DropoutOp : Composer_MaybeInplaceTorchOp<"dropout", "aten::dropout",
                                                      "aten::dropout_", [
    Composer_PreservesLayout, InferTorchTypeOpInterface]> {
  let summary = "dropout (aten::dropout); draws from the RNG, so has effects";
  let arguments = (ins Composer_AnyTensor:$input, F64Attr:$p,
                       Composer_BoolValue:$train, UnitAttr:$inplace);
}

def Composer_SoftmaxOp : Composer_PureTorchOp<"softmax", "aten::softmax.int", [
    Composer_OwnFlopCost,
    Composer_OwnTypeRule]> {
  let summary = "softmax over one dimension (aten::softmax.int)";
  let arguments = (ins Composer_AnyTensor:$self, I64Attr:$dim,
                       OptionalAttr<Composer_ScalarTypeAttr>:$dtype);
}

def Composer_FlattenOp
    : Composer_PureTorchOp<"flatten", "aten::flatten.using_ints", [
    Composer_OwnFlopCost,
        Composer_OwnTypeRule]> {
  let summary = "flattens dimensions start_dim..end_dim (aten::flatten)";
  let arguments = (ins Composer_AnyTensor:$self, I64Attr:$start_dim,
                       I64Attr:$end_dim);
}

def Composer_ViewOp : Composer_PureTorchOp<"view", "aten::view", [
    Composer_OwnFlopCost,
    Composer_OwnTypeRule]> {
  let summary = "a view with another shape (aten::view)";
  let arguments = (ins Composer_AnyTensor:$self, Composer_ListValue:$size);
}

def Composer_ReshapeOp : Composer_PureTorchOp<"reshape", "aten::reshape", [
    Composer_OwnFlopCost,
    Composer_OwnTypeRule]> {
  let summary = "reshape (aten::reshape)";
  let arguments = (ins Composer_AnyTensor:$self, Composer_ListValue:$shape);
}

def Composer_CatOp : Composer_PureTorchOp<"cat", "aten::cat", [
    Composer_OwnFlopCost,
    Composer_OwnTypeRule]> {
  let summary = "concatenation of a tensor list (aten::cat)";
  let arguments = (ins Composer_ListValue:$tensors, I64Attr:$dim);
}

def Composer_ToDtypeOp : Composer_PureTorchOp<"to_dtype", "aten::to.dtype", [
    Composer_OwnFlopCost,
    Composer_PreservesLayout, Composer_OwnTypeRule]> {
  let summary = "dtype cast (aten::to.dtype)";
  let arguments = (ins Composer_AnyTensor:$self, Composer_ScalarTypeAttr:$dtype,
                       BoolAttr:$non_blocking, BoolAttr:$copy,
                       OptionalAttr<Composer_MemoryFormatAttr>:$memory_format);
}

def Composer_StopGradientOp
    : Composer_PureTorchOp<"stop_gradient", "aten::detach",
                           [Composer_OwnFlopCost, InferTorchTypeOpInterface]> {
  let summary = "the same tensor, cut from autograd (aten::detach)";
  let arguments = (ins Composer_AnyTensor:$self);
}

def Composer_ContiguousOp
    : Composer_PureTorchOp<"contiguous", "aten::contiguous",
                           [Composer_OwnFlopCost, Composer_PreservesLayout,
                            InferTorchTypeOpInterface]> {
  let summary = "a contiguous tensor in a memory format (aten::contiguous)";
  let arguments = (ins Composer_AnyTensor:$self,
                       Composer_MemoryFormatAttr:$memory_format);
}

//===----------------------------------------------------------------------===//
// Method ops: what the speedup passes introduce (MethodOpInterface). They
// lower to aten ops (composer-lower-to-aten) or to runtime kernels.
//===----------------------------------------------------------------------===//

def Composer_BlurPool2dOp : Composer_Op<"blur_pool2d", [
    Composer_OwnFlopCost, Composer_OwnTypeRule,
    MethodOpInterface, Composer_PreservesLayout, Pure]> {
  let summary = "anti-aliasing blur, then subsampling (BlurPool, Zhang 2019)";
  let description = [{
    Convolves each channel of `input` (N, C, H, W) with `filter` (C, 1, 3, 3;
    BlurPool's binomial [1,2,1]^T[1,2,1]/16 as a buffer) at padding 1 and the
    given stride. When H or W is smaller than the filter the blur is the
    identity: the output is the input subsampled by the stride.
  }];
  let arguments = (ins Composer_AnyTensor:$input, Composer_AnyTensor:$filter,
                       DenseI64ArrayAttr:$stride);
  let results = (outs Composer_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Composer_GhostBatchNormOp : Composer_Op<"ghost_batch_norm", [
    Composer_OwnFlopCost, InferTorchTypeOpInterface,
    MethodOpInterface, Composer_PreservesLayout,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "batch normalization over ghost batches (Hoffer et al. 2017)";
  let description = [{
    batch_norm's operands and attributes. When `training`, the batch of B is
    cut as Composer cuts it, into k = ceil(B / `ghost_batch_size`) chunks by
    torch.chunk (80 in ghost batches of 32: 27, 27, 26), each normalized with
    its own statistics, and the running statistics are updated once per
    chunk with momentum / k; the chunks are concatenated back. Otherwise it
    is batch_norm with running statistics.
  }];
  let arguments = (ins Composer_AnyTensor:$input,
                       Composer_TensorOrNone:$weight, Composer_TensorOrNone:$bias,
                       Composer_TensorOrNone:$running_mean,
                       Composer_TensorOrNone:$running_var,
                       Composer_BoolValue:$training, Composer_FloatValue:$momentum,
                       F64Attr:$eps, BoolAttr:$cudnn_enabled,
                       I64Attr:$ghost_batch_size);
  let results = (outs Composer_AnyTensor:$result);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Composer_SqueezeExciteOp : Composer_Op<"squeeze_excite", [
    Composer_OwnFlopCost, InferTorchTypeOpInterface,
    MethodOpInterface, Composer_PreservesLayout, Pure]> {
  let summary = "squeeze-and-excitation gate (Hu et al. 2018)";
  let description = [{
    `input * sigmoid(fc2 relu(fc1 mean_hw(input)))`, the gate broadcast over
    H and W; fc1 (L x C) and fc2 (C x L) have no biases.
  }];
  let arguments = (ins Composer_AnyTensor:$input, Composer_AnyTensor:$fc1,
                       Composer_AnyTensor:$fc2);
  let results = (outs Composer_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $fc1 `,` $fc2 attr-dict `:` functional-type(operands, results)
  }];
}

def Composer_StandardizeWeightOp : Composer_Op<"standardize_weight", [
    Composer_OwnFlopCost,
    MethodOpInterface, InferTorchTypeOpInterface, Pure, Composer_WeightView]> {
  let summary = "a convolution weight standardized per output channel";
  let description = [{
    Weight standardization (Qiao et al. 2019): `(weight - mean) /
    sqrt(var + eps)`, mean and biased variance taken over every dimension
    but the first (in channels and kernel) of each output channel. Computed
    in the forward pass, so gradients flow through it into the weight.
  }];
  let arguments = (ins Composer_AnyTensor:$weight, F64Attr:$eps);
  let results = (outs Composer_AnyTensor:$result);
  let assemblyFormat = "$weight attr-dict `:` functional-type(operands, results)";
}

def Composer_StochasticDepthOp : Composer_Op<"stochastic_depth", [
    Composer_OwnFlopCost, InferTorchTypeOpInterface,
    MethodOpInterface, Composer_PreservesLayout,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a residual branch under stochastic depth (Huang et al. 2016)";
  let description = [{
    The branch f(x) of a residual block dropped at rate p = `drop_rate` times
    `scale` (a 0-d buffer the warm-up ramps from 0 to 1; 1 when absent).
    `sample` (DropPath): when `training`, f(x) times a per-sample
    Bernoulli(1 - p) mask of shape [B, 1, ...] divided by 1 - p; otherwise
    f(x). `block`: stochastic_depth_keep decides whether the block runs, so
    when `training` f(x); otherwise f(x) * (1 - p), the expectation. Draws
    from the RNG, so has effects.
  }];
  let arguments = (ins Composer_AnyTensor:$branch, Composer_BoolValue:$training,
                       Optional<Composer_AnyTensor>:$scale, StrAttr:$method,
                       F64Attr:$drop_rate);
  let results = (outs Composer_AnyTensor:$result);
  let assemblyFormat = [{
    $branch `,` $training (`scale` $scale^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Composer_StochasticDepthKeepOp : Composer_Op<"stochastic_depth_keep", [
    MethodOpInterface, DeclareOpInterfaceMethods<RandomConditionOpInterface>,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "whether a residual block runs this step (stochastic depth)";
  let description = [{
    Block mode's draw: when `training`, one `torch.rand(())` u, and the block
    runs when u >= p (p = `drop_rate` times `scale`, as stochastic_depth);
    otherwise true without a draw. It decides the composer.if whose then
    region computes the branch, so a dropped branch is never computed.
  }];
  let arguments = (ins Composer_BoolValue:$training,
                       Optional<Composer_AnyTensor>:$scale, F64Attr:$drop_rate);
  let results = (outs Composer_BoolValue:$keep);
  let assemblyFormat = [{
    $training (`scale` $scale^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Composer_GyroDropoutOp : Composer_Op<"gyro_dropout", [
    Composer_OwnFlopCost, InferTorchTypeOpInterface,
    MethodOpInterface, Composer_PreservesLayout,
    MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "dropout with a fixed set of masks (GyroDropout, Lee et al. 2022)";
  let description = [{
    `masks` ([sigma, F], 0 or 1) are drawn once; `selected` ([tau], int64)
    picks the active ones and `step` (0-d int64) counts training forwards.
    When `training`: if step % max(period, 1) == 0 (`period` a 0-d int64
    buffer), `selected` is redrawn as torch.randint(sigma, (tau,)); step
    advances by one; sample s of a batch of B is multiplied by
    masks[selected[floor(s * t / B)]] * 1 / (1 - p), t = min(tau, B), the
    mask over dimension `feature_dim` (-1: the last, 1: the channels) and
    broadcast over the others. Otherwise the input. Draws from the RNG and
    writes its buffers, so has effects.
  }];
  let arguments = (ins Composer_AnyTensor:$input, Composer_BoolValue:$training,
                       Composer_AnyTensor:$masks, Composer_AnyTensor:$selected,
                       Composer_AnyTensor:$step, Composer_AnyTensor:$period,
                       F64Attr:$p, I64Attr:$sigma, I64Attr:$tau,
                       I64Attr:$feature_dim);
  let results = (outs Composer_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $training `masks` $masks `selected` $selected `step` $step
    `period` $period attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // COMPOSER_OPS
