#!/usr/bin/python3
"""composer-opt's export time with Factorize against the plain export.

Run from the repository root after building:
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/factorize_export.py \
        [--models resnet18,vgg11_bn,...] [--repeat N] [--full-rank vgg11_bn]

For each torchvision classification model (scripted, random weights),
the whole composer-opt process is timed side by side: the round trip
(`-o out.pt`) and `--composer-factorize` at its default options, the
median of --repeat runs each, interleaved; the ratio is the second over
the first. `--full-rank MODEL` also times Factorize forced to full rank on
every convolution and linear of MODEL (the SVD of every weight).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPT = os.path.join(ROOT, "build", "bin", "composer-opt")
MODELS = os.path.join(ROOT, "test", "e2e_lib", "models.py")

CLASSIFIERS = [
    "alexnet", "vgg11_bn", "resnet18", "resnet50", "resnext50_32x4d",
    "wide_resnet50_2", "densenet121", "mobilenet_v2", "mobilenet_v3_large",
    "efficientnet_b0", "regnet_y_400mf", "shufflenet_v2_x1_0",
    "squeezenet1_0", "googlenet", "mnasnet1_0", "convnext_tiny", "vit_b_16",
]
FULL_RANK = ("--composer-factorize=force=true latent-channels=100000 "
             "latent-features=100000 min-channels=1 min-features=1")


def timed(args):
    start = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{result.stderr}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", default=",".join(CLASSIFIERS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--full-rank", default="vgg11_bn",
                        help="model to time at forced full rank ('' skips)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'model':24} {'plain s':>8} {'factorize s':>12} {'ratio':>6}")
        for name in args.models.split(","):
            model = os.path.join(tmp, f"{name}.pt")
            subprocess.run([sys.executable, MODELS, name, "script", model],
                           check=True, capture_output=True)
            out = os.path.join(tmp, "out.pt")
            plain, factorized = [], []
            for _ in range(args.repeat):
                plain.append(timed([OPT, model, "-o", out]))
                factorized.append(
                    timed([OPT, model, "--composer-factorize", "-o", out]))
            p, f = statistics.median(plain), statistics.median(factorized)
            print(f"{name:24} {p:8.2f} {f:12.2f} {f / p:6.2f}", flush=True)
        if args.full_rank:
            model = os.path.join(tmp, f"{args.full_rank}.pt")
            if not os.path.exists(model):
                subprocess.run(
                    [sys.executable, MODELS, args.full_rank, "script", model],
                    check=True, capture_output=True)
            out = os.path.join(tmp, "out.pt")
            plain = timed([OPT, model, "-o", out])
            full = timed([OPT, model, FULL_RANK, "-o", out])
            print(f"{args.full_rank} at full rank: {full:.1f} s "
                  f"(plain export {plain:.1f} s)")


if __name__ == "__main__":
    main()
