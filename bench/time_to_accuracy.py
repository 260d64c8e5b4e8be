#!/usr/bin/python3
"""Time to 91% Fashion-MNIST test accuracy with composer-train.

Run from the repository root after building (about 30 minutes on 2 cores):
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/time_to_accuracy.py
        [--target 0.91] [--only plain --only fast --only eager] [--repeat N]
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/time_to_accuracy.py --precision
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/time_to_accuracy.py \
        --data fashion64 [--target 0.90 --target 0.91] [--repeat N]

Trains the example ResNet (examples/fashion_resnet.py, width 16, one export
for every variant) and reports the training time (the speed monitor's
"wall_clock/train": evaluation and checkpointing left out) at the first
evaluation that reaches the target, the final accuracy, and both times as
ratios: how many times sooner than the plain recipe and than eager PyTorch.
Each --target gets its table, all from the same runs.
  plain       examples/recipes/fashion-mnist.yaml as it is;
  fast        examples/recipes/fashion-mnist-fast.yaml;
  eager       the plain recipe in a PyTorch eager loop (bench/eager_fashion.py:
              Debian's torch, same threads, data, augmentation, optimizer
              and schedule), the baseline a user would otherwise run;
  plain-bf16  the plain recipe with `precision: amp_bf16`;
  eager-bf16  the eager loop under bf16 autocast: with plain-bf16, the fair
              baselines on a CPU with bf16 kernels;
  schedule    plain-bf16 with the fast recipe's schedule (its peak learning
              rate, warmup and epochs) but neither label smoothing nor EMA:
              what the schedule alone buys;
  algorithms  plain plus label smoothing, progressive resizing and EMA;
  smoothing   plain plus label smoothing and EMA only (no resizing);
  mild        the model through composer-opt --composer-mild (BlurPool,
              channels-last) first, then the plain recipe.
Evaluation runs every half epoch (234 batches of 128). The variants run one
after another; with --repeat N, N rounds of them, and the medians are
reported (the machine's load changes between runs). With --seed-per-round,
round r trains every variant with seed 17 + r (the recipes' seed is 17), so
the medians are over seeds too, not over one seed's epochs.

--data fashion64 runs plain (examples/recipes/fashion64.yaml, already
`amp_bf16`), fast (fashion64-fast.yaml on the model from composer-opt
--composer-channels-last, as the recipe says), eager and eager-bf16 (the
plain recipe in the eager loop, bench/eager_fashion.py --folder:
torchvision's ImageFolder and transforms) and schedule (plain with
fashion64-fast.yaml's schedule, on the exported model) instead, to 90% by
default:
Fashion-MNIST as 64x64 RGB JPEG folders (examples/make_fashion_jpeg.py,
written to a temporary folder) and the example ResNet for them (3 channels,
stem stride 2).

--precision prints the example ResNet's training steps per second in fp32,
under `precision: amp_bf16` and from composer-opt's bf16 pass
(bench/train_step.py --precision).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import yaml

from train_metrics import train_clock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, "build", "bin", "composer-train")
OPT = os.path.join(ROOT, "build", "bin", "composer-opt")
RECIPE = os.path.join(ROOT, "examples", "recipes", "fashion-mnist.yaml")
FAST = os.path.join(ROOT, "examples", "recipes", "fashion-mnist-fast.yaml")
RECIPE64 = os.path.join(ROOT, "examples", "recipes", "fashion64.yaml")
FAST64 = os.path.join(ROOT, "examples", "recipes", "fashion64-fast.yaml")
EAGER = os.path.join(ROOT, "bench", "eager_fashion.py")
# The recipes' seed, and bench/eager_fashion.py's default.
SEED = 17
# Half an epoch of 60,000 images in batches of 128 (the last partial batch
# is dropped). An interval in epochs counts whole epochs only.
HALF_EPOCH = "234ba"


def fast_schedule(fast_recipe):
    """Overrides that give the plain recipe the fast one's precision and
    schedule: its peak learning rate, warmup and duration."""
    with open(fast_recipe) as f:
        fast = yaml.safe_load(f)
    return [f"precision={fast['precision']}",
            f"optimizer.lr={fast['optimizer']['lr']}",
            f"scheduler.t_warmup={fast['scheduler']['t_warmup']}",
            f"max_duration={fast['max_duration']}"]


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


def accuracies(jsonl, targets):
    """({target: time to it, None if missed}, final accuracy, total
    training time) of a run."""
    clock, final = train_clock(jsonl), None
    reached = dict.fromkeys(targets)
    with open(jsonl) as f:
        for line in f:
            row = json.loads(line)
            accuracy = row.get("metrics/eval/Accuracy")
            if accuracy is not None:
                final = accuracy
                for target in targets:
                    if reached[target] is None and accuracy >= target:
                        reached[target] = clock[row["step"]]
    return reached, final, max(clock.values())


def train(name, model, recipe, extra, tmp, targets, seed):
    folder = os.path.join(tmp, name)
    jsonl = os.path.join(folder, "metrics.jsonl")
    if os.path.exists(jsonl):
        os.remove(jsonl)
    subprocess.run([TRAIN, recipe, f"model={model}", f"save_folder={folder}",
                    f"loggers.jsonl={jsonl}", "loggers.tensorboard=",
                    "loggers.progress_bar=false",
                    f"eval_interval={HALF_EPOCH}",
                    "callbacks.speed_monitor.window_size=50",
                    f"seed={seed}"] + extra,
                   check=True, stdout=subprocess.DEVNULL)
    return accuracies(jsonl, targets)


def eager(model, tmp, targets, threads, extra, seed):
    jsonl = os.path.join(tmp, "eager.jsonl")
    subprocess.run([sys.executable, EAGER, model, "--jsonl", jsonl,
                    "--target", str(targets[0]), "--threads", str(threads),
                    "--seed", str(seed)] + extra,
                   check=True, stdout=subprocess.DEVNULL)
    return accuracies(jsonl, targets)


def runners(args, tmp):
    """Makers of a variant's run: each returns a function of the round's
    seed, for composer-train and for the eager loop."""
    def run(name, model, recipe, extra):
        return lambda seed: train(name, model, recipe, extra, tmp,
                                  args.target, seed)

    def run_eager(model, extra):
        return lambda seed: eager(model, tmp, args.target, args.threads,
                                  extra, seed)
    return run, run_eager


def ratio(base, time):
    return f"{base / time:.2f}x" if base and time else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", type=float, action="append",
                        help="test accuracy to reach (default 0.91, 0.90 "
                        "with --data fashion64); repeatable, one table each")
    parser.add_argument("--data", choices=["fashion", "fashion64"],
                        default="fashion",
                        help="fashion64: the 64x64 JPEG recipes: plain, "
                        "fast, eager and eager-bf16")
    parser.add_argument("--only", action="append",
                        help="run only these variants (repeatable)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of the variants; medians are reported")
    parser.add_argument("--seed-per-round", action="store_true",
                        help="round r trains with seed 17 + r")
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    parser.add_argument("--precision", action="store_true",
                        help="steps per second: fp32, amp_bf16, bf16 pass")
    args = parser.parse_args()
    if args.precision:
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "bench", "train_step.py"),
                        "--precision", "--steps", "160", "--warmup", "10",
                        "--threads", str(args.threads)], check=True)
        return
    if args.target is None:
        args.target = [0.90 if args.data == "fashion64" else 0.91]
    with tempfile.TemporaryDirectory() as tmp:
        if args.data == "fashion64":
            variants = jpeg_variants(args, tmp)
        else:
            variants = fashion_variants(args, tmp)
        unknown = set(args.only or []) - {name for name, _ in variants}
        if unknown:
            parser.error(f"--data {args.data} has no variant "
                         + ", ".join(sorted(unknown)))
        variants = [v for v in variants if not args.only or v[0] in args.only]
        runs = {name: [] for name, _ in variants}
        for round in range(args.repeat):
            seed = SEED + round if args.seed_per_round else SEED
            for name, run in variants:
                runs[name].append(run(seed))
                reached, final, total = runs[name][-1]
                when = ", ".join(
                    f"{target:.1%} " + ("not reached" if time is None
                                        else f"at {time:.1f} s")
                    for target, time in reached.items())
                print(f"round {round + 1} (seed {seed}): {name}: {when}"
                      f", final accuracy {final:.4f}, {total:.1f} s of "
                      "training", file=sys.stderr, flush=True)
    for target in args.target:
        report(args, variants, runs, target)


def jpeg_variants(args, tmp):
    """plain and fast on 64x64 JPEG folders written into `tmp`."""
    folder = os.path.join(tmp, "fashion64")
    model = os.path.join(tmp, "fashion64.pt")
    subprocess.run([sys.executable, os.path.join(ROOT, "examples",
                                                 "make_fashion_jpeg.py"),
                    "--out", folder], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, os.path.join(ROOT, "examples",
                                                 "fashion_resnet.py"),
                    model, "--in-channels", "3", "--stem-stride", "2"],
                   check=True)
    # The fast recipe trains the model in channels-last layout.
    channels_last = os.path.join(tmp, "fashion64.cl.pt")
    subprocess.run([OPT, model, "--composer-channels-last", "-o",
                    channels_last], check=True, stderr=subprocess.DEVNULL)
    extra = [f"threads={args.threads}",
             f"train_data.root={folder}/train",
             f"eval_data.root={folder}/test"]
    # The eager loop reads the recipe's augmentations, optimizer and
    # schedule itself.
    eager_extra = ["--folder", folder]
    run, run_eager = runners(args, tmp)
    return [
        ("plain", run("plain", model, RECIPE64, extra)),
        ("fast", run("fast", channels_last, FAST64, extra)),
        ("eager", run_eager(model, eager_extra)),
        ("schedule", run("schedule", model, RECIPE64,
                         extra + fast_schedule(FAST64))),
        ("eager-bf16", run_eager(model, eager_extra + ["--bf16"])),
    ]


def fashion_variants(args, tmp):
    """The variants on Fashion-MNIST's own 28x28 files."""
    model = os.path.join(tmp, "fashion.pt")
    mild = os.path.join(tmp, "fashion.mild.pt")
    subprocess.run([sys.executable, os.path.join(ROOT, "examples",
                                                 "fashion_resnet.py"),
                    model], check=True)
    if not args.only or "mild" in args.only:
        subprocess.run([OPT, model, "--composer-mild", "-o", mild],
                       check=True, stderr=subprocess.DEVNULL)
    threads = [f"threads={args.threads}"]
    run, run_eager = runners(args, tmp)
    return [
        ("plain", run("plain", model, RECIPE, threads)),
        ("fast", run("fast", model, FAST, threads)),
        ("eager", run_eager(model, [])),
        ("plain-bf16", run("plain-bf16", model, RECIPE,
                           threads + ["precision=amp_bf16"])),
        ("eager-bf16", run_eager(model, ["--bf16"])),
        ("schedule", run("schedule", model, RECIPE,
                         threads + fast_schedule(FAST))),
        ("algorithms", run("algorithms", model, RECIPE, threads + ALGORITHMS)),
        ("smoothing", run("smoothing", model, RECIPE, threads + SMOOTHING)),
        ("mild", run("mild", mild, RECIPE, threads)),
    ]


