#!/usr/bin/python3
"""Training step time of the graph methods of issue 13, side by side.

Run from the repository root after building:
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/graph_methods.py [--steps N] [--size S]
        [--only resnet50|gpt]

Each model is exported (scripted), written by composer-opt once per method,
and every variant trained in one process, a step of each in turn, so that
all see the same machine state: the median step time of each, as a ratio to
the unmodified model's. ResNet-50 at batch 8 (SxS images, default 128), and
a GPT-2-style decoder (4 layers, width 256, 128 tokens, batch 8).
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPT = os.path.join(ROOT, "build", "bin", "composer-opt")
E2E = os.path.join(ROOT, "test", "e2e_lib")

RESNET = [
    ("original", []),
    ("stochastic-depth block 0.2", ["--composer-stochastic-depth"]),
    ("stochastic-depth sample 0.2",
     ["--composer-stochastic-depth=stochastic-method=sample"]),
    ("factorize", ["--composer-factorize"]),
    ("weight-standardization", ["--composer-weight-standardization"]),
]
GPT = [
    ("original", []),
    ("glu", ["--composer-glu"]),
    ("stochastic-depth block 0.2", ["--composer-stochastic-depth"]),
    ("alibi", ["--composer-alibi"]),
    ("gyro-dropout", ["--composer-gyro-dropout"]),
    ("mixed-precision", ["--composer-mixed-precision"]),
    ("mixed-precision + low-precision-norms",
     ["--composer-mixed-precision", "--composer-low-precision-norms"]),
]

EXPORT = r"""
import sys, torch
sys.path.insert(0, sys.argv[1])
import models
torch.manual_seed(0)
if sys.argv[2] == "resnet50":
    import torchvision
    model = torchvision.models.resnet50(weights=None)
else:
    model = models.GPT(vocab=1000, dim=256, heads=4, layers=4, context=128)
torch.jit.script(model.train()).save(sys.argv[3])
"""

TRAIN = r"""
import statistics, sys, time, torch
torch.set_num_threads(2)
kind, steps, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names, paths = sys.argv[4::2], sys.argv[5::2]
torch.manual_seed(0)
if kind == "resnet50":
    x, y = torch.randn(8, 3, size, size), torch.randint(0, 1000, (8,))
    loss_of = lambda out: torch.nn.functional.cross_entropy(out.float(), y)
else:
    x, y = torch.randint(0, 1000, (8, 128)), torch.randint(0, 1000, (8, 128))
    loss_of = lambda out: torch.nn.functional.cross_entropy(
        out.float().flatten(0, 1), y.flatten())
runs = []
for path in paths:
    model = torch.jit.load(path).train()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad],
                          lr=0.01, momentum=0.9)
    runs.append((model, opt, []))
def step(model, opt):
    opt.zero_grad()
    loss_of(model(x)).backward()
    opt.step()
for model, opt, _ in runs:  # warm-up (TorchScript profiles its first runs)
    step(model, opt); step(model, opt)
for _ in range(steps):
    for model, opt, times in runs:
        start = time.perf_counter(); step(model, opt)
        times.append(time.perf_counter() - start)
base = statistics.median(runs[0][2])
for name, (_, _, times) in zip(names, runs):
    median = statistics.median(times)
    print(f"{name:<40} {median:>8.3f} {median / base:>6.2f}", flush=True)
"""


def bench(kind, variants, tmp, args):
    model = os.path.join(tmp, f"{kind}.pt")
    subprocess.run(["/usr/bin/python3", "-c", EXPORT, E2E, kind, model],
                   check=True)
    pairs = []
    for index, (name, flags) in enumerate(variants):
        path = os.path.join(tmp, f"{kind}-{index}.pt")
        subprocess.run([OPT, model, *flags, "-o", path], check=True,
                       stderr=subprocess.DEVNULL)
        pairs += [name, path]
    what = (f"ResNet-50, batch 8, {args.size}x{args.size}" if kind == "resnet50"
            else "GPT-2-style decoder, 4 x 256, batch 8 x 128 tokens")
    print(f"\n{what}: median of {args.steps} SGD steps, 2 threads, side by side")
    print(f"{'variant':<40} {'seconds':>8} {'ratio':>6}", flush=True)
    subprocess.run(["/usr/bin/python3", "-c", TRAIN, kind, str(args.steps),
                    str(args.size), *pairs], check=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--only", choices=["resnet50", "gpt"])
    parser.add_argument("--size", type=int, default=128)
    args = parser.parse_args()
    if not os.path.exists(OPT):
        sys.exit(f"missing {OPT}: build first")
    with tempfile.TemporaryDirectory() as tmp:
        if args.only != "gpt":
            bench("resnet50", RESNET, tmp, args)
        if args.only != "resnet50":
            bench("gpt", GPT, tmp, args)


if __name__ == "__main__":
    main()
