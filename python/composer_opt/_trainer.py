"""composer_opt.Trainer: Composer's Trainer, run by the C++ engine in this
process, on the user's own DataLoader.

The arguments become a recipe that composer-train's own reader checks (so
the same job through composer-train is the same run); the model, the
loaders, Python callbacks and loggers come in process.
"""

import json
import os
import random
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

import torch

from . import _engine
from ._callbacks import Callback, handled_events
from ._feed import Feed, epoch_size, first_batch
from ._optimize import optimize
from ._weights import is_engine_checkpoint, load_state_dict
from .algorithms import Algorithm

# Composer's Trainer arguments this trainer does not have: each is a
# TypeError naming it rather than being ignored.
_COMPOSER_ONLY = {
    "train_dataloader_label", "train_subset_num_batches", "spin_dataloaders",
    "algorithm_passes", "eval_subset_num_batches", "log_to_console",
    "console_stream", "console_log_interval", "log_traces",
    "auto_log_hparams", "load_object_store", "load_progress_bar",
    "load_exclude_algorithms", "save_filename", "save_latest_filename",
    "save_overwrite", "save_ignore_keys", "save_metrics", "precision_config",
    "deterministic_mode", "dist_timeout", "ddp_sync_strategy", "profiler",
    "python_log_level", "compile_config",
}

# torch.optim classes by the engine's optimizer names, with the
# hyperparameters that carry over.
_OPTIMIZERS = {
    "SGD": ("sgd", ("lr", "momentum", "dampening", "nesterov",
                    "weight_decay")),
    "AdamW": ("adamw", ("lr", "betas", "eps", "weight_decay")),
    "DecoupledSGDW": ("decoupled_sgdw", ("lr", "momentum", "dampening",
                                         "nesterov", "weight_decay")),
    "DecoupledAdamW": ("decoupled_adamw", ("lr", "betas", "eps",
                                           "weight_decay")),
}

_TARGET_NAMES = ("target", "targets", "label", "labels")


@dataclass
class Evaluator:
    """Composer's Evaluator: a labelled evaluation loader with its
    metrics (the engine's metric names; empty: the loss's defaults)."""

    label: str
    dataloader: Iterable
    metric_names: Sequence[str] = ()
    subset_num_batches: Optional[int] = None
    eval_interval: Union[None, int, str] = None


@dataclass
class TrainerState:
    """What trainer.state shows between runs."""

    engine: Any = field(repr=False)

    @property
    def timestamp(self) -> Dict[str, int]:
        return self.engine.state.timestamp

    @property
    def model(self) -> torch.jit.ScriptModule:
        return self.engine.state.model

    @property
    def logged_metrics(self) -> Dict[str, float]:
        """The last value logged of every metric."""
        return dict(self.engine.logged_metrics)

    @property
    def eval_metrics(self) -> Dict[str, Dict[str, float]]:
        """{evaluator label: {metric: value}} of the latest evaluations."""
        found: Dict[str, Dict[str, float]] = {}
        for name, value in self.engine.logged_metrics.items():
            parts = name.split("/")
            if len(parts) == 3 and parts[0] == "metrics":
                found.setdefault(parts[1], {})[parts[2]] = value
        return found


def _time(value: Union[int, str, None], unit: str = "ep") -> Optional[str]:
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"a duration is an int or a string, not {value!r}")
    if isinstance(value, int):
        return f"{value}{unit}"
    return str(value)


def _optimizer(optimizer: Any) -> Dict[str, Any]:
    if isinstance(optimizer, (list, tuple)):
        if len(optimizer) != 1:
            raise ValueError("the engine trains with one optimizer")
        optimizer = optimizer[0]
    if isinstance(optimizer, dict):
        return dict(optimizer)
    name = type(optimizer).__name__
    if (name == "Adam" and isinstance(optimizer, torch.optim.Optimizer) and
            not optimizer.param_groups[0].get("weight_decay")):
        name = "AdamW"  # Without weight decay they are the same update.
    if name not in _OPTIMIZERS or not isinstance(optimizer,
                                                 torch.optim.Optimizer):
        raise TypeError(f"optimizers: {name} is not one the engine has; "
                        f"give one of torch.optim.SGD, torch.optim.AdamW, "
                        f"Composer's DecoupledSGDW or DecoupledAdamW, or a "
                        f"dict as a recipe's optimizer section")
    if len(optimizer.param_groups) > 1:
        warnings.warn("optimizers: the engine keeps one parameter group; "
                      "the first group's hyperparameters apply to all")
    group = optimizer.param_groups[0]
    for flag in ("amsgrad", "maximize"):
        if group.get(flag):
            raise TypeError(f"optimizers: {name}({flag}=True) is not one the "
                            f"engine has")
    engine_name, keys = _OPTIMIZERS[name]
    spec: Dict[str, Any] = {"name": engine_name}
    for key in keys:
        if key in group:
            value = group[key]
            spec[key] = list(value) if isinstance(value, tuple) else value
    return spec


