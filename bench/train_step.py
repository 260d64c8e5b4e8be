#!/usr/bin/python3
"""Training step time: composer-train vs a PyTorch eager loop in Python.

Run from the repository root after building:
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/train_step.py [--steps N] [--repeat N]

Same model (exported with torch.jit.script for composer-train, the same
nn.Module run eagerly in Python), same synthetic batch shape, same optimizer
(SGD, momentum 0.9), same number of threads. composer-train's step time comes
from its speed monitor ("wall_clock/train", which includes waiting for data
and logging), over the steps after a warm-up; the eager loop is timed around
the same steps, in a fresh process each time, twice: as a user runs it (glibc's
default allocator settings) and with the allocator settings composer-train
applies to itself (freed host memory kept mapped, set with mallopt through
ctypes), which separates the allocator's share of the difference. Prints the
median of --repeat runs and the ratios composer-train / eager (below 1 means
composer-train is faster).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, "build", "bin", "composer-train")
sys.path.insert(0, os.path.join(ROOT, "examples"))
from fashion_resnet import FashionResNet  # noqa: E402
from process_settings import retain_freed_host_memory  # noqa: E402
from train_metrics import seconds_per_step  # noqa: E402


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                                 nn.Linear(256, 256), nn.ReLU(),
                                 nn.Linear(256, 10))

    def forward(self, x):
        return self.net(x)


CASES = [
    ("mlp-784-256-256", lambda: MLP(), 64),
    ("fashion-resnet-8", lambda: FashionResNet(8), 32),
    ("fashion-resnet-16", lambda: FashionResNet(16), 128),
]

RECIPE = """
model: {model}
seed: 1
train_data:
  type: synthetic
  num_samples: {samples}
  shape: [1, 28, 28]
  num_classes: 10
  batch_size: {batch}
  shuffle: false
  num_workers: 1
optimizer: {{name: sgd, lr: 0.01, momentum: 0.9}}
max_duration: {steps}ba
threads: {threads}
loggers: {{progress_bar: false, jsonl: {jsonl}}}
callbacks: {{speed_monitor: {{window_size: 10}}}}
"""


def composer_step(model_path, batch, steps, warmup, threads, tmp):
    jsonl = os.path.join(tmp, "metrics.jsonl")
    if os.path.exists(jsonl):
        os.remove(jsonl)
    recipe = os.path.join(tmp, "recipe.yaml")
    with open(recipe, "w") as f:
        f.write(RECIPE.format(model=model_path, samples=batch * steps,
                              batch=batch, steps=steps, threads=threads,
                              jsonl=jsonl))
    subprocess.run([TRAIN, recipe], check=True)
    return seconds_per_step(jsonl, steps, warmup)


def eager_in_process(case, batch, steps, warmup, threads, retain):
    """Runs eager_step in a fresh Python process, like a user's script."""
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--eager", case,
         "--batch", str(batch), "--steps", str(steps), "--warmup",
         str(warmup), "--threads", str(threads)] +
        (["--retain"] if retain else []),
        check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def eager_step(make, batch, steps, warmup, threads):
    torch.manual_seed(1)
    model = make().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randint(0, 256, (steps, batch, 1, 28, 28),
                         dtype=torch.uint8).float() / 255
    labels = torch.randint(0, 10, (steps, batch))
    start = 0.0
    for step in range(steps):
        if step == warmup:
            start = time.perf_counter()
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(data[step]), labels[step])
        loss.backward()
        optimizer.step()
        loss.item()
    return (time.perf_counter() - start) / (steps - warmup)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    parser.add_argument("--eager", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--retain", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.eager:
        if args.retain:
            retain_freed_host_memory()
        make = dict((name, make) for name, make, _ in CASES)[args.eager]
        print(eager_step(make, args.batch, args.steps, args.warmup,
                         args.threads))
        return
    print(f"torch {torch.__version__}, {args.threads} threads, "
          f"{args.steps - args.warmup} timed steps, median of {args.repeat}")
    print("| model | batch | composer-train ms/step | eager ms/step | ratio "
          "| eager, same allocator settings, ms/step | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make, batch in CASES:
            torch.manual_seed(0)
            path = os.path.join(tmp, name + ".pt")
            torch.jit.script(make()).save(path)
            ours, theirs, tuned = [], [], []
            for _ in range(args.repeat):
                ours.append(composer_step(path, batch, args.steps, args.warmup,
                                          args.threads, tmp))
                theirs.append(eager_in_process(name, batch, args.steps,
                                               args.warmup, args.threads,
                                               False))
                tuned.append(eager_in_process(name, batch, args.steps,
                                              args.warmup, args.threads, True))
            a, b, c = (statistics.median(x) for x in (ours, theirs, tuned))
            print(f"| {name} | {batch} | {a * 1e3:.2f} | {b * 1e3:.2f} | "
                  f"{a / b:.3f} | {c * 1e3:.2f} | {a / c:.3f} |", flush=True)


if __name__ == "__main__":
    main()
