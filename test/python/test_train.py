"""composer_opt.train: composer-train as a child process, metrics to a
callback, Ctrl-C stopping it with a checkpoint."""

import os
import signal
import subprocess
import sys

import pytest
import torch

import composer_opt

from conftest import SOURCE

RECIPE = os.path.join(SOURCE, "test", "e2e", "Inputs", "train-small.yaml")


@pytest.fixture(scope="module")
def fashion_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "fashion.pt"
    subprocess.run([sys.executable,
                    os.path.join(SOURCE, "examples", "fashion_resnet.py"),
                    str(path), "--width", "4"], check=True)
    return str(path)


def test_train_reports_metrics_to_the_callback(fashion_model, tmp_path):
    optimized = composer_opt.functional.apply_blurpool(
        torch.jit.load(fashion_model), min_channels=4)
    logged = []
    result = composer_opt.train(
        RECIPE, model=optimized,
        overrides={"max_duration": "6ba", "save_folder": "",
                   "eval_data.limit": 250, "optimizer.lr": 0.05},
        callback=lambda metrics, step: logged.append((step, metrics)))
    assert result.returncode == 0
    steps = [step for step, _ in logged]
    assert steps == sorted(steps) and steps[-1] == 6
    assert any("loss/train/total" in metrics for _, metrics in logged)
    assert "metrics/eval/Accuracy" in result.metrics
    assert 0.0 <= result.metrics["metrics/eval/Accuracy"] <= 1.0


def test_ctrl_c_stops_with_a_checkpoint(fashion_model, tmp_path):
    folder = tmp_path / "checkpoints"

    def interrupt(metrics, step):
        if step == 2:
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(KeyboardInterrupt):
        composer_opt.train(
            RECIPE, model=fashion_model,
            overrides={"max_duration": "2ep", "save_folder": str(folder),
                       "save_interval": "1000ba", "eval_data.limit": 250},
            callback=interrupt)
    checkpoints = sorted(os.listdir(folder))
    assert checkpoints, "no checkpoint written on Ctrl-C"
    assert not any(name.startswith("ep2") for name in checkpoints)
    # The run resumes from it.
    result = composer_opt.train(
        RECIPE, model=fashion_model, autoresume=True,
        overrides={"max_duration": "2ep", "save_folder": str(folder),
                   "save_interval": "1000ba", "eval_data.limit": 250})
    assert result.returncode == 0


def test_train_failure_raises(tmp_path):
    with pytest.raises(composer_opt.TrainingError, match="status 1"):
        composer_opt.train({"model": str(tmp_path / "missing.pt")})
