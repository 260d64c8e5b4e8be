#!/usr/bin/python3
"""Where the bf16 pass and bf16 autocast spend a training step, op by op.

Run from the repository root after building:
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/profile_precision.py
        [--model fashion|gpt] [--steps 20] [--top 12]

Exports the model (the example Fashion-MNIST ResNet at batch 128, or a
GPT-2-style decoder, 4 layers, width 256, on 8 x 128 tokens), writes it
through `composer-opt --composer-mixed-precision`, and runs the same
training step on both with LibTorch's profiler, from the same batches:
  autocast  the exported model under torch.autocast("cpu", bfloat16), as
            composer-train's `precision: amp_bf16` runs it;
  pass      the rewritten model in fp32 mode, its casts in the graph.
A step is forward, cross entropy, backward and an SGD step. Prints per
variant the step's median time, the casts (aten::to / _to_copy / copy_
calls and their time), and the ops taking most time, side by side.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPT = os.path.join(ROOT, "build", "bin", "composer-opt")
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e_lib"))

CASTS = ("aten::to", "aten::_to_copy", "aten::copy_")


def export(name, path):
    torch.manual_seed(0)
    if name == "gpt":
        from models import GPT
        model = GPT(vocab=1000, dim=256, heads=4, layers=4, context=128)
        batch = (torch.randint(0, 1000, (8, 128)),
                 torch.randint(0, 1000, (8, 128)))
    else:
        from fashion_resnet import FashionResNet
        model = FashionResNet(16)
        batch = (torch.randn(128, 1, 28, 28), torch.randint(0, 10, (128,)))
    torch.jit.script(model.train()).save(path)
    return batch


def step(model, optimizer, batch, autocast):
    inputs, targets = batch
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        logits = model(inputs)
    loss = nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def profile(path, batch, autocast, steps):
    model = torch.jit.load(path)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    torch._C._jit_set_profiling_executor(False)
    for _ in range(5):
        step(model, optimizer, batch, autocast)
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        step(model, optimizer, batch, autocast)
        seconds.append(time.perf_counter() - start)
    with torch.autograd.profiler.profile() as prof:
        for _ in range(steps):
            step(model, optimizer, batch, autocast)
    ops = {}
    for event in prof.key_averages():
        ops[event.key] = (event.count / steps, event.self_cpu_time_total /
                          steps / 1e3)
    return statistics.median(seconds), ops


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=["fashion", "gpt"],
                        default="fashion")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exported = os.path.join(tmp, "model.pt")
        rewritten = os.path.join(tmp, "bf16.pt")
        batch = export(args.model, exported)
        subprocess.run([OPT, exported, "--composer-mixed-precision", "-o",
                        rewritten], check=True, stderr=subprocess.DEVNULL)
        results = {}
        # Interleaved, twice each, so that drift reaches both alike.
        for _ in range(2):
            for name, path, autocast in (("autocast", exported, True),
                                         ("pass", rewritten, False)):
                median, ops = profile(path, batch, autocast, args.steps)
                results.setdefault(name, []).append((median, ops))
    print(f"{args.model}: median step (ms), two interleaved runs of "
          f"{args.steps} steps each")
    for name, runs in results.items():
        print(f"  {name}: " + ", ".join(f"{m * 1e3:.1f}" for m, _ in runs))
    ops = {name: runs[-1][1] for name, runs in results.items()}
    print("\ncasts per step (calls, self ms):")
    for cast in CASTS:
        print(f"  {cast:<16} " + "  ".join(
            f"{name} {ops[name].get(cast, (0, 0))[0]:5.0f} calls "
            f"{ops[name].get(cast, (0, 0))[1]:6.2f} ms" for name in ops))
    names = sorted(set(ops["autocast"]) | set(ops["pass"]),
                   key=lambda op: -max(ops["autocast"].get(op, (0, 0))[1],
                                       ops["pass"].get(op, (0, 0))[1]))
    print(f"\ntop {args.top} ops by self time per step (calls, ms):")
    print(f"  {'op':<44} {'autocast':>18} {'pass':>18}")
    for op in names[:args.top]:
        cells = [ops[name].get(op, (0, 0)) for name in ("autocast", "pass")]
        print(f"  {op[:44]:<44} " + " ".join(
            f"{calls:6.0f} {ms:9.2f} ms" for calls, ms in cells))


if __name__ == "__main__":
    main()
