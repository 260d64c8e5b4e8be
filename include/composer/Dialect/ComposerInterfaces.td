//===- ComposerInterfaces.td - op interfaces and traits ----*- tablegen -*-===//
//
// What passes ask of ops, declared on the ops instead of kept in lists: which
// ops a speedup method introduced, which ops convolve, which keep their
// input's layout.
//
//===----------------------------------------------------------------------===//

#ifndef COMPOSER_INTERFACES
#define COMPOSER_INTERFACES

include "mlir/IR/OpBase.td"

def TorchSchemaOpInterface : OpInterface<"TorchSchemaOp"> {
  let cppNamespace = "::composer";
  let description = [{
    A typed op that stands for one TorchScript operator schema. Its operands
    are the schema's arguments that are not inherent attributes, in schema
    order; its inherent attributes are named like the schema's arguments. The
    importer and exporter translate such ops generically through this rule.
  }];
  let methods = [
    StaticInterfaceMethod<"The schema, `name.overload`.", "::llvm::StringRef",
                          "getTorchSchema">,
    StaticInterfaceMethod<"The in-place schema, empty if none.",
                          "::llvm::StringRef", "getInplaceTorchSchema">,
  ];
}

def MethodOpInterface : OpInterface<"MethodOp"> {
  let cppNamespace = "::composer";
  let description = [{
    An op a speedup method introduces (blur_pool2d, ghost_batch_norm,
    squeeze_excite, ...). It has no TorchScript schema: the lowerings to aten
    and to the runtime must rewrite every such op away, and find them through
    this interface rather than a list.
  }];
}

def RecomputedRegionOpInterface : OpInterface<"RecomputedRegionOp"> {
  let cppNamespace = "::composer";
  let description = [{
    An op whose one region is a unit of the model that backward computes
    again (activation checkpointing): the region takes the op's leading
    operands and yields its results. Analyses look through it, and a FLOP
    count adds the region's forward to backward. Other methods that work
    per unit (parameter sharding) find units through it.
  }];
  let methods = [
    InterfaceMethod<"The module path of the unit (`h.3`).",
                    "::llvm::StringRef", "getUnit", (ins),
                    [{ return $_op.getUnit(); }]>,
    InterfaceMethod<"The unit's ops: the region's one block.",
                    "::mlir::Block &", "getUnitBody", (ins),
                    [{ return $_op.getBody().front(); }]>,
  ];
}

def ConvolutionOpInterface : OpInterface<"ConvolutionLike"> {
  let cppNamespace = "::composer";
  let description = [{
    A convolution: `input` (N, C_in, spatial...) convolved with `weight`
    (C_out, C_in / groups, kernel...), plus an optional `bias`, with one
    stride, padding and dilation per spatial dimension. A transposed
    convolution's weight is (C_in, C_out / groups, kernel...) instead.
  }];
  let methods = [
    InterfaceMethod<"The convolved tensor.", "::mlir::Value", "getInput", (ins),
                    [{ return $_op.getInput(); }]>,
    InterfaceMethod<"The operand holding the input, to replace it.",
                    "::mlir::OpOperand &", "getInputMutable", (ins),
                    [{ return $_op.getInputMutable(); }]>,
    InterfaceMethod<"The filter.", "::mlir::Value", "getWeight", (ins),
                    [{ return $_op.getWeight(); }]>,
    InterfaceMethod<"The bias: a tensor, an optional tensor or None.",
                    "::mlir::Value", "getBias", (ins),
                    [{ return $_op.getBias(); }]>,
    InterfaceMethod<"One stride per spatial dimension.",
                    "::llvm::ArrayRef<int64_t>", "getStride", (ins),
                    [{ return $_op.getStride(); }]>,
    InterfaceMethod<"Replaces the stride (one value per spatial dimension).",
                    "void", "setStride",
                    (ins "::llvm::ArrayRef<int64_t>":$stride),
                    [{
      $_op.setStrideAttr(
          ::mlir::DenseI64ArrayAttr::get($_op.getContext(), stride));
    }]>,
    InterfaceMethod<"One padding per spatial dimension.",
                    "::llvm::ArrayRef<int64_t>", "getPadding", (ins),
                    [{ return $_op.getPadding(); }]>,
    InterfaceMethod<"One dilation per spatial dimension.",
                    "::llvm::ArrayRef<int64_t>", "getDilation", (ins),
                    [{ return $_op.getDilation(); }]>,
    InterfaceMethod<"The number of channel groups.", "int64_t", "getGroups",
                    (ins), [{ return $_op.getGroups(); }]>,
    InterfaceMethod<"Whether this is a transposed convolution.", "bool",
                    "isTransposed", (ins), [{}], [{ return false; }]>,
  ];
  let extraSharedClassDeclaration = [{
    /// 1 to 3: the size of the stride.
    unsigned getNumSpatialDims() { return $_op.getStride().size(); }
  }];
}

