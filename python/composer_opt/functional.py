"""Composer's functional API by name, as compiler passes.

Each function takes the model and Composer's arguments where they mean
something here, and returns the optimized module::

    model = composer_opt.functional.apply_blurpool(model)

Differences from ``composer.functional``, for every function:

- Composer's functions change the model in place and return nothing (or
  the model). These return a new ``torch.jit.ScriptModule``: assign the
  result. Parameters that no pass changed are shared with the input.
- An ``nn.Module`` is scripted first (``example_inputs=`` traces it).
- ``optimizers=`` and other arguments that only make sense inside an eager
  training loop raise ValueError rather than being ignored: build the
  optimizer from the returned module's parameters.
- Option defaults are the compiler's (listed in each docstring); an argument
  left None takes it.
- The result carries ``composer_report``: sites changed and skipped.
"""

import warnings
from typing import Any, Dict, Optional

import torch

from ._optimize import ModelLike, optimize, passes

ScriptModule = torch.jit.ScriptModule

__all__ = [
    "apply_alibi", "apply_blurpool", "apply_channels_last",
    "apply_factorization", "apply_gated_linear_units",
    "apply_ghost_batchnorm", "apply_gyro_dropout",
    "apply_low_precision_groupnorm", "apply_low_precision_layernorm",
    "apply_squeeze_excite", "apply_stochastic_depth",
    "apply_weight_standardization", "freeze_layers",
]


def _refuse(function: str, **arguments: Any) -> None:
    """Raises for an argument of Composer's that only an eager training loop
    gives meaning to."""
    for name, value in arguments.items():
        if value is None:
            continue
        hint = ("build the optimizer from the returned module's parameters"
                if name == "optimizers" else
                "composer-train schedules it during training")
        raise ValueError(f"{function}: {name}= has no meaning here: the "
                         f"model is compiled, not changed in place inside a "
                         f"training loop; {hint}")


def _apply(model: Any, pass_name: str, options: Dict[str, Any],
           example_inputs: Any, lower_to: str) -> ScriptModule:
    return optimize(model, passes=[(pass_name, options)],
                    example_inputs=example_inputs, lower_to=lower_to)


def _documented(pass_name: str):
    """Appends the pass's summary and options, with the compiler's
    defaults, to the function's docstring."""

    def document(function):
        info = passes()[pass_name]
        lines = [function.__doc__.rstrip(), "",
                 f"    Pass: ``{pass_name}``: {info.summary}."]
        if info.options:
            lines += ["", "    Options (compiler defaults):"]
            for option in info.options.values():
                default = "" if option.is_list else f" = {option.default!r}"
                lines.append(f"        {option.name.replace('-', '_')}"
                             f"{default}: {option.description}")
        function.__doc__ = "\n".join(lines) + "\n"
        return function

    return document


@_documented("composer-blurpool")
def apply_blurpool(model: ModelLike, replace_convs: Optional[bool] = None,
                   replace_maxpools: Optional[bool] = None,
                   blur_first: Optional[bool] = None,
                   min_channels: Optional[int] = None, optimizers=None, *,
                   example_inputs=None,
                   lower_to: str = "aten") -> ScriptModule:
    """BlurPool: anti-aliased strided convolutions and max pools. Returns
    the new module (Composer's changes the model in place)."""
    _refuse("apply_blurpool", optimizers=optimizers)
    return _apply(model, "composer-blurpool", dict(
        replace_convs=replace_convs, replace_maxpools=replace_maxpools,
        blur_first=blur_first, min_channels=min_channels),
        example_inputs, lower_to)


@_documented("composer-squeeze-excite")
def apply_squeeze_excite(model: ModelLike,
                         latent_channels: Optional[float] = None,
                         min_channels: Optional[int] = None, optimizers=None,
                         *, example_inputs=None,
                         lower_to: str = "aten") -> ScriptModule:
    """Squeeze-and-Excitation blocks after large convolutions. Returns the
    new module."""
    _refuse("apply_squeeze_excite", optimizers=optimizers)
    return _apply(model, "composer-squeeze-excite", dict(
        latent_channels=latent_channels, min_channels=min_channels),
        example_inputs, lower_to)


@_documented("composer-channels-last")
def apply_channels_last(model: ModelLike, *, example_inputs=None,
                        lower_to: str = "aten") -> ScriptModule:
    """Channels-last (NHWC) memory format for 4-D activations and weights.
    Returns the new module (Composer's converts the model in place)."""
    return _apply(model, "composer-channels-last", {}, example_inputs,
                  lower_to)


