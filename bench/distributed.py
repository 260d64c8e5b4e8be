#!/usr/bin/python3
"""Data-parallel step time on this machine: one process with 2 threads vs
2 processes (Gloo over loopback) with 1 thread each, same global batch.

Run from the repository root after building:
    /usr/bin/python3 bench/distributed.py [--steps N] [--batch B]

Model: the small ResNet of examples/fashion_resnet.py (width 16, no
BatchNorm so the two runs compute the same thing), synthetic 1x28x28 data.
Step times come from composer-train's speed monitor over the steps after a
warm-up. The all-reduce share is estimated as 1 - t(1 process, 1 thread,
batch B/2) / t(2 processes, 1 thread each, batch B/2 each): what a rank
spends beyond its own compute.
"""
import argparse
import os
import statistics
import subprocess
import tempfile

from train_metrics import seconds_per_step

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, "build", "bin", "composer-train")

RECIPE = """
model: {model}
seed: 1
train_data: {{type: synthetic, num_samples: {samples}, shape: [1, 28, 28],
  num_classes: 10, batch_size: {batch}, shuffle: false}}
optimizer: {{name: sgd, lr: 0.01, momentum: 0.9}}
max_duration: {steps}ba
threads: {threads}
loggers: {{progress_bar: false, jsonl: {jsonl}}}
callbacks: {{speed_monitor: {{window_size: 10}}}}
"""


def step_time(tmp, model, batch, steps, warmup, threads, procs):
    jsonl = os.path.join(tmp, "metrics.jsonl")
    if os.path.exists(jsonl):
        os.remove(jsonl)
    recipe = os.path.join(tmp, "recipe.yaml")
    with open(recipe, "w") as f:
        f.write(RECIPE.format(model=model, samples=batch * procs * steps,
                              batch=batch, steps=steps, threads=threads,
                              jsonl=jsonl))
    command = [TRAIN, recipe]
    if procs > 1:
        command += ["--nproc-per-node", str(procs)]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    subprocess.run(command, check=True, env=env)
    return seconds_per_step(jsonl, steps, warmup)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.pt")
        subprocess.run(["/usr/bin/python3",
                        os.path.join(ROOT, "examples", "fashion_resnet.py"),
                        model, "--norm", "none"], check=True)
        half = args.batch // 2
        runs = {"1 process x 2 threads": (args.batch, 2, 1),
                "2 processes x 1 thread": (half, 1, 2),
                "1 process x 1 thread, half batch": (half, 1, 1)}
        times = {}
        for name, (batch, threads, procs) in runs.items():
            times[name] = statistics.median(
                step_time(tmp, model, batch, args.steps, args.warmup, threads,
                          procs) for _ in range(args.repeat))
    one, two, compute = times.values()
    print(f"global batch {args.batch}, {args.steps - args.warmup} timed steps,"
          f" median of {args.repeat}")
    print("| run | ms/step |")
    print("| --- | --- |")
    for name, seconds in times.items():
        print(f"| {name} | {seconds * 1e3:.2f} |")
    print(f"ratio 2 processes / 1 process: {two / one:.3f}")
    print(f"all-reduce share of a 2-process step: {1 - compute / two:.1%}")


if __name__ == "__main__":
    main()
