"""composer_opt.Trainer: the engine in process on torch DataLoaders, with
Composer's arguments, algorithm classes, Python callbacks and loggers, and
weights in from torch.save'd state_dicts."""

import json
import os
import signal
import subprocess
import sys

import pytest
import torch
import torchvision
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import composer_opt
from composer_opt.algorithms import EMA, BlurPool, ChannelsLast

from conftest import SOURCE

from fashion_mnist import MEAN, STD, normalized, split_files


def fashion(split, count):
    return TensorDataset(*normalized(split, count))


def idx_section(split, limit, batch_size, **more):
    """A recipe's data section over the same samples as fashion()."""
    images, labels = split_files(split)
    return {"images": images, "labels": labels, "limit": limit,
            "batch_size": batch_size,
            "normalize": {"mean": [MEAN], "std": [STD]}, **more}


def fashion_resnet(width=4, seed=0):
    sys.path.insert(0, os.path.join(SOURCE, "examples"))
    from fashion_resnet import FashionResNet
    torch.manual_seed(seed)
    return FashionResNet(width=width)


class Recorder:
    """A logger destination: every metric logged, by step."""

    def __init__(self):
        self.rows = []
        self.hyperparameters = {}

    def log_metrics(self, metrics, step):
        self.rows.append((step, dict(metrics)))

    def log_hyperparameters(self, params):
        self.hyperparameters.update(params)

    def series(self, key):
        return [m[key] for _, m in self.rows if key in m]


def trainer(model=None, batches=8, **arguments):
    loader = DataLoader(fashion("train", 64 * batches), batch_size=64)
    arguments.setdefault("max_duration", "1ep")
    arguments.setdefault("progress_bar", False)
    arguments.setdefault("seed", 5)
    arguments.setdefault("threads", 1)
    return composer_opt.Trainer(model=model or fashion_resnet(),
                                train_dataloader=loader, **arguments)


def test_graph_and_runtime_algorithms_by_composers_names():
    log = Recorder()
    run = trainer(model=fashion_resnet(width=16), batches=3,
                  algorithms=[BlurPool(min_channels=4), ChannelsLast(),
                              EMA(half_life="2ba")],
                  loggers=[log], precision="amp_bf16")
    assert run.recipe["algorithms"] == {"ema": {"half_life": "2ba"}}
    blurred = run.compile_report["composer-blurpool"]
    assert sum(r.changed for r in blurred.reports) > 0
    run.fit()
    assert len(log.series("loss/train/total")) == 3


def test_fit_on_a_dataloader_with_workers():
    train = DataLoader(fashion("train", 2048), batch_size=64, shuffle=True,
                       num_workers=2, pin_memory=True)
    evaluate = DataLoader(fashion("test", 500), batch_size=250)
    log = Recorder()
    run = composer_opt.Trainer(
        model=fashion_resnet(), train_dataloader=train,
        eval_dataloader=evaluate, max_duration="2ep",
        optimizers=torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1,
                                   momentum=0.9),
        loggers=[log], progress_bar=False, seed=3, threads=1,
        run_name="fashion-in-process")
    run.fit()
    assert run.state.timestamp["batch"] == 64
    assert run.state.timestamp["epoch"] == 2
    losses = log.series("loss/train/total")
    assert len(losses) == 64
    assert sum(losses[-4:]) < sum(losses[:4])
    # The engine's evaluation is the trained model's, as eager PyTorch
    # evaluates it.
    accuracy = run.state.eval_metrics["eval"]["Accuracy"]
    model = run.state.model.eval()
    with torch.no_grad():
        correct = sum(int((model(x).argmax(1) == y).sum())
                      for x, y in evaluate)
    assert accuracy == pytest.approx(correct / 500)
    assert accuracy > 0.4
    # The run's arguments are logged as hyperparameters, with its name.
    assert log.hyperparameters["run_name"] == "fashion-in-process"
    assert log.hyperparameters["optimizer.lr"] == "0.1"
    assert log.hyperparameters["train_data.type"] == "supplied"