@_documented("composer-ghost-batchnorm")
def apply_ghost_batchnorm(model: ModelLike,
                          ghost_batch_size: Optional[int] = None,
                          optimizers=None, *, example_inputs=None,
                          lower_to: str = "aten") -> ScriptModule:
    """Ghost BatchNorm: batch norm over ghost batches in training. Returns
    the new module."""
    _refuse("apply_ghost_batchnorm", optimizers=optimizers)
    return _apply(model, "composer-ghost-batchnorm",
                  dict(ghost_batch_size=ghost_batch_size), example_inputs,
                  lower_to)


@_documented("composer-stochastic-depth")
def apply_stochastic_depth(model: ModelLike,
                           target_layer_name: Optional[str] = None,
                           stochastic_method: Optional[str] = None,
                           drop_rate: Optional[float] = None,
                           drop_distribution: Optional[str] = None,
                           drop_warmup: Optional[float] = None, *,
                           example_inputs=None,
                           lower_to: str = "aten") -> ScriptModule:
    """Stochastic depth on the residual blocks found in the graph. Returns
    the new module.

    Composer needs ``target_layer_name`` (the block's class); the pass finds
    residual blocks by their structure, whatever their class, so a name
    given is not used (a warning says so). ``drop_warmup`` is Composer's
    algorithm's (a fraction of training; composer-train schedules it)."""
    if target_layer_name is not None:
        warnings.warn(
            f"apply_stochastic_depth: target_layer_name="
            f"{target_layer_name!r} is not used: residual blocks are found "
            f"by their structure", stacklevel=2)
    return _apply(model, "composer-stochastic-depth", dict(
        stochastic_method=stochastic_method, drop_rate=drop_rate,
        drop_distribution=drop_distribution, drop_warmup=drop_warmup),
        example_inputs, lower_to)


@_documented("composer-factorize")
def apply_factorization(model: ModelLike,
                        factorize_convs: Optional[bool] = None,
                        factorize_linears: Optional[bool] = None,
                        min_channels: Optional[int] = None,
                        latent_channels: Optional[float] = None,
                        min_features: Optional[int] = None,
                        latent_features: Optional[float] = None,
                        optimizers=None, *, example_inputs=None,
                        lower_to: str = "aten") -> ScriptModule:
    """Low-rank factorization of large convolutions and linears. Returns
    the new module."""
    _refuse("apply_factorization", optimizers=optimizers)
    return _apply(model, "composer-factorize", dict(
        factorize_convs=factorize_convs, factorize_linears=factorize_linears,
        min_channels=min_channels, latent_channels=latent_channels,
        min_features=min_features, latent_features=latent_features),
        example_inputs, lower_to)


@_documented("composer-glu")
def apply_gated_linear_units(model: ModelLike, optimizers=None, act_fn=None,
                             gated_layer_bias: Optional[bool] = None,
                             non_gated_layer_bias: Optional[bool] = None, *,
                             example_inputs=None,
                             lower_to: str = "aten") -> ScriptModule:
    """Gated linear units in the feed-forwards found in the graph. Returns
    the new module.

    ``act_fn`` is refused: the gate uses each feed-forward's own
    activation, as the graph has it."""
    _refuse("apply_gated_linear_units", optimizers=optimizers)
    if act_fn is not None:
        raise ValueError("apply_gated_linear_units: act_fn= is not "
                         "supported: the gate uses each feed-forward's own "
                         "activation")
    return _apply(model, "composer-glu", dict(
        gated_layer_bias=gated_layer_bias,
        non_gated_layer_bias=non_gated_layer_bias), example_inputs, lower_to)


@_documented("composer-alibi")
def apply_alibi(model: ModelLike, max_sequence_length: Optional[int] = None,
                optimizers=None, *, example_inputs=None,
                lower_to: str = "aten") -> ScriptModule:
    """ALiBi attention biases instead of position embeddings. Returns the
    new module.

    ``max_sequence_length`` is accepted and unneeded: the biases and the
    causal mask are built from the sequence length when the model runs, so
    it runs on any length. The heads per layer are read from the graph."""
    _refuse("apply_alibi", optimizers=optimizers)
    if max_sequence_length is not None and max_sequence_length < 1:
        raise ValueError(f"apply_alibi: max_sequence_length="
                         f"{max_sequence_length}: expected a positive length")
    return _apply(model, "composer-alibi", {}, example_inputs, lower_to)


