#!/usr/bin/python3
"""Benchmarks of the method passes on ResNet-50.

Run from the repository root after building:
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/passes.py [--repeat N] [--steps N]

1. composer-opt time (import -> passes -> lowering -> export, whole process)
   of each pass and of the mild pipeline, as a ratio to bare
   torch::jit::load + save of the same file.
2. One CPU training step of ResNet-50 (batch 8, 224x224, SGD) in PyTorch
   (Python, Debian's torch, 2 threads, composer-train's allocator settings):
   original vs the channels-last output
   vs the mild pipeline output; median step time and ratios.
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
BASELINE = os.path.join(ROOT, "build", "bench", "torch-load-save")
MODELS = os.path.join(ROOT, "test", "e2e_lib", "models.py")

PIPELINES = [
    ("empty", []),
    ("blurpool", ["--composer-blurpool"]),
    ("squeeze-excite", ["--composer-squeeze-excite"]),
    ("channels-last", ["--composer-channels-last"]),
    ("ghost-batchnorm", ["--composer-ghost-batchnorm"]),
    ("freeze-layers", ["--composer-freeze-layers=num-layers=20"]),
    ("mixed-precision", ["--composer-mixed-precision"]),
    ("mild", ["--composer-mild"]),
]

STEP = r"""
import statistics, sys, time, torch
# As composer-train runs a step: without it glibc's page faults dominate.
sys.path.insert(0, sys.argv[3])
from process_settings import retain_freed_host_memory
retain_freed_host_memory()
torch.set_num_threads(2)
model = torch.jit.load(sys.argv[1]).train()
x = torch.randn(8, 3, 224, 224)
y = torch.randint(0, 1000, (8,))
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9)
def step():
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x).float(), y).backward()
    opt.step()
step()  # warm-up
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter(); step(); times.append(time.perf_counter() - start)
print(statistics.median(times))
"""


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    for tool in (OPT, BASELINE):
        if not os.path.exists(tool):
            sys.exit(f"missing {tool}: build first")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "resnet50.pt")
        subprocess.run(["/usr/bin/python3", MODELS, "resnet50", "script", model],
                       check=True)
        out = os.path.join(tmp, "out.pt")
        base = statistics.median(wall([BASELINE, model, out])
                                 for _ in range(args.repeat))
        print(f"ResNet-50 (scripted): composer-opt vs bare torch::jit::load+save "
              f"({base:.3f} s), median of {args.repeat}")
        print(f"{'pipeline':<16} {'seconds':>8} {'ratio':>6}")
        outputs = {}
        for name, flags in PIPELINES:
            target = os.path.join(tmp, f"{name}.pt")
            t = statistics.median(wall([OPT, model, *flags, "-o", target])
                                  for _ in range(args.repeat))
            outputs[name] = target
            print(f"{name:<16} {t:>8.3f} {t / base:>6.2f}", flush=True)

        print(f"\nOne training step, batch 8, 224x224, SGD, 2 threads "
              f"(median of {args.steps})")
        print(f"{'model':<16} {'seconds':>8} {'vs original':>12}")
        original = None
        for name, path in (("original", model),
                           ("channels-last", outputs["channels-last"]),
                           ("mild", outputs["mild"])):
            result = subprocess.run(
                ["/usr/bin/python3", "-c", STEP, path, str(args.steps),
                 os.path.dirname(os.path.abspath(__file__))],
                check=True, capture_output=True, text=True)
            seconds = float(result.stdout.strip())
            original = original or seconds
            print(f"{name:<16} {seconds:>8.3f} {seconds / original:>12.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
