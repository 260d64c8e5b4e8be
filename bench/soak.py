#!/usr/bin/python3
"""Resident memory over a long run: does a training process hold its memory?

    OMP_NUM_THREADS=2 /usr/bin/python3 bench/soak.py [--steps 20000]
        [--from-step 2000] [--limit 0.02] [--batch-size 32]
        [--composer-train build/bin/composer-train]

Trains the example Fashion-MNIST ResNet (examples/fashion_resnet.py, width
16) with composer-train on synthetic 1x28x28 images (10 classes, 4,096
samples, reshuffled every epoch) for --steps steps, SGD with momentum, the
memory_monitor callback logging the process's resident set after every
batch to a JSONL file. Prints the RSS curve (every tenth of the run) and
the growth between step --from-step and the last step; exits 1 when it
exceeds --limit (2%).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

RECIPE = """seed: 1
train_data:
  type: synthetic
  num_samples: 4096
  shape: [1, 28, 28]
  num_classes: 10
  batch_size: {batch}
optimizer: {{name: sgd, lr: 0.05, momentum: 0.9}}
max_duration: {steps}ba
callbacks:
  memory_monitor: {{}}
loggers:
  progress_bar: false
threads: 2
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--from-step", type=int, default=2000)
    parser.add_argument("--limit", type=float, default=0.02)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--composer-train",
                        default=os.path.join(ROOT, "build/bin/composer-train"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="soak-")
    model = os.path.join(work, "model.pt")
    subprocess.run([sys.executable, os.path.join(ROOT, "examples/fashion_resnet.py"),
                    model], check=True, stdout=subprocess.DEVNULL)
    recipe = os.path.join(work, "soak.yaml")
    with open(recipe, "w") as f:
        f.write(RECIPE.format(batch=args.batch_size, steps=args.steps))
    metrics = os.path.join(work, "metrics.jsonl")
    start = time.time()
    subprocess.run([args.composer_train, recipe, "model=" + model,
                    "loggers.jsonl=" + metrics], check=True)
    seconds = time.time() - start
    rss = {}
    with open(metrics) as f:
        for line in f:
            row = json.loads(line)
            if "memory/rss_bytes" in row:
                rss[row.get("step", len(rss) + 1)] = row["memory/rss_bytes"]
    steps = sorted(rss)
    print(f"{len(steps)} steps in {seconds:.0f} s; batch {args.batch_size}")
    print("| step | RSS (MiB) |")
    print("| --- | --- |")
    for k in range(11):
        step = steps[min(len(steps) - 1, k * (len(steps) - 1) // 10)]
        print(f"| {step} | {rss[step] / 2**20:.1f} |")
    base = rss[min(steps, key=lambda s: abs(s - args.from_step))]
    end = rss[steps[-1]]
    growth = end / base - 1
    print(f"growth from step {args.from_step} to {steps[-1]}: "
          f"{growth * 100:+.2f}% (limit {args.limit * 100:.0f}%)")
    sys.exit(0 if growth <= args.limit else 1)


if __name__ == "__main__":
    main()