def InferTorchTypeOpInterface : OpInterface<"InferTorchTypeOpInterface"> {
  let cppNamespace = "::composer";
  let description = [{
    An op with tensor results whose shapes and dtypes follow from its
    operands' types and its attributes: the rule composer-refine-types
    applies. The default is an elementwise op's: operand 0's type, or for an
    ElementwiseBinary op the broadcast of both operands' shapes, with the
    dtype PyTorch's type promotion gives.
  }];
  let methods = [
    InterfaceMethod<[{
        What is known of the result's type from the operands and attributes
        (possibly nothing: `!composer.tensor`); null if the op cannot tell.
        `symbolTables` caches symbol lookups across the ops of one walk.
      }], "::composer::TorchTensorType", "inferResultType",
      (ins "::mlir::SymbolTableCollection &":$symbolTables), [{}], [{
        return ::composer::inferElementwiseResultType($_op.getOperation());
      }]>,
    InterfaceMethod<[{
        For an op with several results: what is known of result #`index`'s
        type, null if the op cannot tell (prim::ListUnpack of a split).
      }], "::composer::TorchTensorType", "inferResultTypeAt",
      (ins "::mlir::SymbolTableCollection &":$symbolTables,
           "unsigned":$index), [{}], [{
        return {};
      }]>,
  ];
}

def FlopCountOpInterface : OpInterface<"FlopCountOpInterface"> {
  let cppNamespace = "::composer";
  let description = [{
    What the op costs in floating-point operations, from its types and
    attributes: forward FLOPs and the backward's input- and weight-gradient
    parts (conventions in composer/Dialect/FlopCost.h). FlopCountAnalysis
    sums it over a model. The default is an elementwise op's:
    kElementwiseFlops per element. A method op states its own cost here, so
    a method is one place.
  }];
  let methods = [
    InterfaceMethod<[{
        Forward FLOPs (unknown when a size they depend on is unknown) and
        the backward's parts.
      }], "::composer::FlopCost", "getFlopCost", (ins), [{}], [{
        return ::composer::getElementwiseFlopCost($_op.getOperation());
      }]>,
  ];
}

def RandomConditionOpInterface : OpInterface<"RandomConditionOp"> {
  let cppNamespace = "::composer";
  let description = [{
    A method op whose bool result is drawn at random each training step and
    decides a composer.if (stochastic depth's keep). The if is the method's,
    not the model's: the model's graph has it in every form the method
    produces. FlopCountAnalysis weights its then region by the probability.
  }];
  let methods = [
    InterfaceMethod<[{
        The probability that the result is true in a training step.
      }], "double", "getProbabilityOfTrue">,
  ];
}

// The result has operand 0's channel count (dimension 1) and memory format;
// for a binary elementwise op (add, mul), either operand's. Layout passes
// (channels_last) and channel inference look through such ops.
def Composer_PreservesLayout : NativeOpTrait<"PreservesLayout"> {
  let cppNamespace = "::composer::OpTrait";
}

// Applied to a parameter read, the result is a per-use view of that
// parameter with its shape and dtype (weight standardization): passes that
// reason about the parameter behind a weight (its declared shape, its
// owner, its memory format) look through such ops. Casts are not views:
// what a pass builds beside a cast weight would mix dtypes.
def Composer_WeightView : NativeOpTrait<"WeightView"> {
  let cppNamespace = "::composer::OpTrait";
}

// A broadcasting elementwise op of two tensors (add, mul): its result takes
// its shape from both operands, and its layout from either.
def Composer_ElementwiseBinary : NativeOpTrait<"ElementwiseBinary"> {
  let cppNamespace = "::composer::OpTrait";
}

#endif // COMPOSER_INTERFACES