def _scheduler(scheduler: Any) -> Optional[Dict[str, Any]]:
    if isinstance(scheduler, (list, tuple)):
        if len(scheduler) != 1:
            raise ValueError("the engine runs one scheduler")
        scheduler = scheduler[0]
    if scheduler is None:
        return None
    if isinstance(scheduler, str):
        return {"name": scheduler}
    if isinstance(scheduler, dict):
        return dict(scheduler)
    raise TypeError(f"schedulers: give the schedule as a recipe's "
                    f"scheduler section, {{'name': 'cosine_with_warmup', "
                    f"'t_warmup': '1ep'}}, not a {type(scheduler).__name__}")


def _parallelism(config: Any) -> Optional[Dict[str, Any]]:
    if not config:
        return None
    fsdp = config.get("fsdp") if isinstance(config, dict) else None
    if fsdp is None:
        raise ValueError("parallelism_config: the engine reads its 'fsdp' "
                         "section: {'fsdp': {'sharding_strategy': "
                         "'FULL_SHARD'}}")
    section = {"sharding": str(fsdp.get("sharding_strategy",
                                        "FULL_SHARD")).lower()}
    if "state_dict_type" in fsdp:
        section["state_dict_type"] = fsdp["state_dict_type"]
    unknown = set(fsdp) - {"sharding_strategy", "state_dict_type"}
    if unknown:
        raise TypeError(f"parallelism_config['fsdp']: the engine does not "
                        f"have {', '.join(sorted(unknown))}")
    return section


def _python_callbacks(recipe: Dict[str, Any], callbacks: Sequence[Any]):
    """The Python callbacks with the events each handles; built-in ones (a
    name, or (name, options)) go to the recipe's callbacks section."""
    python, builtin = [], {}
    for callback in callbacks:
        if isinstance(callback, str):
            builtin[callback] = {}
        elif isinstance(callback, tuple) and len(callback) == 2:
            builtin[callback[0]] = dict(callback[1])
        elif isinstance(callback, Callback):
            python.append((callback, handled_events(callback)))
        else:
            raise TypeError(f"callbacks: {callback!r} is neither a "
                            f"composer_opt.Callback nor a built-in "
                            f"callback's name (or (name, options))")
    if builtin:
        recipe["callbacks"] = builtin
    return python


def _python_loggers(recipe: Dict[str, Any], loggers: Sequence[Any]):
    """The Python logger destinations; the built-in ones ({"jsonl": PATH},
    {"tensorboard": DIR}) go to the recipe's loggers section."""
    python = []
    for logger in loggers:
        if isinstance(logger, dict):
            recipe["loggers"].update(logger)
        elif hasattr(logger, "log_metrics"):
            python.append(logger)
        else:
            raise TypeError(f"loggers: {logger!r} has no "
                            f"log_metrics(metrics, step)")
    return python


def _script(model: Any) -> torch.jit.ScriptModule:
    if isinstance(model, torch.jit.ScriptModule):
        return model
    if isinstance(model, torch.nn.Module):
        return torch.jit.script(model)
    raise TypeError(f"model must be a torch.nn.Module or a "
                    f"torch.jit.ScriptModule, not {type(model).__name__}")