@_documented("composer-weight-standardization")
def apply_weight_standardization(model: ModelLike,
                                 n_last_layers_ignore: Optional[int] = None,
                                 *, example_inputs=None,
                                 lower_to: str = "aten") -> ScriptModule:
    """Weight standardization of convolutions. Returns the new module."""
    return _apply(model, "composer-weight-standardization",
                  dict(n_last_layers_ignore=n_last_layers_ignore),
                  example_inputs, lower_to)


_PRECISIONS = {None: None, "amp_bf16": "bf16", "amp_fp16": "f16",
               "bf16": "bf16", "fp16": "f16"}


def _norm_dtype(function: str, precision: Any) -> Optional[str]:
    key = getattr(precision, "value", precision)  # Composer's Precision enum
    if key not in _PRECISIONS:
        raise ValueError(f"{function}: precision={precision!r}: expected "
                         f"'amp_bf16' or 'amp_fp16'")
    return _PRECISIONS[key]


@_documented("composer-low-precision-norms")
def apply_low_precision_layernorm(model: ModelLike,
                                  optimizers=None, precision=None, *,
                                  example_inputs=None,
                                  lower_to: str = "aten") -> ScriptModule:
    """Layer norms in the low precision of the model's mixed precision.
    Returns the new module.

    The model must have been through mixed precision
    (``optimize(model, passes=["composer-mixed-precision"])``), which plays
    the part of Composer's autocast; elsewhere each norm is skipped with
    the reason. The pass treats layer and group norms alike, so this and
    apply_low_precision_groupnorm do the same."""
    _refuse("apply_low_precision_layernorm", optimizers=optimizers)
    return _apply(model, "composer-low-precision-norms",
                  dict(dtype=_norm_dtype("apply_low_precision_layernorm",
                                         precision)), example_inputs,
                  lower_to)


@_documented("composer-low-precision-norms")
def apply_low_precision_groupnorm(model: ModelLike,
                                  optimizers=None, precision=None, *,
                                  example_inputs=None,
                                  lower_to: str = "aten") -> ScriptModule:
    """Group norms in the low precision of the model's mixed precision.
    Returns the new module. As apply_low_precision_layernorm: the pass
    treats layer and group norms alike."""
    _refuse("apply_low_precision_groupnorm", optimizers=optimizers)
    return _apply(model, "composer-low-precision-norms",
                  dict(dtype=_norm_dtype("apply_low_precision_groupnorm",
                                         precision)), example_inputs,
                  lower_to)


@_documented("composer-gyro-dropout")
def apply_gyro_dropout(model: ModelLike, p: Optional[float] = None,
                       sigma: Optional[int] = None, tau: Optional[int] = None,
                       optimizers=None, *, example_inputs=None,
                       lower_to: str = "aten") -> ScriptModule:
    """GyroDropout in place of the dropouts before classifier linears.
    Returns the new module. Its period between re-selections (one epoch by
    default) is composer-train's."""
    _refuse("apply_gyro_dropout", optimizers=optimizers)
    return _apply(model, "composer-gyro-dropout", dict(p=p, sigma=sigma,
                                                       tau=tau),
                  example_inputs, lower_to)


@_documented("composer-freeze-layers")
def freeze_layers(model: ModelLike, optimizers=None, current_duration=None,
                  freeze_start=None, freeze_level=None,
                  num_layers: Optional[int] = None,
                  up_to: Optional[str] = None, *, example_inputs=None,
                  lower_to: str = "aten") -> ScriptModule:
    """Freezes the first layers, in forward order. Returns the new module.

    Composer's freeze_layers moves the frontier during training from
    ``current_duration``, ``freeze_start`` and ``freeze_level``; that
    schedule is composer-train's (algorithm ``layer_freezing``), so those
    arguments are refused. Here a fixed frontier: ``num_layers`` layers, or
    every layer up to and including the module path ``up_to``."""
    _refuse("freeze_layers", optimizers=optimizers,
            current_duration=current_duration, freeze_start=freeze_start,
            freeze_level=freeze_level)
    return _apply(model, "composer-freeze-layers",
                  dict(num_layers=num_layers, up_to=up_to), example_inputs,
                  lower_to)
