"""Composer's algorithm classes, by Composer's names, for composer_opt.Trainer.

    from composer_opt.algorithms import BlurPool, ChannelsLast, EMA
    trainer = composer_opt.Trainer(model=model, train_dataloader=loader,
                                   max_duration="2ep",
                                   algorithms=[BlurPool(), ChannelsLast(),
                                               EMA(half_life="100ba")])

Nothing here lists the methods: the classes are made from the compiler's
pass catalog (graph methods, applied to the model before training) and the
runtime's algorithm registry (methods that act during training), which
also give the recipe keys and the functional API. A method with both parts
(stochastic depth, ALiBi, gyro dropout) is one class; its arguments go to
the part that has them. An argument neither part has is a TypeError.
"""

from typing import Any, Dict, List, Optional, Tuple

from ._optimize import passes

# Composer spells some words of its class names its own way; every other
# word of a method's name is capitalized.
_SPELLING = {
    "alibi": "Alibi", "augmix": "AugMix", "batchnorm": "BatchNorm",
    "blurpool": "BlurPool", "colout": "ColOut", "cutmix": "CutMix",
    "cutout": "CutOut", "ema": "EMA", "glu": "GatedLinearUnits",
    "groupnorm": "GroupNorm", "layernorm": "LayerNorm", "mixup": "MixUp",
    "randaugment": "RandAugment", "sam": "SAM", "swa": "SWA",
}
# Passes that are not Composer algorithms: precision= and
# parallelism_config= reach the first three; freeze_layers freezes a fixed
# prefix (functional.freeze_layers), where Composer's LayerFreezing is the
# runtime schedule; the low-precision norms are one pass for Composer's two
# classes, which functional.apply_low_precision_* reach.
_NOT_ALGORITHMS = {"mixed_precision", "activation_checkpointing",
                   "shard_params", "freeze_layers", "low_precision_norms"}


def composer_class_name(method: str) -> str:
    """``label_smoothing`` -> ``LabelSmoothing``, ``ema`` -> ``EMA``."""
    return "".join(_SPELLING.get(word, word.capitalize())
                   for word in method.split("_"))


class Algorithm:
    """A method with Composer's constructor arguments. ``pass_options``
    reach its graph pass, ``runtime_options`` its runtime algorithm."""

    method: str = ""
    pass_name: Optional[str] = None
    runtime_name: Optional[str] = None
    _pass_keys: Dict[str, str] = {}
    _runtime_keys: Tuple[str, ...] = ()

    def __init__(self, **arguments: Any):
        self.pass_options: Dict[str, Any] = {}
        self.runtime_options: Dict[str, Any] = {}
        for name, value in arguments.items():
            taken = False
            if name in self._runtime_keys:
                self.runtime_options[name] = value
                taken = True
            if name in self._pass_keys:
                self.pass_options[self._pass_keys[name]] = value
                taken = True
            if not taken:
                known = sorted(set(self._pass_keys) | set(self._runtime_keys))
                raise TypeError(
                    f"{type(self).__name__}() got an unexpected keyword "
                    f"argument {name!r}; it takes: "
                    f"{', '.join(known) or 'no arguments'}")

    def __repr__(self) -> str:
        given = {**self.pass_options, **self.runtime_options}
        inside = ", ".join(f"{k}={v!r}" for k, v in given.items())
        return f"{type(self).__name__}({inside})"


def _runtime_algorithms() -> Dict[str, List[Tuple[str, str, Any, str]]]:
    from . import _engine
    return {name: options for name, options in _engine.algorithms()}


def _method_passes() -> Dict[str, Any]:
    found = {}
    for name, info in passes().items():
        if info.kind != "pass" or not info.is_method:
            continue
        method = name.removeprefix("composer-").replace("-", "_")
        if method not in _NOT_ALGORITHMS:
            found[method] = info
    return found


def _make_classes() -> Dict[str, type]:
    runtime = _runtime_algorithms()
    graph = _method_passes()
    classes = {}
    for method in sorted(set(runtime) | set(graph)):
        info = graph.get(method)
        pass_keys = ({o.replace("-", "_"): o for o in info.options}
                     if info else {})
        runtime_options = runtime.get(method, [])
        lines = [f"Composer's ``{composer_class_name(method)}``."]
        if info:
            lines.append(f"Graph pass ``{info.name}``: {info.summary}.")
            lines += [f"    {k} = {info.options[o].default!r}: "
                      f"{info.options[o].description}"
                      for k, o in pass_keys.items()]
        if method in runtime:
            lines.append(f"Runtime algorithm ``{method}``:")
            lines += [f"    {key} = {default!r} ({kind}): {doc}"
                      for key, kind, default, doc in runtime_options]
        classes[composer_class_name(method)] = type(
            composer_class_name(method), (Algorithm,), {
                "__doc__": "\n".join(lines),
                "__module__": __name__,
                "method": method,
                "pass_name": info.name if info else None,
                "runtime_name": method if method in runtime else None,
                "_pass_keys": pass_keys,
                "_runtime_keys": tuple(o[0] for o in runtime_options),
            })
    return classes


_CLASSES = _make_classes()
globals().update(_CLASSES)
__all__ = ["Algorithm", "composer_class_name", *_CLASSES]


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"composer_opt.algorithms has no {name!r}: the algorithms are "
        f"{', '.join(sorted(_CLASSES))}")

