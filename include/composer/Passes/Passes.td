//===- Passes.td - composer passes -------------------------*- tablegen -*-===//

#ifndef COMPOSER_PASSES
#define COMPOSER_PASSES

include "composer/Passes/MethodPass.td"
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

def BlurPool : MethodPass<"composer-blurpool"> {
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

def GhostBatchNorm : MethodPass<"composer-ghost-batchnorm"> {
  let summary = "Ghost BatchNorm: normalize training batches in small chunks";
  let description = [{
    Every batch_norm becomes a ghost_batch_norm (METHODS.md): in training,
    the batch of B is cut as Composer cuts it, into ceil(B / ghost-batch-size)
    chunks by torch.chunk (80 in ghost batches of 32: 27, 27, 26), each
    normalized separately, and the running statistics updated once per chunk
    with momentum / ceil(B / ghost-batch-size). Eval is plain batch norm.
    Numerics: exact in eval, intended change in training.
  }];
  let options = [
    Option<"ghostBatchSize", "ghost-batch-size", "int64_t", "32",
           "Samples per ghost batch">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def FreezeLayers : MethodPass<"composer-freeze-layers"> {
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

def ChannelsLast : MethodPass<"composer-channels-last"> {
  let keepsAccuracy = 1;
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

def SqueezeExcite : MethodPass<"composer-squeeze-excite"> {
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

def Factorize : MethodPass<"composer-factorize"> {
  let summary = "Factorize: large convolutions and linears as low-rank pairs";
  let description = [{
    Composer's Factorize (METHODS.md). A 2-D convolution with groups 1 and
    min(in, out) >= min-channels becomes a k x k convolution in -> r (its
    stride, padding and dilation, no bias) then a 1x1 convolution r -> out
    (its bias); a linear with min(in, out) >= min-features becomes in -> r
    (no bias) then r -> out (its bias). As in Composer, r is the latent
    option truncated if >= 1 (so 1.0 means rank 1), else
    max(1, int(latent * min(in, out))); unlike Composer, r is capped at
    min(out, fan_in), the rank of the weight (fan_in = in * k * k). A site
    is changed only where the pair cuts MACs, r < fan_in * out /
    (fan_in + out) (Composer's r <= ceil(breakeven - 1)), unless `force`.
    Beyond Composer, which re-initializes the pair, the new parameters
    `<site>.factor0.weight` and `<site>.factor1.weight` are set at export
    from a truncated SVD of the site's weight W (out x fan_in) = U S V^T:
    sqrt(S_r) V_r^T and U_r sqrt(S_r), the best rank-r approximation, so
    with `force` and a latent size >= min(out, fan_in) the pair computes the
    original layer. The original weight stays in the model, frozen. The new
    ops are marked `composer.factorized`, which keeps the pass idempotent.
    Numerics: intended change (exact at full rank).
  }];
  let options = [
    Option<"factorizeConvs", "factorize-convs", "bool", "true",
           "Factorize 2-D convolutions">,
    Option<"factorizeLinears", "factorize-linears", "bool", "true",
           "Factorize linears">,
    Option<"minChannels", "min-channels", "int64_t", "256",
           "Skip convolutions with fewer input or output channels">,
    Option<"latentChannels", "latent-channels", "double", "0.25",
           "Latent channels r, or a fraction of min(in, out) if below 1">,
    Option<"minFeatures", "min-features", "int64_t", "256",
           "Skip linears with fewer input or output features">,
    Option<"latentFeatures", "latent-features", "double", "128",
           "Latent features r, or a fraction of min(in, out) if below 1">,
    Option<"force", "force", "bool", "false",
           "Factorize even where the pair does not cut MACs">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def MixedPrecision : MethodPass<"composer-mixed-precision"> {
  let keepsAccuracy = 1;
  let summary = "Mixed precision: autocast as a graph rewrite";
  let description = [{
    Following PyTorch autocast's lists (METHODS.md): convolutions, linear and
    matmul run in `dtype` (their inputs, weights and biases cast on use, so
    parameters stay fp32 master weights); softmax, layer/group/batch norm and
    the reductions and losses autocast keeps in fp32 get their inputs that
    may be low cast up (fp64 ones stay fp64, as under autocast); other
    ops follow their inputs. A cast back to `dtype` of a value just cast up
    from `dtype` is removed. Softmax and log_softmax, whose kernels compute
    in fp32 for a low input, run on the low value their input was cast up
    from wherever their result is only read after a cast to `dtype`
    (attention's softmax before its matmul): the fp32 result would be
    rounded anyway. Results the rewrite made low are cast back to
    fp32, so the model's outputs keep their dtype and a loss computed outside
    it runs in fp32, as under autocast. `low-precision-norms` is
    composer-low-precision-norms folded in: layer and group norm run in
    `dtype` instead. `device` picks the autocast lists of the device the
    model will train on where they differ: CPU autocast keeps transposed
    convolutions in fp32 (LibTorch 1.13 has no bf16 CPU kernel for them),
    CUDA's runs them low; `any` (the default) keeps in fp32 what either
    keeps in fp32, so the output runs on both. Numerics: approximate.
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
    Option<"device", "device", "::composer::AutocastDevice",
           "::composer::AutocastDevice::Any",
           "The device the model will train on", [{::llvm::cl::values(
             clEnumValN(::composer::AutocastDevice::Any, "any",
                        "low only where every device runs it low"),
             clEnumValN(::composer::AutocastDevice::Cpu, "cpu",
                        "CPU autocast's lists"),
             clEnumValN(::composer::AutocastDevice::Cuda, "cuda",
                        "CUDA autocast's lists"))}]>,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def LowPrecisionNorms : MethodPass<"composer-low-precision-norms"> {
  let summary = "Low-precision LayerNorm/GroupNorm under mixed precision";
  let description = [{
    Composer's low-precision LayerNorm and GroupNorm (METHODS.md): after
    composer-mixed-precision, layer and group norms (typed or generic) run
    with input, weight and bias in `dtype` instead of fp32; the kernels
    accumulate in fp32. The casts around them are redone as mixed precision
    would with norms in `dtype`. A model without mixed precision (no cast to
    `dtype`) is left as it is, each norm skipped with the reason.
    composer-mixed-precision's `low-precision-norms` option is this pass
    folded in. Numerics: approximate.
  }];
  let options = [
    Option<"dtype", "dtype", "::composer::torch_upstream::ScalarType",
           "::composer::torch_upstream::ScalarType::BFloat16",
           "Low-precision dtype of the surrounding mixed precision",
           [{::llvm::cl::values(
             clEnumValN(::composer::torch_upstream::ScalarType::BFloat16,
                        "bf16", "bfloat16"),
             clEnumValN(::composer::torch_upstream::ScalarType::Half,
                        "f16", "float16"))}]>,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def GatedLinearUnits : MethodPass<"composer-glu"> {
  let summary = "Gated linear units: gated transformer feed-forwards";
  let description = [{
    Shazeer 2020 as METHODS.md states it and Composer's GatedLinearUnits
    computes it, on any feed-forward in the graph: a linear W1, an
    elementwise activation (typed or aten), an optional dropout and a linear
    W2, each intermediate value used only by the next op, becomes
    `W2(dropout(act(Wg x) * (Wv x)))`. Wg and Wv are new parameters of W1's
    shape, `<W1>.gated_layer.weight` and `<W1>.non_gated_layer.weight`,
    initialized as PyTorch's Linear at export, with new biases
    `<W1>.gated_layer.bias` / `<W1>.non_gated_layer.bias` (also Linear's
    initialization) only if gated-layer-bias / non-gated-layer-bias. W1 is
    no longer used; its parameters stay in the model, frozen. W2 keeps its
    weight and bias. A linear that already reads a gated product is not
    matched again. Numerics: intended change.
  }];
  let options = [
    Option<"gatedLayerBias", "gated-layer-bias", "bool", "false",
           "Give the gated projection Wg a bias">,
    Option<"nonGatedLayerBias", "non-gated-layer-bias", "bool", "false",
           "Give the non-gated projection Wv a bias">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def ALiBi : MethodPass<"composer-alibi"> {
  let summary = "ALiBi: linear attention biases instead of position embeddings";
  let description = [{
    Press et al. 2021 as METHODS.md states it, on attention found from the
    graph in any model: a softmax over the last dimension of scores from
    matmul(q, k^T) (or bmm), scaled, masked by masked_fill or where or plus
    an additive mask, whose probabilities (after dropout) feed matmul(., v).
    Before the softmax it adds -m_h |i - j| ([H, Tq, Tk], i and j from
    torch.arange of the scores' sizes, queries the last Tq of Tk positions;
    on a causal mask's unmasked entries that is m_h (j - i)), m_h = 2^(-8h/H)
    for H a power of two, else Press et al.'s rule. H is read from the view
    that splits q or k into heads ([B, T, H, D] or nn.MultiheadAttention's
    [T, B*H, D]) or from scores typed [B, H, Tq, Tk]: a constant gives the
    slopes as a constant list, a graph int (a scripted module's attribute)
    gives them computed from it. Sites whose H the graph does not show are
    skipped. nn.MultiheadAttention's
    fused fast path (aten::_native_multi_head_attention, which takes no
    bias) is turned off beside a biased site; alone, it is reported skipped.
    Learned position embeddings, an aten::embedding of torch.arange
    positions added to another value, leave the graph (the add becomes the
    other value); their weight stays in the model, frozen. A fixed-size
    causal mask, a buffer sliced to the sequence length
    (`mask[:, :, :T, :T]`), becomes tril(ones(Tq, Tk)) built when run, and
    the buffer gets initializer "tril_ones", which export checks the
    model's tensor against (a mask that is not lower-triangular ones fails
    the export). So the model runs on sequences longer than its position
    table and mask. No options: Composer's `heads_per_layer` is read from
    the graph, and its `max_sequence_length` is unneeded because the bias
    is built from the sequence length when run; its
    `train_sequence_length_scaling` is composer-train's (algorithm
    `alibi`). A biased softmax carries `composer.alibi`, and a bias of this
    form is recognized in a model the pass wrote, so a second run changes
    nothing. Numerics: intended change.
  }];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def ActivationCheckpointing : MethodPass<"composer-activation-checkpointing"> {
  let keepsAccuracy = 1;
  let summary = "Activation checkpointing: recompute units' activations in backward";
  let description = [{
    Puts units of the model in composer.checkpoint ops, which keep only a
    unit's inputs for backward and recompute its activations there
    (Chen et al. 2016). A unit is a module's forward, found from the ops'
    module paths: with `units=blocks` the modules that hold the residual
    blocks found in the graph (as stochastic depth finds them: a transformer
    layer, a ResNet block; the add's module, or the branch's when the add is
    in the root), otherwise the modules whose paths match one of the
    comma-separated glob patterns (`h.*`, `layer[34].*`), the outermost
    where they nest. `every=k` checkpoints units 0, k, 2k, ... in forward
    order. `memory-budget-mb` > 0 picks instead (`auto`): the estimated
    activations (every tensor an op computes, from the refined shapes; run
    composer-refine-types with input specs first) less, for each unit
    checkpointed, its own activations but its inputs, the largest savings
    first, until the estimate fits the budget or every unit is checkpointed.
    A unit's ops must be contiguous in forward (constants and state reads
    of others may interleave), take tensors and constants or module
    attributes from outside, and give tensors back; others are skipped with
    the reason. The buffers a unit writes (batch norm's running statistics)
    are preserved: the recomputation neither sees nor repeats the update.
    Random ops replay forward's draws. Run it after the other method
    passes: they look into the units' regions, but lowering changes them.
    composer-lower-to-runtime makes each unit a method called through
    composer::checkpoint; composer-lower-to-aten computes it in place, as
    the unchecked model (no memory is saved). Numerics: exact.
  }];
  let options = [
    Option<"units", "units", "std::string", "\"blocks\"",
           "blocks, or comma-separated glob patterns of module paths">,
    Option<"every", "every", "int64_t", "1",
           "Checkpoint every k-th unit, from the first">,
    Option<"memoryBudgetMb", "memory-budget-mb", "double", "0.0",
           "Estimated activation MiB to fit (auto); 0: use `every`">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def ShardParams : MethodPass<"composer-shard-params"> {
  let summary = "ZeRO-3: gather each unit's parameters where it starts";
  let description = [{
    Groups the model's parameters into units, as SimpleFSDP does in a
    compiler: the modules `units` chooses (as composer-activation-checkpointing
    chooses them: `blocks`, or glob patterns of module paths), and the
    units already checkpointed; the parameters outside every unit form the
    root unit. Each unit is put in a composer.checkpoint, so that the whole
    weights it gathers live only while it runs: backward recomputes it and
    gathers them again. In each unit's region, and at the start of forward
    for the root, the reads of the unit's parameters become the results of
    one composer.gather_unit, which under composer-train's full_shard
    all-gathers the unit's flat shard and reduce-scatters the gradients in
    backward. With `prefetch`, each gather names the unit forward gathers
    next, so the runtime starts that gather early. A unit that cannot be
    outlined (see composer-activation-checkpointing) is skipped with the
    reason and its parameters join the root's. Each parameter belongs to
    one unit's shard: a module whose parameters are also read outside it
    (tied weights) is not made a unit, and its parameters join the root's
    too; a parameter read by the root and by a region that
    composer-activation-checkpointing made is an error, at the read. Run it
    last among the method passes. Lowered to
    aten, or run on one rank, every gather is the identity. Numerics: exact.
  }];
  let options = [
    Option<"units", "units", "std::string", "\"blocks\"",
           "blocks, or comma-separated glob patterns of module paths">,
    Option<"prefetch", "prefetch", "bool", "true",
           "Name in each gather the unit gathered next in forward">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def StochasticDepth : MethodPass<"composer-stochastic-depth"> {
  let summary = "Stochastic depth: drop residual branches at random in training";
  let description = [{
    Huang et al. 2016 / DropPath as METHODS.md states it, on residual blocks
    found from the graph in any model: an add (alpha 1) of a branch (a
    chain of convolutions, norms, activations, ... with a convolution or
    linear in it; or, for a branch that is no chain, such as attention, the
    ops of its backward slice that compute from x) computed from a value x
    and of a shortcut that is x or a chain computed from x. Block i of N in
    forward order drops at rate (i+1)/N * drop-rate (linear) or drop-rate
    (uniform). `sample` scales the branch by a per-sample mask
    (stochastic_depth, method sample). `block` moves the branch (and the add
    and a final activation) into the then
    region of a composer.if that stochastic_depth_keep decides by one
    `torch.rand(())` per block per training step; the else region yields the
    shortcut through the activation, so a dropped branch costs nothing. Both
    ops read the training flag of the add's module; eval is the expectation
    (block: f(x) * (1 - p) + shortcut; sample: f(x) + shortcut). With
    drop-warmup > 0 the rates are scaled by a new buffer
    `_composer_stochastic_depth.scale` (1; composer-train ramps it). Method
    ops rather than a direct rewrite: the draw and the eval scaling are one
    op each whatever the model, and lower to aten in one place. Rewritten
    adds are marked `composer.stochastic_depth`, which keeps the pass
    idempotent. Numerics: intended change in training, exact in eval at
    drop-rate 0.
  }];
  let options = [
    Option<"stochasticMethod", "stochastic-method", "std::string", "\"block\"",
           "block (skip whole blocks) or sample (DropPath)">,
    Option<"dropRate", "drop-rate", "double", "0.2",
           "Drop rate (of the last block when linear), in [0, 1]">,
    Option<"dropDistribution", "drop-distribution", "std::string",
           "\"linear\"", "linear ((i+1)/N * drop-rate) or uniform">,
    Option<"dropWarmup", "drop-warmup", "double", "0.0",
           "Fraction of training over which the rates ramp up from 0">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

def GyroDropout : MethodPass<"composer-gyro-dropout"> {
  let summary = "GyroDropout: dropout from a fixed pool of masks";
  let description = [{
    Lee et al. 2022 as METHODS.md states it and Composer's GyroDropoutLayer
    computes it: each dropout (aten::dropout and feature_dropout, typed or
    generic, in place or not) becomes a gyro_dropout with its own rate `p`.
    The masks run over the feature dimension, one row per sample: the last
    dimension for dropout (Composer's [B, F]; a transformer's [B, T, C] is
    masked per channel, the same for every token), the channels (dim 1) for
    feature_dropout. A site needs F known, from its input's type or from
    what computes it (a linear's out features, an embedding's width, a
    layer norm's shape, through elementwise ops); others are skipped with
    the reason, as are inputs of rank < 2 and in-place dropouts whose
    input is read again. New buffers per module (a module's dropouts share
    them, as Composer's one layer per nn.Dropout): `<module>.preselect_masks`
    (sigma x F, `(rand > p).float()` drawn at export from a generator seeded
    by the name), `<module>.selected_indices` (tau, int64) and
    `<module>.training_step` (0-d int64), so a resumed run continues where
    it stopped; and `_composer_gyro_dropout.period` (0-d int64). Each
    training forward first re-draws the indices (torch.randint(sigma,
    (tau,))) if training_step % period == 0, then advances training_step;
    sample s of B uses mask selected_indices[floor(s * t / B)], t =
    min(tau, B) (Composer's repeat_interleave when tau divides B; any B
    here). `period` 0 means one epoch: composer-train's gyro_dropout
    algorithm sets the buffer at fit start; stock PyTorch, which knows no
    epoch, then re-selects every step until the buffer is set. Each site's
    training flag is its dropout's own, or when that is a constant (traced
    models record the mode they were traced in) the flag of the module the
    dropout belongs to. Eval is the identity. Numerics: exact in eval,
    intended change in training.
  }];
  let options = [
    Option<"p", "p", "double", "0.5", "Drop rate, in [0, 1)">,
    Option<"sigma", "sigma", "int64_t", "256",
           "Masks drawn once per site (pre-selected subnetworks)">,
    Option<"tau", "tau", "int64_t", "16",
           "Masks active at once, each covering B / tau samples">,
    Option<"period", "period", "int64_t", "0",
           "Training steps between re-selections of the active masks; 0: "
           "one epoch, set by composer-train">,
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

def WeightStandardization : MethodPass<"composer-weight-standardization"> {
  let summary = "Weight standardization: standardize convolution weights";
  let description = [{
    Qiao et al. 2019 as METHODS.md states it and Composer's
    WeightStandardization computes it: each convolution (typed or generic,
    1-D to 3-D) reads its weight parameter through a standardize_weight,
    `(W - mean) / sqrt(var + 1e-10)` with mean and biased variance
    (torch.var_mean, unbiased=False) over every dimension but the output
    channels, recomputed every forward so gradients flow into W. As
    Composer matches Conv1d/2d/3d modules only, transposed convolutions are
    skipped. The last n-last-layers-ignore convolution layers are left
    alone: a layer is a weight (a module run twice is one layer), counted
    in the order @forward first runs it, as Composer counts modules from
    its symbolic trace. After mixed precision, the fp32 weight is
    standardized before its cast on use, as under autocast. A weight
    already standardized is not standardized again. Numerics: intended
    change.
  }];
  let options = [
    Option<"nLastLayersIgnore", "n-last-layers-ignore", "int64_t", "0",
           "How many convolutions, counted from the last in forward order, "
           "to leave alone">,
  ];
  let dependentDialects = ["::composer::ComposerDialect"];
}

#endif // COMPOSER_PASSES
