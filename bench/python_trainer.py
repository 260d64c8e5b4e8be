#!/usr/bin/python3
"""Step time of composer_opt.Trainer fed by a torch DataLoader, against
composer-train fed by its own loader, and against an eager PyTorch loop
fed by the same DataLoader.

Run from the repository root after building:
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/python_trainer.py [--repeat N]
        [--workers N]

All train the Fashion-MNIST ResNet (examples/fashion_resnet.py, width 16)
at batch 128 on the first --samples real Fashion-MNIST images, with SGD
(lr 0.05, momentum 0.9), fp32, two threads, no evaluation, shuffled. The
Trainer and the eager loops read one torch DataLoader over the images
normalized in memory, with --workers worker processes (default 0: on this
2-core machine a worker process takes its CPU from the step, and in-line
loading is the fastest setting for every Python variant); composer-train
reads the IDX files through its own loader with --workers threads. Two
eager loops: as a user runs it, and tuned as composer-train tunes itself
(freed host memory kept mapped, denormals flushed, both set before torch
starts its threads). Each variant runs in a fresh process; a repeat runs
them one after another, in reverse order every other repeat. A step's time
is the mean over the steps after --warmup, measured by the engine's speed
monitor for the engine (wall_clock/train, which includes waiting for data)
and around the same steps for the eager loops. Prints the medians and the
ratios of the Trainer to composer-train and to each eager loop (below 1:
the Trainer is faster), and of the Trainer fed the same batches prebuilt
in a list (the feed without the DataLoader's own work) to composer-train.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
from fashion_mnist import DATA as FASHION, MEAN, STD  # noqa: E402

# One variant, run in its own process: prints seconds per step.
CHILD = r'''
import json, os, sys, time
sys.path.insert(0, os.path.join(ROOT, "bench"))
if VARIANT == "eager-tuned":
    from process_settings import retain_freed_host_memory
    retain_freed_host_memory()
import torch
if VARIANT == "eager-tuned":
    torch.set_flush_denormal(True)
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
from fashion_mnist import normalized
from fashion_resnet import FashionResNet

x, labels = normalized("train", SAMPLES, FASHION)
loader = DataLoader(TensorDataset(x, labels), batch_size=128, shuffle=True,
                    num_workers=WORKERS, drop_last=True)
torch.set_num_threads(2)
if VARIANT == "trainer-prebuilt":
    # The same batches, built before the run: the feed without the
    # DataLoader's own work.
    loader = list(loader)
torch.manual_seed(0)
model = FashionResNet(width=16)

if VARIANT.startswith("eager"):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    step, start = 0, None
    while step < STEPS:
        for inputs, targets in loader:
            if step == WARMUP:
                start = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            loss = loss_fn(model(inputs), targets)
            loss.backward()
            optimizer.step()
            loss.item()
            step += 1
            if step == STEPS:
                break
    print((time.perf_counter() - start) / (STEPS - WARMUP))
else:
    import composer_opt

    class Clock:
        def __init__(self):
            self.clock = {}
        def log_metrics(self, metrics, step):
            if "wall_clock/train" in metrics:
                self.clock[step] = metrics["wall_clock/train"]

    clock = Clock()
    trainer = composer_opt.Trainer(
        model=model, train_dataloader=loader, max_duration=f"{STEPS}ba",
        optimizers={"name": "sgd", "lr": 0.05, "momentum": 0.9},
        callbacks=["speed_monitor"], loggers=[clock], progress_bar=False,
        seed=0, threads=2)
    trainer.fit()
    print((clock.clock[STEPS] - clock.clock[WARMUP]) / (STEPS - WARMUP))
'''


def child(variant, args):
    source = (f"ROOT = {ROOT!r}; FASHION = {FASHION!r}; "
              f"SAMPLES = {args.samples}; STEPS = {args.steps}; "
              f"WARMUP = {args.warmup}; WORKERS = {args.workers}; "
              f"VARIANT = {variant!r}\n" + CHILD)
    out = subprocess.run([sys.executable, "-c", source], check=True,
                         capture_output=True, text=True).stdout
    return float(out.strip().splitlines()[-1])


def composer_train(args, folder):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from train_metrics import seconds_per_step
    model = os.path.join(folder, "model.pt")
    if not os.path.exists(model):
        import torch
        from fashion_resnet import FashionResNet
        torch.manual_seed(0)
        torch.jit.script(FashionResNet(width=16)).save(model)
    jsonl = os.path.join(folder, "metrics.jsonl")
    if os.path.exists(jsonl):
        os.remove(jsonl)
    recipe = {
        "seed": 0, "model": model,
        "train_data": {
            "images": f"{FASHION}/train-images-idx3-ubyte.gz",
            "labels": f"{FASHION}/train-labels-idx1-ubyte.gz",
            "limit": args.samples, "batch_size": 128,
            "num_workers": args.workers,
            "normalize": {"mean": [MEAN], "std": [STD]}},
        "optimizer": {"name": "sgd", "lr": 0.05, "momentum": 0.9},
        "max_duration": f"{args.steps}ba", "threads": 2,
        "loggers": {"progress_bar": False, "jsonl": jsonl},
        "callbacks": {"speed_monitor": {}},
    }
    path = os.path.join(folder, "recipe.yaml")
    with open(path, "w") as f:
        json.dump(recipe, f)
    run = subprocess.run([os.path.join(ROOT, "build", "bin",
                                       "composer-train"), path],
                         capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"composer-train failed:\n{run.stderr}")
    return seconds_per_step(jsonl, args.steps, args.warmup)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--samples", type=int, default=12800)
    parser.add_argument("--workers", type=int, default=0)
    args = parser.parse_args()
    times = {"trainer": [], "trainer-prebuilt": [], "composer-train": [],
             "eager": [], "eager-tuned": []}
    order = list(times)
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeat):
            for variant in (order if repeat % 2 == 0 else order[::-1]):
                seconds = (composer_train(args, folder)
                           if variant == "composer-train"
                           else child(variant, args))
                times[variant].append(seconds)
            print(f"repeat {repeat + 1}: " + ", ".join(
                f"{v} {times[v][-1] * 1e3:.2f} ms" for v in order),
                flush=True)
    median = {v: statistics.median(t) for v, t in times.items()}
    for variant in order:
        print(f"{variant:15s} median {median[variant] * 1e3:8.2f} ms/step")
    print(f"trainer-prebuilt / composer-train: "
          f"{median['trainer-prebuilt'] / median['composer-train']:.3f}x "
          f"(the engine fed from Python, without the DataLoader's work)")
    for baseline, goal in (("composer-train", "<= 1.05"), ("eager", "<= 0.9"),
                           ("eager-tuned", "<= 0.9")):
        print(f"trainer / {baseline + ':':16s} "
              f"{median['trainer'] / median[baseline]:.3f}x (goal {goal})")


if __name__ == "__main__":
    main()
