#!/usr/bin/python3
"""Benchmark: composer-opt with an empty pipeline against bare
torch::jit::load + save, and import/export time per op.

Run from the repository root after building:
    /usr/bin/python3 bench/roundtrip.py [--repeat N] [--models resnet18,resnet50,resnet101]

Prints, per model, the median wall time of `composer-opt M.pt -o out.pt` and
of `torch-load-save M.pt out.pt` (both whole processes, so both pay
LibTorch's start-up), run alternately so that a machine's drift reaches
both alike, their ratio (target <= 1.2 for resnet50), and the import and
export times per op of the imported @forward. --phases also prints
composer-opt's --mlir-timing report of the median run.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
OPT = os.path.join(BUILD, "bin", "composer-opt")
BASELINE = os.path.join(BUILD, "bench", "torch-load-save")
MODELS = os.path.join(ROOT, "test", "e2e_lib", "models.py")


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def phase_times(model, out):
    """Import and export seconds from composer-opt's --mlir-timing report,
    and the report."""
    report = subprocess.run([OPT, model, "-o", out, "--mlir-timing"],
                            check=True, capture_output=True, text=True).stderr
    def seconds(name):
        match = re.search(r"([0-9.]+) \(\s*[0-9.]+%\)\s+" + re.escape(name), report)
        return float(match.group(1))
    return (seconds("Import to MLIR"), seconds("Export and save TorchScript"),
            report)


def count_ops(model):
    text = subprocess.run([OPT, model], check=True, capture_output=True,
                          text=True).stdout
    body = text[text.index("func.func @forward"):]
    return sum(1 for line in body.splitlines()
               if re.match(r"\s*(%\S+ = )?(composer|func)\.", line))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", default="resnet18,resnet50,resnet101")
    parser.add_argument("--phases", action="store_true",
                        help="print the median run's --mlir-timing report")
    args = parser.parse_args()
    for tool in (OPT, BASELINE):
        if not os.path.exists(tool):
            sys.exit(f"missing {tool}: build first (scripts/setup.sh)")
    env_threads = os.environ.get("OMP_NUM_THREADS", "unset")
    print(f"composer-opt empty pipeline vs torch::jit::load+save "
          f"(median of {args.repeat}, OMP_NUM_THREADS={env_threads})")
    print(f"{'model':<10} {'ops':>6} {'opt s':>7} {'base s':>7} {'ratio':>6}"
          f" {'import us/op':>13} {'export us/op':>13}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            model = os.path.join(tmp, name + ".pt")
            subprocess.run(["/usr/bin/python3", MODELS, name, "script", model],
                           check=True)
            out = os.path.join(tmp, "out.pt")
            wall([OPT, model, "-o", out])  # Warm the page cache.
            opts, bases = [], []
            for _ in range(args.repeat):
                opts.append(wall([OPT, model, "-o", out]))
                bases.append(wall([BASELINE, model, out]))
            opt = statistics.median(opts)
            base = statistics.median(bases)
            phases = sorted((phase_times(model, out)
                             for _ in range(args.repeat)),
                            key=lambda p: p[0] + p[1])
            imp = statistics.median(p[0] for p in phases)
            exp = statistics.median(p[1] for p in phases)
            ops = count_ops(model)
            print(f"{name:<10} {ops:>6} {opt:>7.3f} {base:>7.3f} "
                  f"{opt / base:>6.2f} {imp / ops * 1e6:>13.1f} "
                  f"{exp / ops * 1e6:>13.1f}", flush=True)
            if args.phases:
                print(phases[len(phases) // 2][2])


if __name__ == "__main__":
    main()
