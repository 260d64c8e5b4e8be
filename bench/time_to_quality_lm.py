#!/usr/bin/python3
"""Time to the plain recipe's final validation loss, language modelling.

Run from the repository root after building (about 10 minutes on 2 cores):
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/time_to_quality_lm.py \\
        [--sweep [--lrs A,B,C] [--warmups X,Y] | --breakdown] \\
        [--json out.json] [--bin DIR] [recipe overrides]

Recipe overrides (e.g. `threads=1`) go to every run; --bin names another
folder holding composer-opt and composer-train.

Writes Debian's fortunes as byte tokens (examples/text_tokens.py), exports
the example decoder (examples/gpt_decoder.py, 4 layers, width 256, context
256) once, and the same weights through `composer-opt --composer-alibi`,
then trains, from the same seed, one after the other:
  plain  examples/recipes/lm.yaml on the exported decoder;
  fast   examples/recipes/lm-fast.yaml on the ALiBi decoder;
  and with --breakdown the plain recipe in amp_bf16 and the fast one in
  fp32, to show what precision, and ALiBi with sequence-length warmup, give
  alone.
Each variant's training time is the speed monitor's "wall_clock/train"
(evaluation and checkpointing left out); a variant's time to target is that
time at its first evaluation whose validation loss is at most the plain
recipe's final one.

With --sweep the target is a tuned baseline's instead: the plain recipe at
the fast one's tokens per batch (4 x 256, against 16 x 64 after ALiBi's
cut), batches, evaluation interval and precision (amp_bf16), trained at
every learning rate of --lrs with every warmup of --warmups; the one with
the lowest final validation loss is the baseline, and its total training
time the reference the fast recipe is timed against. --longer N then
trains that baseline N times as long and reports when, if ever, it reaches
the fast recipe's final validation loss: the speedup from the other side,
which does not rest on the baseline's short run.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

from train_metrics import train_clock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
RECIPES = os.path.join(ROOT, "examples", "recipes")
LOSS = "metrics/eval/CrossEntropy"


def train(binaries, name, recipe, model, data, tmp, extra):
    folder = os.path.join(tmp, name)
    jsonl = os.path.join(folder, "metrics.jsonl")
    subprocess.run([os.path.join(binaries, "composer-train"),
                    os.path.join(RECIPES, recipe), f"model={model}",
                    f"train_data.path={data}/fortunes-train.tokens",
                    f"eval_data.path={data}/fortunes-val.tokens",
                    f"save_folder={folder}", f"loggers.jsonl={jsonl}",
                    "loggers.tensorboard=", "loggers.progress_bar=false"] +
                   extra, check=True)
    clock = train_clock(jsonl)
    evals = []
    with open(jsonl) as f:
        for line in f:
            row = json.loads(line)
            if LOSS in row:
                evals.append((row["step"], row[LOSS], clock[row["step"]]))
    return evals, max(clock.values())


# The plain recipe at lm-fast.yaml's tokens per batch, duration and
# precision; the learning rate and warmup are swept.
SWEEP_BATCHES = 300
SWEEP_BASE = ["train_data.batch_size=4", f"max_duration={SWEEP_BATCHES}ba",
              "eval_interval=25ba", "precision=amp_bf16"]


def sweep_variants(model, lrs, warmups):
    return [(f"plain lr={lr} warmup={warmup}", "lm.yaml", model,
             SWEEP_BASE + [f"optimizer.lr={lr}",
                           f"scheduler.t_warmup={warmup}"])
            for lr in lrs for warmup in warmups]


def print_sweep(results, names, extra):
    print(f"\nsweep: lm.yaml with {' '.join(SWEEP_BASE + extra)}")
    print("| learning rate, warmup | final val loss | total train time (s) |")
    print("| --- | --- | --- |")
    for name in names:
        result = results[name]
        print(f"| {name[len('plain '):]} | {result['evals'][-1][1]:.4f} | "
              f"{result['total_train_s']:.1f} |")
    best = min(names, key=lambda name: results[name]["evals"][-1][1])
    print(f"tuned baseline: {best}")
    return best


def longer(args, results, variants, baseline, data, tmp, extra):
    """Trains `baseline` --longer times as long and prints when it reaches
    the fast recipe's final loss."""
    _, recipe, path, overrides = next(v for v in variants
                                      if v[0] == baseline)
    name = f"{baseline} x{args.longer}"
    evals, total = train(args.bin, name.replace(" ", "_"), recipe, path,
                         data, tmp, overrides + extra + [
                             f"max_duration={SWEEP_BATCHES * args.longer}ba"])
    results[name] = {"evals": evals, "total_train_s": total}
    goal = results["fast"]["evals"][-1][1]
    fast_s = results["fast"]["evals"][-1][2]
    reached = next((e for e in evals if e[1] <= goal), None)
    print(f"\n{name}: final validation loss {evals[-1][1]:.4f} after "
          f"{total:.1f} s; the fast recipe's final {goal:.4f} after "
          f"{fast_s:.1f} s")
    if reached:
        print(f"reaches it at batch {reached[0]}, {reached[2]:.1f} s: "
              f"{reached[2] / fast_s:.2f}x the fast recipe's time")
    else:
        print(f"never reaches it: the fast recipe is more than "
              f"{total / fast_s:.2f}x sooner")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--breakdown", action="store_true",
                        help="also the plain recipe in amp_bf16 and the fast "
                        "one in fp32")
    parser.add_argument("--sweep", action="store_true",
                        help="time against a tuned baseline: the plain "
                        "recipe at the fast one's tokens, batches and "
                        "precision, its learning rate and warmup swept")
    parser.add_argument("--lrs", default="5e-4,1e-3,2e-3,4e-3",
                        help="--sweep: learning rates, comma-separated")
    parser.add_argument("--warmups", default="0.02dur,0.1dur",
                        help="--sweep: warmups (t_warmup), comma-separated")
    parser.add_argument("--longer", type=int, default=0,
                        help="--sweep: also train the tuned baseline this "
                        "many times as long, to the fast recipe's final "
                        "loss")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--bin", default=BIN,
                        help="where composer-opt and composer-train are")
    args, extra = parser.parse_known_args()
    if args.sweep and args.breakdown:
        parser.error("--sweep and --breakdown are separate runs")
    lrs = [lr for lr in args.lrs.split(",") if lr]
    warmups = [warmup for warmup in args.warmups.split(",") if warmup]
    if args.sweep and (len(lrs) < 3 or len(warmups) < 1):
        parser.error("--sweep needs at least 3 learning rates and a warmup")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data")
        model = os.path.join(tmp, "gpt.pt")
        alibi = os.path.join(tmp, "gpt.alibi.pt")
        examples = os.path.join(ROOT, "examples")
        subprocess.run([sys.executable,
                        os.path.join(examples, "text_tokens.py"), data],
                       check=True)
        subprocess.run([sys.executable,
                        os.path.join(examples, "gpt_decoder.py"), model],
                       check=True)
        subprocess.run([os.path.join(args.bin, "composer-opt"), model,
                        "--composer-alibi", "-o", alibi],
                       check=True, stderr=subprocess.DEVNULL)
        if args.sweep:
            variants = sweep_variants(model, lrs, warmups)
        else:
            variants = [("plain", "lm.yaml", model, [])]
        variants.append(("fast", "lm-fast.yaml", alibi, []))
        if args.breakdown:
            variants += [("plain-bf16", "lm.yaml", model,
                          ["precision=amp_bf16"]),
                         ("fast-fp32", "lm-fast.yaml", alibi,
                          ["precision=fp32"])]
        results = {}
        for name, recipe, path, overrides in variants:
            evals, total = train(args.bin, name, recipe, path, data, tmp,
                                 overrides + extra)
            results[name] = {"evals": evals, "total_train_s": total}
        baseline = "plain"
        sweep = {}
        if args.sweep:
            swept = [name for name, *_ in variants if name != "fast"]
            baseline = print_sweep(results, swept, extra)
            sweep = {name: results[name] for name in swept}
            results = {name: results[name] for name in (baseline, "fast")}
            if args.longer > 1:
                longer(args, results, variants, baseline, data, tmp, extra)
        target = results[baseline]["evals"][-1][1]
        print(f"\ntarget: {baseline}'s final validation loss "
              f"{target:.4f} (perplexity {math.exp(target):.3f})")
        print("| variant | time to target (s) | at batch | final val loss "
              "| final perplexity | total train time (s) | speedup |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        base = results[baseline]["evals"][-1][2]
        for name, result in results.items():
            evals = result["evals"]
            reached = next((e for e in evals if e[1] <= target), None)
            result["time_to_target_s"] = reached[2] if reached else None
            final = evals[-1][1]
            if reached:
                speedup = base / reached[2]
                result["speedup"] = speedup
                print(f"| {name} | {reached[2]:.1f} | {reached[0]} | "
                      f"{final:.4f} | {math.exp(final):.3f} | "
                      f"{result['total_train_s']:.1f} | {speedup:.2f}x |")
            else:
                print(f"| {name} | not reached | | {final:.4f} | "
                      f"{math.exp(final):.3f} | "
                      f"{result['total_train_s']:.1f} | |")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"target": target, "baseline": baseline,
                           "variants": results, "sweep": sweep}, f,
                          indent=1)


if __name__ == "__main__":
    main()
