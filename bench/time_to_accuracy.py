#!/usr/bin/python3
"""Time to 91% Fashion-MNIST test accuracy with composer-train.

Run from the repository root after building (about 15 minutes on 2 cores):
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/time_to_accuracy.py [--target 0.91]

Trains the example recipe (examples/recipes/fashion-mnist.yaml, a small
ResNet of width 16 from the same seed) four ways and reports the training
time (the speed monitor's "wall_clock/train": evaluation and checkpointing
left out) at the first evaluation that reaches the target:
  plain       the recipe as it is;
  algorithms  plus runtime algorithms: label smoothing, progressive resizing
              and EMA;
  smoothing   plus label smoothing and EMA only (no resizing);
  mild        the model through composer-opt --composer-mild (BlurPool,
              channels-last) first, then the plain recipe.
Evaluation runs every half epoch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from train_metrics import train_clock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, "build", "bin", "composer-train")
OPT = os.path.join(ROOT, "build", "bin", "composer-opt")
RECIPE = os.path.join(ROOT, "examples", "recipes", "fashion-mnist.yaml")

SMOOTHING = [
    "algorithms.label_smoothing.smoothing=0.1",
    "algorithms.ema.half_life=100ba",
]

ALGORITHMS = [
    "algorithms.label_smoothing.smoothing=0.1",
    "algorithms.progressive_resizing.initial_scale=0.5",
    "algorithms.progressive_resizing.delay_fraction=0.25",
    "algorithms.progressive_resizing.finetune_fraction=0.25",
    "algorithms.ema.half_life=100ba",
]


def run(name, model, extra, tmp, target):
    folder = os.path.join(tmp, name)
    jsonl = os.path.join(folder, "metrics.jsonl")
    subprocess.run([TRAIN, RECIPE, f"model={model}", f"save_folder={folder}",
                    f"loggers.jsonl={jsonl}", "loggers.tensorboard=",
                    "loggers.progress_bar=false", "eval_interval=0.5ep",
                    "callbacks.speed_monitor.window_size=50"] + extra,
                   check=True)
    clock, reached, final = train_clock(jsonl), None, None
    with open(jsonl) as f:
        for line in f:
            row = json.loads(line)
            accuracy = row.get("metrics/eval/Accuracy")
            if accuracy is not None:
                final = (row["step"], accuracy)
                if reached is None and accuracy >= target:
                    reached = (row["step"], accuracy, clock[row["step"]])
    return reached, final, max(clock.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", type=float, default=0.91)
    parser.add_argument("--only", action="append",
                        help="run only these variants (repeatable)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "fashion.pt")
        mild = os.path.join(tmp, "fashion.mild.pt")
        subprocess.run([sys.executable, os.path.join(ROOT, "examples",
                                                     "fashion_resnet.py"),
                        model], check=True)
        subprocess.run([OPT, model, "--composer-mild", "-o", mild],
                       check=True, stderr=subprocess.DEVNULL)
        variants = [("plain", model, []), ("algorithms", model, ALGORITHMS),
                    ("smoothing", model, SMOOTHING), ("mild", mild, [])]
        results = {}
        print("| variant | time to target (s) | at batch | accuracy then "
              "| final accuracy | total train time (s) | ratio to plain |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name, path, extra in variants:
            if args.only and name not in args.only:
                continue
            reached, final, total = run(name, path, extra, tmp, args.target)
            results[name] = reached
            base = results.get("plain")
            if reached:
                ratio = (f"{reached[2] / base[2]:.2f}"
                         if base and name != "plain" else "1.00")
                print(f"| {name} | {reached[2]:.1f} | {reached[0]} | "
                      f"{reached[1]:.4f} | {final[1]:.4f} | {total:.1f} | "
                      f"{ratio} |", flush=True)
            else:
                print(f"| {name} | not reached | | | {final[1]:.4f} | "
                      f"{total:.1f} | |", flush=True)


if __name__ == "__main__":
    main()