def test_same_run_as_composer_train(tmp_path, tools):
    model = fashion_resnet()
    path = str(tmp_path / "model.pt")
    torch.jit.script(model).save(path)
    jsonl = tmp_path / "metrics.jsonl"
    recipe = {
        "seed": 7, "model": path,
        "train_data": idx_section("train", 256, 32, shuffle=False),
        "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.9},
        "max_duration": "8ba", "threads": 1,
        "loggers": {"progress_bar": False, "jsonl": str(jsonl)},
    }
    (tmp_path / "recipe.yaml").write_text(json.dumps(recipe))
    subprocess.run([os.path.join(tools, "composer-train"),
                    str(tmp_path / "recipe.yaml")], check=True)
    expected = [row["loss/train/total"]
                for row in map(json.loads, jsonl.read_text().splitlines())
                if "loss/train/total" in row]
    in_process = tmp_path / "in-process.jsonl"
    run = composer_opt.Trainer(
        model=torch.jit.load(path),
        train_dataloader=DataLoader(fashion("train", 256), batch_size=32),
        optimizers={"name": "sgd", "lr": 0.05, "momentum": 0.9},
        max_duration="8ba", seed=7, threads=1,
        loggers=[{"jsonl": str(in_process)}], progress_bar=False)
    run.fit()
    losses = [row["loss/train/total"]
              for row in map(json.loads, in_process.read_text().splitlines())
              if "loss/train/total" in row]
    assert len(expected) == 8
    assert losses == expected


class EventLog(composer_opt.Callback):
    def __init__(self):
        self.events = []

    def run_event(self, event, state, logger):
        self.events.append(event)


def test_callback_sees_composers_event_order():
    log = EventLog()
    run = trainer(batches=2, callbacks=[log],
                  eval_dataloader=DataLoader(fashion("test", 64),
                                             batch_size=64))
    run.fit()
    batch = ["before_dataloader", "after_dataloader", "batch_start",
             "before_train_batch", "before_forward", "after_forward",
             "before_loss", "after_loss", "before_backward",
             "after_backward", "after_train_batch", "batch_end"]
    evaluation = ["eval_start", "eval_batch_start", "eval_before_forward",
                  "eval_after_forward", "eval_batch_end", "eval_end"]
    batch.append("batch_checkpoint")
    evaluation = ["eval_before_all"] + evaluation + ["eval_after_all"]
    # Composer's order (composer/core/event.py), without its iterations;
    # the end of the run is evaluated before FIT_END here, only where the
    # last batch was not evaluated already.
    assert log.events == (["init", "before_load", "after_load", "fit_start",
                           "epoch_start"] + batch * 2 + ["epoch_end"]
                          + evaluation + ["epoch_checkpoint", "fit_end"])


class Tracker(composer_opt.Callback):
    """Only batch_end crosses into Python; it logs its own metric."""

    def __init__(self):
        self.steps = []

    def batch_end(self, state, logger):
        self.steps.append(state.timestamp["batch"])
        logger.log_metrics({"custom/loss_x2": 2 * float(state.loss)})


def test_callback_logs_through_the_run_logger():
    tracker, log = Tracker(), Recorder()
    trainer(batches=3, callbacks=[tracker], loggers=[log]).fit()
    assert tracker.steps == [1, 2, 3]
    doubled = log.series("custom/loss_x2")
    assert doubled == pytest.approx(
        [2 * x for x in log.series("loss/train/total")])


class Failing(composer_opt.Callback):
    def batch_end(self, state, logger):
        if state.timestamp["batch"] == 2:
            raise RuntimeError("tracker is down")


def test_callback_exception_stops_after_a_checkpoint(tmp_path):
    folder = tmp_path / "checkpoints"
    run = trainer(batches=6, callbacks=[Failing()], save_folder=str(folder),
                  save_interval="100ba")
    with pytest.raises(RuntimeError, match="tracker is down"):
        run.fit()
    assert run.state.timestamp["batch"] == 2
    assert os.listdir(folder), "no checkpoint after the callback failed"


class Interrupt(composer_opt.Callback):
    def batch_end(self, state, logger):
        if state.timestamp["batch"] == 2:
            os.kill(os.getpid(), signal.SIGINT)