class Trainer:
    """Trains ``model`` with the C++ engine, on the user's own loaders.

    Takes Composer's argument names where the engine has the feature (see
    docs/python-trainer.md); a Composer argument it lacks is a TypeError.
    Besides Composer's: ``loss`` (a registered loss name, or ``"model"``
    for the model's own loss; default ``cross_entropy`` for tuple batches,
    ``"model"`` for dict batches), ``model_inputs`` (forward's arguments
    as batch columns), ``progress_bar``, ``threads``.
    """

    def __init__(self, *, model: torch.nn.Module,
                 train_dataloader: Iterable,
                 max_duration: Union[int, str],
                 eval_dataloader: Optional[Iterable] = None,
                 evaluators: Sequence[Evaluator] = (),
                 eval_interval: Union[int, str] = 1,
                 optimizers: Any = None, schedulers: Any = None,
                 algorithms: Sequence[Algorithm] = (),
                 callbacks: Sequence[Any] = (), loggers: Sequence[Any] = (),
                 precision: Optional[str] = None,
                 device: Optional[str] = None,
                 device_train_microbatch_size: Union[None, int, str] = None,
                 accumulate_train_batch_on_tokens: bool = False,
                 save_folder: Optional[str] = None,
                 save_interval: Union[int, str] = "1ep",
                 save_num_checkpoints_to_keep: int = -1,
                 save_weights_only: bool = False,
                 load_path: Optional[str] = None,
                 load_weights_only: bool = False,
                 load_strict_model_weights: bool = True,
                 load_ignore_keys: Sequence[str] = (),
                 autoresume: bool = False, run_name: Optional[str] = None,
                 seed: Optional[int] = None,
                 scale_schedule_ratio: float = 1.0,
                 step_schedulers_every_batch: Optional[bool] = None,
                 parallelism_config: Any = None,
                 loss: Any = None, model_inputs: Any = None,
                 progress_bar: bool = True, threads: int = 0,
                 **unknown: Any):
        for name in unknown:
            if name in _COMPOSER_ONLY:
                raise TypeError(f"composer_opt.Trainer does not have "
                                f"Composer's argument {name!r}")
            raise TypeError(f"composer_opt.Trainer got an unexpected "
                            f"keyword argument {name!r}")
        if step_schedulers_every_batch is False:
            raise TypeError("step_schedulers_every_batch=False: the engine "
                            "steps its schedulers every batch")
        if seed is None:
            seed = random.randrange(2**31)
        # Composer seeds every generator when the trainer is built.
        random.seed(seed)
        torch.manual_seed(seed)
        try:
            import numpy
            numpy.random.seed(seed)
        except ImportError:
            pass
        self._algorithms = list(algorithms)
        for algorithm in self._algorithms:
            if not isinstance(algorithm, Algorithm):
                raise TypeError(f"algorithms: {algorithm!r} is not one of "
                                f"composer_opt.algorithms")
        scripted = self._prepare_model(model, load_path,
                                       load_strict_model_weights,
                                       load_ignore_keys)
        if scripted is not None:
            load_path = None  # Its weights are in the model already.
        else:
            scripted = self._compile(_script(model))

        peeked = first_batch(train_dataloader, "train_dataloader")
        if hasattr(peeked, "keys"):
            # Hugging Face's convention: named columns, the model's loss.
            names = list(peeked.keys())
            loss = "model" if loss is None else loss
            if model_inputs is None:
                model_inputs = {name: name for name in names}
            self._input_name = ("input_ids" if "input_ids" in names
                                else names[0])
            self._target_name = next(
                (n for n in _TARGET_NAMES if n in names), "target")
        else:
            self._input_name, self._target_name = "", "target"
        recipe: Dict[str, Any] = {
            "seed": seed, "max_duration": _time(max_duration),
            "eval_interval": _time(eval_interval),
            "scale_schedule_ratio": scale_schedule_ratio,
            "train_data": {"type": "supplied"},
            "loggers": {"progress_bar": bool(progress_bar)},
        }
        settings = {
            "run_name": run_name, "precision": precision,
            "device": "cuda" if device == "gpu" else device,
            "save_folder": save_folder,
            "save_interval": _time(save_interval),
            "save_num_checkpoints_to_keep": save_num_checkpoints_to_keep,
            "save_weights_only": save_weights_only or None,
            "load_path": load_path, "load_weights_only": load_weights_only,
            "load_strict_model_weights": load_strict_model_weights,
            "load_ignore_keys": list(load_ignore_keys) or None,
            "autoresume": autoresume or None, "loss": loss,
            "model_inputs": model_inputs,
            "device_train_microbatch_size": device_train_microbatch_size,
            "accumulate_train_batch_on_tokens":
                accumulate_train_batch_on_tokens or None,
            "optimizer": _optimizer(optimizers) if optimizers else None,
            "scheduler": _scheduler(schedulers),
            "parallelism": _parallelism(parallelism_config),
            "threads": threads or None,
            "pipeline": self._pipeline_text,
        }
        recipe.update({k: v for k, v in settings.items()
                       if v is not None and v != ""})
        runtime = {a.runtime_name: a.runtime_options
                   for a in self._algorithms if a.runtime_name}
        if runtime:
            recipe["algorithms"] = runtime
        loaders = {"train_data": self._loader(train_dataloader,
                                              "train_dataloader", peeked,
                                              resumes=True)}
        self._add_evaluators(recipe, loaders, eval_dataloader, evaluators)
        python_callbacks = _python_callbacks(recipe, callbacks)
        python_loggers = _python_loggers(recipe, loggers)
        self.recipe = recipe
        self._engine = _engine.Engine(json.dumps(recipe), scripted,
                                      loaders, python_callbacks,
                                      python_loggers)
        self.state = TrainerState(self._engine)

    # --- set-up -----------------------------------------------------------

    def _add_evaluators(self, recipe, loaders, eval_dataloader, evaluators):
        """The evaluators' recipe sections, and their loaders by label."""
        evaluators = list(evaluators)
        if eval_dataloader is not None:
            evaluators.insert(0, Evaluator("eval", eval_dataloader))
        if evaluators:
            recipe["evaluators"] = {}
        for evaluator in evaluators:
            section: Dict[str, Any] = {"type": "supplied"}
            if evaluator.metric_names:
                section["metrics"] = list(evaluator.metric_names)
            if evaluator.subset_num_batches:
                section["subset_num_batches"] = evaluator.subset_num_batches
            if evaluator.eval_interval is not None:
                section["interval"] = _time(evaluator.eval_interval)
            recipe["evaluators"][evaluator.label] = section
            loaders[evaluator.label] = self._loader(
                evaluator.dataloader, f"evaluator '{evaluator.label}'")

    def _prepare_model(self, model, load_path, strict, ignore_keys):
        """With a load_path that is a state_dict file, loads it into the
        user's module (before any graph method, so weights a method
        replaces are initialized from the loaded ones) and compiles it;
        None when load_path is absent or an engine checkpoint."""
        if not load_path or is_engine_checkpoint(load_path):
            self._pipeline_text = ""
            return None
        if not os.path.exists(load_path):
            raise FileNotFoundError(f"load_path '{load_path}': no such file")
        load_state_dict(model, load_path, strict, ignore_keys)
        return self._compile(_script(model))

    def _compile(self, scripted: torch.jit.ScriptModule):
        # The names the user's module has, for the exported state_dict.
        self._user_names = list(scripted.state_dict())
        graph = [(a.pass_name, a.pass_options) for a in self._algorithms
                 if a.pass_name]
        self._pipeline_text = ",".join(name for name, _ in graph)
        if not graph:
            return scripted
        compiled = optimize(scripted, passes=graph)
        self.compile_report = compiled.composer_report
        return compiled

    def _loader(self, loader, label, peeked=None, resumes=False):
        if peeked is None:
            peeked = first_batch(loader, label)
        batches, samples, size = epoch_size(loader, label)
        # Fetching from a loader's workers costs the engine's thread 2 ms a
        # batch (unpickling, shared memory): a thread fetches the next one
        # during the step. A loader without workers draws its random
        # numbers in this process, in line, so their order stays fixed.
        prefetch = getattr(loader, "num_workers", 0) > 0
        return _engine.Loader(Feed(loader, label, resumes), peeked, batches,
                              samples, size, self._input_name,
                              self._target_name, prefetch)

    # --- Composer's methods ----------------------------------------------

    def fit(self, *, duration: Union[None, int, str] = None) -> None:
        """Trains to max_duration, or ``duration`` further than it stands.
        Ctrl-C stops after the current batch (with the final evaluation and
        checkpoint) and raises KeyboardInterrupt."""
        self._engine.fit(_time(duration))

    def eval(self) -> Dict[str, Dict[str, float]]:
        """Runs every evaluator; returns {label: {metric: value}}."""
        self._engine.eval()
        return self.state.eval_metrics

    def predict(self, dataloader: Iterable,
                subset_num_batches: int = -1) -> List[Any]:
        """The model's output for every batch of ``dataloader`` (in eval
        mode, without gradients, at the run's precision)."""
        loader = self._loader(dataloader, "predict dataloader")
        return self._engine.predict(loader, max(subset_num_batches, 0))

    def export_for_inference(self, save_path: str,
                             save_format: str = "torchscript") -> str:
        """Writes the trained model for inference, loadable by stock
        PyTorch with no library: TorchScript in eval mode at ``save_path``,
        with the weights the run ends with (EMA's or SWA's average where
        those ran), and beside it ``<stem>.state_dict.pt``, a torch.save'd
        state_dict of the names the user's module has, so that
        ``model.load_state_dict(torch.load(...))`` works on the eager
        module where the methods kept its architecture. Returns the
        state_dict's path."""
        if save_format != "torchscript":
            raise ValueError(f"save_format={save_format!r}: the engine "
                             f"exports 'torchscript'")
        stem, _ = os.path.splitext(os.fspath(save_path))
        state_dict_path = stem + ".state_dict.pt"
        self._engine.export_for_inference(os.fspath(save_path),
                                          state_dict_path,
                                          set(self._user_names))
        return state_dict_path

    def close(self) -> None:
        """Frees the engine (its loaders' workers, the process group); the
        trainer cannot train afterwards."""
        self._engine = None
        self.state = None