def report(args, variants, runs, target):
    def median(name, index):
        values = [r[index][target] if index == 0 else r[index]
                  for r in runs.get(name, [])]
        values = [v for v in values if v is not None]
        # A variant that missed the target in any round missed it.
        if index == 0 and len(values) < len(runs.get(name, [])):
            return None
        return statistics.median(values) if values else None

    plain, torch_eager = median("plain", 0), median("eager", 0)
    plain_bf16, eager_bf16 = median("plain-bf16", 0), median("eager-bf16", 0)
    print(f"time to {target:.1%} test accuracy, {args.threads} threads, "
          f"median of {args.repeat}")
    plain_final = median("plain", 1)
    print("| variant | time to target (s) | final accuracy "
          "| final - plain's (points) | total train time (s) "
          "| x sooner than plain | x sooner than eager PyTorch "
          "| x sooner than plain-bf16 | x sooner than eager-bf16 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, _ in variants:
        reached, final = median(name, 0), median(name, 1)
        shown = "not reached" if reached is None else f"{reached:.1f}"
        delta = (f"{100 * (final - plain_final):+.2f}"
                 if plain_final is not None else "")
        print(f"| {name} | {shown} | {final:.4f} | {delta} | "
              f"{median(name, 2):.1f} | {ratio(plain, reached)} | "
              f"{ratio(torch_eager, reached)} | {ratio(plain_bf16, reached)} "
              f"| {ratio(eager_bf16, reached)} |", flush=True)


if __name__ == "__main__":
    main()