def test_ctrl_c_stops_after_the_batch_with_a_checkpoint(tmp_path):
    folder = tmp_path / "checkpoints"
    run = trainer(batches=6, callbacks=[Interrupt()],
                  save_folder=str(folder), save_interval="100ba")
    with pytest.raises(KeyboardInterrupt):
        run.fit()
    # The signal came after batch 2 ended: the batch in progress, 3, is the
    # last.
    assert run.state.timestamp["batch"] == 3
    assert os.listdir(folder)
    # Python's own Ctrl-C handling is back once fit returns.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_unknown_arguments_are_type_errors():
    with pytest.raises(TypeError, match="'spin_dataloaders'"):
        trainer(spin_dataloaders=True)
    with pytest.raises(TypeError, match="'max_epochs'"):
        trainer(max_epochs=3)
    with pytest.raises(TypeError, match="'hallf_life'.*half_life"):
        EMA(hallf_life="10ba")


def test_bad_recipe_value_is_a_located_value_error():
    with pytest.raises(ValueError, match="unknown precision 'fp64'"):
        trainer(precision="fp64")


@pytest.mark.parametrize("nesting", ["plain", "state_dict", "composer"])
def test_weights_in_from_a_state_dict(tmp_path, nesting):
    pretrained = fashion_resnet(seed=11)
    state = pretrained.state_dict()
    if nesting == "state_dict":
        saved = {"state_dict": state, "epoch": 3}
    elif nesting == "composer":
        saved = {"state": {"model": {"module." + k: v
                                     for k, v in state.items()},
                           "timestamp": {"batch": 7}}}
    else:
        saved = state
    path = tmp_path / "weights.pt"
    torch.save(saved, path)
    run = trainer(model=fashion_resnet(seed=0), load_path=str(path),
                  max_duration="1ba")
    loaded = dict(run.state.model.named_parameters())
    for name, value in pretrained.named_parameters():
        assert torch.equal(loaded[name], value), name


def test_strict_loading_names_missing_weights(tmp_path):
    state = fashion_resnet().state_dict()
    dropped = sorted(state)[0]
    del state[dropped]
    path = tmp_path / "weights.pt"
    torch.save(state, path)
    with pytest.raises(ValueError, match="missing"):
        trainer(load_path=str(path))
    with pytest.warns(UserWarning, match=f"1 missing: {dropped}"):
        trainer(load_path=str(path), load_strict_model_weights=False)


class HuggingFaceGPT(nn.Module):
    """GPT-2 (examples/gpt_decoder.py) behind Hugging Face's interface:
    keyword arguments in, a dict with the loss and the logits out."""

    def __init__(self, seed):
        super().__init__()
        sys.path.insert(0, os.path.join(SOURCE, "examples"))
        from gpt_decoder import GPTDecoder
        torch.manual_seed(seed)
        self.transformer = GPTDecoder(vocab=256, dim=32, heads=2, layers=2,
                                      context=32)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor):
        logits = self.transformer(input_ids)
        loss = nn.functional.cross_entropy(logits.flatten(0, 1),
                                           labels.flatten())
        return {"loss": loss, "logits": logits}


class TokenFile(torch.utils.data.Dataset):
    """Dict samples over a token file (composer-train's uint16 format)."""

    def __init__(self, path, length=32):
        import numpy
        self.tokens = numpy.memmap(path, dtype="<u2", mode="r")
        self.length = length

    def __len__(self):
        return (len(self.tokens) - 1) // self.length

    def __getitem__(self, index):
        start = index * self.length
        chunk = torch.from_numpy(
            self.tokens[start:start + self.length + 1].astype("int64"))
        return {"input_ids": chunk[:-1], "labels": chunk[1:]}


