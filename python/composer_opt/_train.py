"""train(): composer-train as a child process, its metrics to a callback."""

import json
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional, Sequence, Union

import torch

from ._runtime import tool_path

MetricsCallback = Callable[[Dict[str, float], int], None]


@dataclass
class TrainResult:
    """How a train() run ended."""

    returncode: int
    metrics: Dict[str, float] = field(default_factory=dict)
    """The last value logged of each metric."""
    steps: int = 0
    """The last step (batch) metrics were logged at."""


class TrainingError(RuntimeError):
    """composer-train failed; its diagnostics went to stderr."""


def _override_text(key: str, value: Any) -> str:
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (int, float, str)):
        text = str(value)
    else:
        text = json.dumps(value)  # YAML reads JSON's lists and dicts.
    return f"{key}={text}"


def train(recipe: Union[str, os.PathLike, Mapping[str, Any]],
          model: Union[None, str, os.PathLike, torch.nn.Module] = None,
          overrides: Optional[Mapping[str, Any]] = None,
          callback: Optional[MetricsCallback] = None, *,
          autoresume: bool = False, plugins: Sequence[str] = (),
          env: Optional[Mapping[str, str]] = None) -> TrainResult:
    """Trains with composer-train, run as a child process.

    Args:
        recipe: a recipe file, or the recipe as a dict.
        model: the model to train instead of the recipe's ``model``: a path,
            or a module (saved into the run's temporary folder, which the
            child loads).
        overrides: recipe values by dotted key, as composer-train's
            ``key=value`` arguments: ``{"optimizer.lr": 0.05}``.
        callback: called as ``callback(metrics, step)`` each time the run
            logs metrics, with the metrics logged at that step.
        autoresume: continue from the latest checkpoint of the recipe's
            ``save_folder`` (composer-train --autoresume).
        plugins: shared libraries of algorithms, callbacks or metrics
            (composer-train --plugin).

    Ctrl-C (KeyboardInterrupt, in the callback too) stops the run after its
    current batch, with its final evaluation and, where the recipe saves
    checkpoints, a checkpoint; then KeyboardInterrupt is raised again.

    Returns:
        A TrainResult with the last value of each metric.

    Raises:
        TrainingError: composer-train failed (its message is on stderr).
    """
    command = [tool_path("composer-train")]
    with tempfile.TemporaryDirectory(prefix="composer-train-") as folder:
        if isinstance(recipe, Mapping):
            path = os.path.join(folder, "recipe.yaml")
            with open(path, "w") as file:
                json.dump(recipe, file)  # JSON is YAML.
            recipe = path
        command.append(os.fspath(recipe))
        settings = dict(overrides or {})
        if isinstance(model, torch.nn.Module):
            scripted = (model if isinstance(model, torch.jit.ScriptModule)
                        else torch.jit.script(model))
            path = os.path.join(folder, "model.pt")
            torch.jit.save(scripted, path)
            model = path
        if model is not None:
            settings["model"] = os.fspath(model)
        command += [_override_text(k, v) for k, v in settings.items()]
        if autoresume:
            command.append("--autoresume")
        for plugin in plugins:
            command += ["--plugin", os.fspath(plugin)]
        return _run(command, callback, env)


def _run(command, callback, env) -> TrainResult:
    read_end, write_end = os.pipe()
    command = command + [f"--metrics-jsonl=/dev/fd/{write_end}"]
    # Its own session: a terminal's Ctrl-C reaches only this process, which
    # passes one SIGINT on; a second would stop the child at once.
    child = subprocess.Popen(command, pass_fds=(write_end,),
                             start_new_session=True,
                             env=None if env is None else dict(env))
    os.close(write_end)
    result = TrainResult(returncode=0)
    interrupted = False
    with os.fdopen(read_end) as lines:
        while True:
            try:
                for line in lines:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue  # Cut by a Ctrl-C while it was read.
                    if "step" not in record:
                        continue  # Hyperparameters.
                    step = int(record.pop("step"))
                    metrics = {k: float(v) for k, v in record.items()}
                    result.metrics.update(metrics)
                    result.steps = step
                    if callback is not None:
                        callback(metrics, step)
                break
            except KeyboardInterrupt:
                if interrupted:  # A second Ctrl-C: stop it now.
                    child.kill()
                    raise
                interrupted = True
                child.send_signal(signal.SIGINT)
            except BaseException:
                child.kill()
                child.wait()
                raise
    result.returncode = child.wait()
    if interrupted:
        raise KeyboardInterrupt
    if result.returncode != 0:
        raise TrainingError(f"composer-train exited with status "
                            f"{result.returncode}: {' '.join(command)}")
    return result
