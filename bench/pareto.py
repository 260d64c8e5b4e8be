#!/usr/bin/python3
"""Training time against final accuracy for each method on Fashion-MNIST.

Run from the repository root after building (about 65 minutes on 2 cores for
every variant at full length; --only and --max-duration cut it down):
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/pareto.py [--out build/pareto]
        [--only NAME ...] [--max-duration 2ep] [--subset N] [--eval-subset N]
        [--repeat N]

Trains the example ResNet (examples/fashion_resnet.py, one export for all)
with examples/recipes/fashion-mnist.yaml as it is ("plain"), with each
method alone: every runtime algorithm of composer-train that applies to an
image classifier, bf16 autocast (`precision: amp_bf16`), and every
composer-opt pass that changes this model (the model goes through the pass
first, then trains with the plain recipe); then composer-opt's named
pipelines and the recipes in examples/recipes. Training time is the speed
monitor's "wall_clock/train" (evaluation and checkpoints left out), with
the median step beside it (a stretch of the run that the machine slowed
moves it little); the final accuracy is the test accuracy at the end of the
run. Writes
pareto.json (one object per run, `frontier: true` for the runs no other run
beats in both time and accuracy) and pareto.png: one labelled point per
run, coloured by kind, with the frontier drawn, the way Composer presents
its methods. Variants run one after another, so compare them within one
invocation; on a machine whose speed drifts, --repeat N trains every
variant N times in rounds (each round starting one variant later) and
takes the medians.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from train_metrics import train_clock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECIPES = os.path.join(ROOT, "examples", "recipes")
PLAIN = os.path.join(RECIPES, "fashion-mnist.yaml")
FAST = os.path.join(RECIPES, "fashion-mnist-fast.yaml")


def algorithm(name, **options):
    """Overrides enabling a runtime algorithm with `options`."""
    if not options:
        return [f"algorithms.{name}={{}}"]
    return [f"algorithms.{name}.{key}={value}"
            for key, value in options.items()]


# (name, kind, composer-opt options or None for the exported model, recipe,
# overrides). Options follow Composer's defaults where they fit a run of a
# few thousand batches (EMA's and SWA's are for much longer runs).
VARIANTS = [
    ("plain", "baseline", None, PLAIN, []),
    # Runtime algorithms.
    ("label_smoothing", "algorithm", None, PLAIN,
     algorithm("label_smoothing", smoothing=0.1)),
    ("progressive_resizing", "algorithm", None, PLAIN,
     algorithm("progressive_resizing")),
    ("layer_freezing", "algorithm", None, PLAIN, algorithm("layer_freezing")),
    ("selective_backprop", "algorithm", None, PLAIN,
     algorithm("selective_backprop")),
    ("colout", "algorithm", None, PLAIN, algorithm("colout")),
    ("ema", "algorithm", None, PLAIN, algorithm("ema", half_life="100ba")),
    ("mixup", "algorithm", None, PLAIN, algorithm("mixup")),
    ("cutmix", "algorithm", None, PLAIN, algorithm("cutmix")),
    ("cutout", "algorithm", None, PLAIN, algorithm("cutout")),
    ("randaugment", "algorithm", None, PLAIN, algorithm("randaugment")),
    ("augmix", "algorithm", None, PLAIN, algorithm("augmix")),
    ("sam", "algorithm", None, PLAIN, algorithm("sam")),
    ("swa", "algorithm", None, PLAIN, algorithm("swa", swa_start="0.7dur",
                                                swa_end="0.97dur")),
    ("gradient_clipping", "algorithm", None, PLAIN,
     algorithm("gradient_clipping", clipping_type="norm",
               clipping_threshold=1.0)),
    # Precision.
    ("amp_bf16", "precision", None, PLAIN, ["precision=amp_bf16"]),
    # composer-opt passes that change the example ResNet.
    ("blurpool", "graph pass", ["--composer-blurpool"], PLAIN, []),
    ("channels_last", "graph pass", ["--composer-channels-last"], PLAIN, []),
    ("ghost_batchnorm", "graph pass", ["--composer-ghost-batchnorm"], PLAIN,
     []),
    ("stochastic_depth", "graph pass", ["--composer-stochastic-depth"], PLAIN,
     []),
    ("weight_standardization", "graph pass",
     ["--composer-weight-standardization"], PLAIN, []),
    ("mixed_precision", "graph pass",
     ["--composer-mixed-precision"], PLAIN, []),
    # Pipelines and recipes.
    ("mild", "pipeline", ["--composer-mild"], PLAIN, []),
    ("medium", "pipeline", ["--composer-medium"], PLAIN, []),
    ("hot", "pipeline", ["--composer-hot"], PLAIN, []),
    ("fashion-mnist-fast", "recipe", None, FAST, []),
    # The fast recipe with the compiler's bf16 instead of autocast's.
    ("fashion-mnist-fast (bf16 pass)", "recipe",
     ["--composer-mixed-precision"], FAST, ["precision=fp32"]),
]

COLOURS = {"baseline": "black", "algorithm": "tab:blue",
           "precision": "tab:purple", "graph pass": "tab:orange",
           "pipeline": "tab:red", "recipe": "tab:green"}


def file_stem(name):
    """A file name per variant: "fast (bf16 pass)" -> "fast_bf16_pass_"."""
    return re.sub(r"\W+", "_", name)


def prepare_model(exported, options, args, tmp, name):
    if options is None:
        return exported
    path = os.path.join(tmp, file_stem(name) + ".pt")
    done = subprocess.run([os.path.join(args.bin, "composer-opt"), exported,
                           *options, "-o", path], stderr=subprocess.PIPE,
                          text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        return None
    return path


def train(name, model, recipe, overrides, args, tmp):
    # No checkpoints: writing them is not training time, but it slows the
    # run down.
    jsonl = os.path.join(tmp, file_stem(name) + ".jsonl")
    if os.path.exists(jsonl):  # A previous round's.
        os.remove(jsonl)
    common = [f"model={model}", "save_folder=", f"loggers.jsonl={jsonl}",
              "loggers.tensorboard=", "loggers.progress_bar=false",
              f"eval_interval={args.eval_interval}"]
    if args.max_duration:
        common.append(f"max_duration={args.max_duration}")
    if args.subset:
        common.append(f"train_data.limit={args.subset}")
    if args.eval_subset:
        common.append(f"eval_data.limit={args.eval_subset}")
    if args.threads:
        common.append(f"threads={args.threads}")
    done = subprocess.run([os.path.join(args.bin, "composer-train"), recipe] +
                          common + overrides, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        return {"error": f"composer-train exited with {done.returncode}"}
    clock = train_clock(jsonl)
    accuracy, reached = None, None
    with open(jsonl) as f:
        for line in f:
            row = json.loads(line)
            if "metrics/eval/Accuracy" in row:
                accuracy = row["metrics/eval/Accuracy"]
                if reached is None and accuracy >= args.target:
                    reached = clock.get(row["step"])
    steps = sorted(clock)
    step_seconds = [clock[b] - clock[a] for a, b in zip(steps, steps[1:])]
    return {"train_seconds": max(clock.values()), "final_accuracy": accuracy,
            "steps": max(clock), "time_to_target": reached,
            # Robust to a stretch of the run slowed by the machine.
            "median_step_ms": 1000 * statistics.median(step_seconds)
            if step_seconds else None}


def format_ms(value):
    return "-" if value is None else f"{value:.1f}"


def summarize(trials):
    """One point from a variant's repeated runs: their medians; the time to
    target only where every run reached it."""
    reached = [t["time_to_target"] for t in trials]
    return {"train_seconds": statistics.median(t["train_seconds"]
                                               for t in trials),
            "train_seconds_runs": [t["train_seconds"] for t in trials],
            "final_accuracy": statistics.median(t["final_accuracy"]
                                                for t in trials),
            "steps": trials[0]["steps"],
            "median_step_ms": (statistics.median(t["median_step_ms"]
                                                 for t in trials)
                               if trials[0]["median_step_ms"] else None),
            "time_to_target": (None if None in reached
                               else statistics.median(reached))}


def mark_frontier(runs):
    """Flags the runs that no other run beats in time and accuracy."""
    best = -1.0
    for run in sorted(runs, key=lambda r: (r["train_seconds"],
                                           -r["final_accuracy"])):
        run["frontier"] = run["final_accuracy"] > best
        best = max(best, run["final_accuracy"])


def plot(runs, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 6))
    for kind, colour in COLOURS.items():
        points = [r for r in runs if r["kind"] == kind]
        if points:
            ax.scatter([r["train_seconds"] for r in points],
                       [100 * r["final_accuracy"] for r in points],
                       color=colour, label=kind, zorder=3)
    for r in runs:
        ax.annotate(r["name"], (r["train_seconds"], 100 * r["final_accuracy"]),
                    textcoords="offset points", xytext=(4, 3), fontsize=7)
    frontier = sorted((r for r in runs if r["frontier"]),
                      key=lambda r: r["train_seconds"])
    xs, ys = [], []
    for r in frontier:
        if ys:  # A step: no better accuracy until the next frontier point.
            xs.append(r["train_seconds"])
            ys.append(ys[-1])
        xs.append(r["train_seconds"])
        ys.append(100 * r["final_accuracy"])
    ax.plot(xs, ys, color="tab:green", linestyle="--", label="Pareto frontier",
            zorder=2)
    ax.set_xlabel("training time (s, evaluation left out)")
    ax.set_ylabel("final test accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=os.path.join(ROOT, "build", "pareto"),
                        help="folder for pareto.json and pareto.png")
    parser.add_argument("--only", action="append",
                        help="run only these variants (repeatable)")
    parser.add_argument("--list", action="store_true",
                        help="print the variants and exit")
    parser.add_argument("--max-duration",
                        help="override every recipe's max_duration (e.g. 2ep)")
    parser.add_argument("--eval-interval", default="1dur",
                        help="evaluation interval (default: at the end only)")
    parser.add_argument("--subset", type=int,
                        help="train on the first N images")
    parser.add_argument("--eval-subset", type=int,
                        help="evaluate on the first N test images")
    parser.add_argument("--threads", type=int,
                        help="override the recipes' threads")
    parser.add_argument("--target", type=float, default=0.91)
    parser.add_argument("--repeat", type=int, default=1,
                        help="train every variant N times, round after "
                             "round, and plot the median time: drift of the "
                             "machine then spreads over all variants")
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"),
                        help="folder of composer-opt and composer-train")
    args = parser.parse_args()
    if args.list:
        for name, kind, *_ in VARIANTS:
            print(f"{name}\t{kind}")
        return
    variants = [v for v in VARIANTS if not args.only or v[0] in args.only]
    unknown = set(args.only or []) - {v[0] for v in VARIANTS}
    if unknown:
        sys.exit(f"unknown variants: {', '.join(sorted(unknown))} "
                 "(see --list)")
    os.makedirs(args.out, exist_ok=True)
    runs, jobs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        exported = os.path.join(tmp, "fashion.pt")
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "examples", "fashion_resnet.py"),
                        exported], check=True)
        for name, kind, options, recipe, overrides in variants:
            model = prepare_model(exported, options, args, tmp, name)
            run = {"name": name, "kind": kind,
                   "composer_opt": options or [],
                   "recipe": os.path.relpath(recipe, ROOT),
                   "overrides": overrides}
            if model is None:
                run["error"] = "composer-opt failed"
            runs.append(run)
            jobs.append((run, model, recipe, overrides, []))
        for round_index in range(args.repeat):
            # Each round starts one variant later, so that no variant always
            # runs first or last while the machine drifts.
            shift = round_index % len(jobs)
            for run, model, recipe, overrides, trials in (jobs[shift:] +
                                                          jobs[:shift]):
                if "error" in run:
                    continue
                trial = train(run["name"], model, recipe, overrides, args,
                              tmp)
                if "error" in trial:
                    run.update(trial)
                    continue
                trials.append(trial)
                print(f"# {run['name']} (run {len(trials)} of {args.repeat}):"
                      f" {trial['train_seconds']:.1f} s, median step "
                      f"{format_ms(trial['median_step_ms'])} ms, accuracy "
                      f"{trial['final_accuracy']:.4f}", flush=True)
        for run, _, _, _, trials in jobs:
            if "error" not in run:
                run.update(summarize(trials))
    print("| variant | kind | train time (s) | median step (ms) "
          "| final accuracy | time to target (s) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for run in runs:
        if "error" in run:
            print(f"| {run['name']} | {run['kind']} | {run['error']} | | | |")
            continue
        seconds = f"{run['train_seconds']:.1f}"
        if len(run["train_seconds_runs"]) > 1:
            seconds += (f" ({min(run['train_seconds_runs']):.1f}-"
                        f"{max(run['train_seconds_runs']):.1f})")
        reached = run["time_to_target"]
        print(f"| {run['name']} | {run['kind']} | {seconds} | "
              f"{format_ms(run['median_step_ms'])} | "
              f"{run['final_accuracy']:.4f} | "
              f"{'-' if reached is None else f'{reached:.1f}'} |")
    failed = [r for r in runs if "error" in r]
    runs = [r for r in runs if "error" not in r]
    mark_frontier(runs)
    settings = {"max_duration": args.max_duration, "subset": args.subset,
                "repeat": args.repeat,
                "eval_subset": args.eval_subset, "threads": args.threads,
                "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
    with open(os.path.join(args.out, "pareto.json"), "w") as f:
        json.dump({"settings": settings, "runs": runs, "failed": failed}, f,
                  indent=2)
    title = "Fashion-MNIST ResNet, composer-train"
    if args.max_duration or args.subset:
        title += f" ({args.max_duration or 'recipe length'}" + (
            f", {args.subset} images" if args.subset else "") + ")"
    plot(runs, os.path.join(args.out, "pareto.png"), title)
    print("frontier: " + ", ".join(r["name"] for r in runs if r["frontier"]))
    print(f"wrote {os.path.join(args.out, 'pareto.json')} and "
          f"{os.path.join(args.out, 'pareto.png')}")
    if failed:
        sys.exit(f"failed: {', '.join(r['name'] for r in failed)}")


if __name__ == "__main__":
    main()