@pytest.fixture(scope="module")
def fortunes(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tokens")
    subprocess.run([sys.executable,
                    os.path.join(SOURCE, "examples", "text_tokens.py"),
                    str(folder), "--limit", "400"], check=True)
    return folder


def test_gpt2_fine_tuned_from_a_state_dict_then_predicts(tmp_path, fortunes):
    pretrained = HuggingFaceGPT(seed=11)
    weights = tmp_path / "pretrained.pt"
    torch.save({"model": pretrained.state_dict()}, weights)
    train = DataLoader(TokenFile(fortunes / "fortunes-train.tokens"),
                       batch_size=8, shuffle=True)
    log = Recorder()
    run = composer_opt.Trainer(model=HuggingFaceGPT(seed=0),
                               train_dataloader=train, max_duration="12ba",
                               load_path=str(weights), loggers=[log],
                               optimizers={"name": "adamw", "lr": 3e-3},
                               progress_bar=False, seed=1, threads=1)
    assert run.recipe["loss"] == "model"
    loaded = dict(run.state.model.named_parameters())
    for name, value in pretrained.named_parameters():
        assert torch.equal(loaded[name], value), name
    run.fit()
    losses = log.series("loss/train/total")
    assert len(losses) == 12 and losses[-1] < losses[0]
    held_out = DataLoader(TokenFile(fortunes / "fortunes-val.tokens"),
                          batch_size=4)
    outputs = run.predict(held_out, subset_num_batches=3)
    assert len(outputs) == 3
    assert outputs[0]["logits"].shape == (4, 32, 256)
    with torch.no_grad():
        batch = next(iter(held_out))
        expected = run.state.model.eval()(**batch)["logits"]
    assert torch.allclose(outputs[0]["logits"], expected, atol=1e-5)


STOCK_EVAL = r"""
import sys, torch
model = torch.jit.load(sys.argv[1])
data = torch.load(sys.argv[2])
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    predicted = model(data["x"]).float().argmax(1)
print(int((predicted == data["y"]).sum()))
"""


def test_export_loads_in_stock_pytorch_with_the_trainers_accuracy(tmp_path):
    test_set = fashion("test", 500)
    run = trainer(model=fashion_resnet(width=8), batches=8,
                  eval_dataloader=DataLoader(test_set, batch_size=250),
                  algorithms=[BlurPool(min_channels=4), ChannelsLast(),
                              EMA(half_life="4ba")],
                  precision="amp_bf16")
    run.fit()
    accuracy = run.state.eval_metrics["eval"]["Accuracy"]
    exported = tmp_path / "model.pt"
    state_dict = run.export_for_inference(str(exported))
    assert state_dict == str(tmp_path / "model.state_dict.pt")
    data = tmp_path / "data.pt"
    torch.save({"x": test_set.tensors[0], "y": test_set.tensors[1]}, data)
    # A fresh process with stock PyTorch alone: no composer_opt, no runtime.
    out = subprocess.run([sys.executable, "-c", STOCK_EVAL, str(exported),
                          str(data)], capture_output=True, text=True,
                         check=True, env={"PATH": os.environ["PATH"],
                                          "OMP_NUM_THREADS": "1"})
    assert int(out.stdout) / 500 == pytest.approx(accuracy, abs=1 / 500)


def test_exported_state_dict_loads_into_the_users_module(tmp_path):
    run = trainer(model=fashion_resnet(width=8), batches=4,
                  algorithms=[ChannelsLast(), EMA(half_life="2ba")])
    run.fit()
    exported = tmp_path / "model.pt"
    state_dict = torch.load(run.export_for_inference(str(exported)))
    eager = fashion_resnet(width=8, seed=123)
    eager.load_state_dict(state_dict)  # strict: the user's names, all
    eager.eval()
    scripted = torch.jit.load(str(exported))
    x = fashion("test", 16).tensors[0]
    with torch.no_grad():
        assert torch.allclose(eager(x), scripted(x), atol=1e-5)
        # The EMA average, not the last step's weights, went out.
        trained = run.state.model
        assert torch.allclose(scripted(x), trained.eval()(x), atol=1e-5)


def test_export_drops_what_acts_only_in_training(tmp_path):
    from composer_opt.algorithms import StochasticDepth
    run = trainer(model=fashion_resnet(width=8), batches=2,
                  algorithms=[StochasticDepth(drop_rate=0.5)])
    assert "rand" in str(run.state.model.inlined_graph)
    run.fit()
    exported = tmp_path / "model.pt"
    run.export_for_inference(str(exported))
    inference = torch.jit.load(str(exported))
    graph = str(inference.graph)
    assert "rand" not in graph and "bernoulli" not in graph
    x = fashion("test", 8).tensors[0]
    with torch.no_grad():
        assert torch.allclose(inference(x), run.state.model.eval()(x),
                              atol=1e-6)


def test_composer_train_exports_after_eval_only(tmp_path, tools):
    path = str(tmp_path / "model.pt")
    torch.jit.script(fashion_resnet()).save(path)
    folder = tmp_path / "run"
    recipe = {
        "seed": 7, "model": path,
        "train_data": idx_section("train", 128, 32),
        "eval_data": idx_section("test", 64, 64),
        "max_duration": "4ba", "threads": 1, "save_folder": str(folder),
        "loggers": {"progress_bar": False},
    }
    (tmp_path / "recipe.yaml").write_text(json.dumps(recipe))
    train = os.path.join(tools, "composer-train")
    subprocess.run([train, str(tmp_path / "recipe.yaml")], check=True)
    # From the newest checkpoint, without training.
    out = tmp_path / "exported.pt"
    subprocess.run([train, str(tmp_path / "recipe.yaml"), "--autoresume",
                    "--eval-only", f"--export={out}"], check=True)
    exported = torch.jit.load(str(out))
    weights = torch.load(str(tmp_path / "exported.state_dict.pt"))
    initial = torch.jit.load(path)
    name = "conv1.weight"
    assert not torch.equal(weights[name], initial.state_dict()[name]), \
        "--eval-only --autoresume exported the untrained weights"
    # The frozen export computes what the model with those weights does.
    initial.load_state_dict(weights)
    x = fashion("test", 8).tensors[0]
    with torch.no_grad():
        assert torch.allclose(exported(x), initial.eval()(x), atol=1e-5)


DDP_CHILD = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import torch
import torchvision
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
import composer_opt
from test_trainer import fashion, fashion_resnet_without_norm

data = fashion("train", 256)
world = int(os.environ.get("WORLD_SIZE", "1"))
rank = int(os.environ.get("RANK", "0"))
sampler = DistributedSampler(data, num_replicas=world, rank=rank,
                             shuffle=False)
loader = DataLoader(data, batch_size=32 // world, sampler=sampler)
run = composer_opt.Trainer(model=fashion_resnet_without_norm(),
                           train_dataloader=loader, max_duration="6ba",
                           optimizers={"name": "sgd", "lr": 0.05},
                           loggers=[{"jsonl": sys.argv[2]}], seed=3,
                           threads=1, progress_bar=False)
run.fit()
"""


def fashion_resnet_without_norm():
    sys.path.insert(0, os.path.join(SOURCE, "examples"))
    from fashion_resnet import FashionResNet
    torch.manual_seed(0)
    return FashionResNet(width=4, norm="none")


def train_losses(path):
    with open(path) as f:
        return [row["loss/train/total"] for row in map(json.loads, f)
                if "loss/train/total" in row]


def test_two_processes_train_as_one(tmp_path):
    import socket
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    one = tmp_path / "one.jsonl"
    subprocess.run([sys.executable, "-c", DDP_CHILD, here, str(one)],
                   check=True, env=env)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    two = tmp_path / "two.jsonl"
    ranks = [subprocess.Popen(
        [sys.executable, "-c", DDP_CHILD, here, str(two)],
        env=dict(env, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="2",
                 MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)))
        for r in range(2)]
    assert [p.wait(timeout=300) for p in ranks] == [0, 0]
    expected, losses = train_losses(one), train_losses(two)
    assert len(expected) == 6
    assert losses == pytest.approx(expected, rel=1e-6, abs=1e-6)


def test_resumes_mid_epoch_as_an_uninterrupted_run(tmp_path, capfd):
    whole = Recorder()
    trainer(batches=6, loggers=[whole], max_duration="6ba").fit()
    folder = str(tmp_path / "checkpoints")
    first = Recorder()
    trainer(batches=6, loggers=[first], max_duration="3ba",
            save_folder=folder, save_interval="3ba").fit()
    second = Recorder()
    resumed = trainer(batches=6, loggers=[second], max_duration="6ba",
                      save_folder=folder, autoresume=True)
    resumed.fit()
    assert "skipping the 3 batches already trained on" in capfd.readouterr().err
    assert resumed.state.timestamp["batch"] == 6
    losses = first.series("loss/train/total") + second.series(
        "loss/train/total")
    assert losses == whole.series("loss/train/total")


def test_fit_further_then_eval():
    log = Recorder()
    run = trainer(batches=4, loggers=[log], max_duration="2ba",
                  eval_dataloader=DataLoader(fashion("test", 128),
                                             batch_size=64))
    run.fit()
    assert run.state.timestamp["batch"] == 2
    run.fit(duration="3ba")
    assert run.state.timestamp["batch"] == 5
    assert len(log.series("loss/train/total")) == 5
    metrics = run.eval()
    assert set(metrics["eval"]) == {"Accuracy", "CrossEntropy"}
    with pytest.raises(ValueError, match="'dur'"):
        run.fit(duration="0.5dur")


def test_composer_train_loads_a_converted_state_dict(tmp_path, tools):
    pretrained = fashion_resnet(seed=11)
    saved = tmp_path / "composer.pt"
    torch.save({"state": {"model": {"module." + k: v for k, v in
                                    pretrained.state_dict().items()}}},
               saved)
    model = str(tmp_path / "model.pt")
    torch.jit.script(fashion_resnet(seed=0)).save(model)
    recipe = {
        "model": model, "max_duration": "1ba", "threads": 1,
        "train_data": idx_section("train", 64, 32),
        "loggers": {"progress_bar": False},
    }
    recipe["eval_data"] = dict(recipe["train_data"])
    (tmp_path / "recipe.yaml").write_text(json.dumps(recipe))
    train = os.path.join(tools, "composer-train")
    # The pickle itself is refused, pointing at the converter.
    refused = subprocess.run(
        [train, str(tmp_path / "recipe.yaml"), f"load_path={saved}",
         "load_weights_only=true"], capture_output=True, text=True)
    assert refused.returncode == 1
    assert "python3 -m composer_opt.weights" in refused.stderr
    converted = tmp_path / "weights.ckpt"
    subprocess.run([sys.executable, "-m", "composer_opt.weights", str(saved),
                    str(converted)], check=True)
    exported = tmp_path / "exported.pt"
    subprocess.run([train, str(tmp_path / "recipe.yaml"),
                    f"load_path={converted}", "load_weights_only=true",
                    "--eval-only", f"--export={exported}"],
                   check=True, capture_output=True)
    loaded = torch.load(str(tmp_path / "exported.state_dict.pt"))
    for name, value in pretrained.state_dict().items():
        assert torch.equal(loaded[name], value), name


STOCK_FOLDER_EVAL = r"""
import sys, torch, torchvision
from torchvision import transforms
model = torch.jit.load(sys.argv[1])
data = torchvision.datasets.ImageFolder(sys.argv[2], transforms.Compose([
    transforms.ToTensor(), transforms.Normalize([0.2860] * 3, [0.3530] * 3)]))
limit = int(sys.argv[3])
loader = torch.utils.data.DataLoader(
    torch.utils.data.Subset(data, range(limit)), batch_size=250)
correct = 0
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    for x, y in loader:
        correct += int((model(x).float().argmax(1) == y).sum())
print(correct / limit)
"""


def test_resnet18_example_fine_tunes_an_image_folder_and_exports(tmp_path):
    examples = os.path.join(SOURCE, "examples")
    jpegs = tmp_path / "jpeg"
    subprocess.run([sys.executable,
                    os.path.join(examples, "make_fashion_jpeg.py"),
                    "--out", str(jpegs), "--limit", "768"], check=True,
                   capture_output=True)
    torch.manual_seed(3)
    weights = tmp_path / "pretrained.pt"
    torch.save(torchvision.models.resnet18(num_classes=10).state_dict(),
               weights)
    out = subprocess.run(
        [sys.executable, os.path.join(examples, "finetune_resnet18.py"),
         str(jpegs), "--weights", str(weights), "--out",
         str(tmp_path / "out"), "--limit", "768", "--epochs", "2",
         "--ema-half-life", "4ba", "--threads", "2"],
        check=True, capture_output=True, text=True)
    assert "a state_dict (at the top): 122 tensors loaded" in out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # Stock PyTorch alone, in a fresh process, evaluates the export as the
    # trainer's last evaluation did.
    stock = subprocess.run(
        [sys.executable, "-c", STOCK_FOLDER_EVAL, result["model"],
         str(jpegs / "test"), "768"], check=True, capture_output=True,
        text=True, env={"PATH": os.environ["PATH"], "OMP_NUM_THREADS": "2"})
    assert float(stock.stdout) == pytest.approx(result["accuracy"],
                                                abs=1 / 768)
    # The state_dict has torchvision's names: the eager ResNet-18 loads it.
    torchvision.models.resnet18(num_classes=10).load_state_dict(
        torch.load(result["state_dict"]))
