//===- Passes.td - composer passes -------------------------*- tablegen -*-===//

#ifndef COMPOSER_PASSES
#define COMPOSER_PASSES

include "mlir/Pass/PassBase.td"

def RefineTypes : Pass<"composer-refine-types", "::mlir::ModuleOp"> {
  let summary = "Refine tensor shapes and dtypes from declared input specs";
  let description = [{
    Gives `@forward`'s tensor arguments the shapes and dtypes of
    `input-specs` (one `DIMSxDTYPE` per tensor argument, e.g.
    `1x3x224x224xf32`, `?` for an unknown dimension) and propagates them
    forward through the typed ops whose result shape it knows. Parameter
    reads take their declared types. Numerics: exact (types only).
  }];
  let options = [
    ListOption<"inputSpecs", "input-specs", "std::string",
               "Shape and dtype of each tensor argument of @forward">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def BlurPool : Pass<"composer-blurpool", "::mlir::ModuleOp"> {
  let summary = "BlurPool: blur before strided convolutions and max pools";
  let description = [{
    Zhang 2019 as METHODS.md states it. Strided 2-D convolutions with
    in_channels >= min-channels get a stride-1 blur on their input
    (blur-first) or run at stride 1 followed by a strided blur; every max pool
    runs at stride 1 followed by a strided blur. Every site is changed, as
    module surgery would: a convolution reading a blur is blurred again, and
    where a max pool's channel count is not known statically (after a `cat`
    of unknown operands) the filter is stored 1x1x3x3 and expanded to the
    input's channels at run time. The filter is a new buffer
    `<module>.blurpool.filter`; rewritten ops are marked `composer.blurred`,
    which keeps the pass idempotent. Numerics: intended change.
  }];
  let options = [
    Option<"replaceConvs", "replace-convs", "bool", "true",
           "Blur strided convolutions">,
    Option<"replaceMaxpools", "replace-maxpools", "bool", "true",
           "Blur max pools">,
    Option<"blurFirst", "blur-first", "bool", "true",
           "Blur before the convolution (same MACs) instead of after it at "
           "stride 1 (4x the MACs)">,
    Option<"minChannels", "min-channels", "int64_t", "16",
           "Skip convolutions with fewer input channels (the stem)">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def GhostBatchNorm : Pass<"composer-ghost-batchnorm", "::mlir::ModuleOp"> {
  let summary = "Ghost BatchNorm: normalize training batches in small chunks";
  let description = [{
    Every batch_norm becomes a ghost_batch_norm (METHODS.md): in training,
    chunks of ghost-batch-size samples are normalized separately and the
    running statistics updated once per chunk with momentum / chunks. Eval is
    plain batch norm. Numerics: exact in eval, intended change in training.
  }];
  let options = [
    Option<"ghostBatchSize", "ghost-batch-size", "int64_t", "32",
           "Samples per ghost batch">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def FreezeLayers : Pass<"composer-freeze-layers", "::mlir::ModuleOp"> {
  let summary = "Layer freezing, static form: freeze the first layers";
  let description = [{
    Layers are the modules owning parameters, in the order @forward first
    calls them (branches of an `if` merged; ties broken by definition
    order, as Composer freezes in module order). The first `num-layers` (or all up to and including `up-to`)
    are frozen: their parameters become `frozen` (requires_grad=False once
    exported) and every edge from a value computed only from frozen
    parameters into the rest of the graph gets a stop_gradient, so backward
    stops at the frontier. The last layer is never frozen. The layer order
    and the count frozen are recorded on the module (`composer.layers`,
    `composer.frozen_layers`) for a runtime that moves the frontier.
    Numerics: exact forward; intended change in training.
  }];
  let options = [
    Option<"numLayers", "num-layers", "int64_t", "0",
           "How many layers to freeze, in forward order">,
    Option<"upTo", "up-to", "std::string", "",
           "Freeze every layer up to and including this module path">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def ChannelsLast : Pass<"composer-channels-last", "::mlir::ModuleOp"> {
  let summary = "Channels-last: NHWC memory format for convolutions";
  let description = [{
    A memory format, not a transpose (METHODS.md): the weights of 2-D
    convolutions are declared `channels_last`, so export stores them so once,
    and each tensor argument of @forward that reaches a convolution is made
    channels_last contiguous once at entry (when it is 4-D). No per-step
    weight conversion is inserted. Numerics: exact (up to the convolution
    library's choice of kernel).
  }];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def SqueezeExcite : Pass<"composer-squeeze-excite", "::mlir::ModuleOp"> {
  let summary = "Squeeze-Excite: a channel gate after large convolutions";
  let description = [{
    After each 2-D convolution with min(in, out channels) >= min-channels
    (strided, 1x1 and grouped ones included; never one already followed by
    a squeeze_excite), inserts a squeeze_excite with new bias-free weights
    `<conv>.se.fc1.weight` (L x C) and `<conv>.se.fc2.weight` (C x L),
    L = latent-channels if >= 1 else int(latent-channels * C), initialized as
    PyTorch's Linear (uniform in +-1/sqrt(fan_in)) at export. Numerics:
    intended change.
  }];
  let options = [
    Option<"latentChannels", "latent-channels", "double", "64",
           "Latent width L, or a fraction of the channels if below 1">,
    Option<"minChannels", "min-channels", "int64_t", "128",
           "Skip convolutions with fewer input or output channels">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def MixedPrecision : Pass<"composer-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Mixed precision: autocast as a graph rewrite";
  let description = [{
    Following PyTorch autocast's lists (METHODS.md): convolutions, linear and
    matmul run in `dtype` (their inputs, weights and biases cast on use, so
    parameters stay fp32 master weights); softmax, layer/group/batch norm and
    the reductions and losses autocast keeps in fp32 get fp32 inputs; other
    ops follow their inputs. A cast back to `dtype` of a value just cast up
    from `dtype` is removed. With `low-precision-norms`, layer and group norm
    run in `dtype` instead. Numerics: approximate.
  }];
  let options = [
    Option<"dtype", "dtype", "::composer::torch_upstream::ScalarType",
           "::composer::torch_upstream::ScalarType::BFloat16",
           "Low-precision dtype", [{::llvm::cl::values(
             clEnumValN(::composer::torch_upstream::ScalarType::BFloat16,
                        "bf16", "bfloat16"),
             clEnumValN(::composer::torch_upstream::ScalarType::Half,
                        "f16", "float16"))}]>,
    Option<"lowPrecisionNorms", "low-precision-norms", "bool", "false",
           "Run layer_norm and group_norm in the low-precision dtype">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def LowerToAten : Pass<"composer-lower-to-aten", "::mlir::ModuleOp"> {
  let summary = "Expand method ops into plain aten ops";
  let description = [{
    Rewrites every method op (blur_pool2d, ...) as the aten ops that compute
    it, so the exported model runs in stock PyTorch. composer-opt runs it
    before writing a .pt unless --lower-to=none. A dialect conversion with
    the patterns each method registers; a method op none lowers fails it
    ("failed to legalize operation"). Numerics: exact.
  }];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def LowerToRuntime : Pass<"composer-lower-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower method ops to composer:: runtime operators";
  let description = [{
    Rewrites every method op as one call of its operator in the runtime
    library (docs/runtime-ops.md), a fused CPU/CUDA kernel with its own
    backward: `composer.op "composer::blur_pool2d"(...)`, operands in the
    operator's schema order. A max pool at stride 1 whose only user is a
    blur becomes one `composer::blur_max_pool2d`; a ghost batch norm whose
    input is a plain cast to float32 (from mixed precision) takes the cast's
    source with dtype float32 instead. The exported model needs the runtime
    library loaded to run (`torch.ops.load_library` of libComposerRuntime.so
    in Python; linking ComposerRuntime in C++). composer-opt runs it before
    writing a .pt with --lower-to=runtime. Numerics: exact up to summation
    order.
  }];
  let dependentDialects = ["::composer::ComposerDialect"];
}

#endif // COMPOSER_PASSES
