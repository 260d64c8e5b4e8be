#!/usr/bin/python3
"""The bf16 pass against bf16 autocast (or a channels-last model against
the model as exported), step by step in one process.

Run from the repository root after building (about 6 minutes on 2 cores):
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/precision_interleaved.py
        [--model fashion-resnet-16 --model gpt-4x256] [--repeat 5]
        [--steps 200] [--warmup 10]
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/precision_interleaved.py \
        --compare channels-last --model fashion64-resnet-16

Why in one process: on this machine the speed of a run drifts by up to 15%
from one process to the next, so comparing whole composer-train runs
(bench/train_step.py --precision) scatters from 0.76 to 1.11 for one pair.
Here both models live in the same process, train on the same batches, and
their steps alternate (A B, then B A), so a change in the machine's speed
meets both alike.

  autocast   the exported model under torch.autocast("cpu", bfloat16): what
             composer-train's `precision: amp_bf16` runs;
  bf16 pass  composer-opt --composer-mixed-precision's output, trained in
             fp32 mode: what `precision: fp32` runs on it.

`--compare channels-last` times the same way the exported model against
composer-opt --composer-channels-last's output, both under autocast: what
fashion64-fast.yaml trains against what fashion64.yaml trains.

Each step is composer-train's: forward, cross entropy (the decoder's per
token), backward, SGD with momentum 0.9, with the loss read back. Both start
from the same weights. As in composer-train: TorchScript's graph executor
does not optimize (`jit_optimize: false`), the allocator keeps freed memory
(process_settings.py), and the same number of threads. The models are
bench/train_step.py's: the example ResNet (width 16) on Fashion-MNIST's
first training images, batch 128, and the GPT decoder (4 layers, width 256)
on 8 x 128 random tokens; and the 64 x 64 example ResNet (three channels,
stride-2 stem, as fashion64.yaml trains it) on the same images scaled to
64 x 64 in three channels, batch 128.

Every repeat is a fresh process. It prints each variant's median step time
and the median, over the step pairs, of autocast's time over the pass's
(above 1: the pass steps faster; with channels-last, the exported model's
over the channels-last model's); then the ratios of all repeats.
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
sys.path.insert(0, os.path.join(ROOT, "bench"))
from eager_fashion import read_idx, DATA, MEAN, STD  # noqa: E402
from process_settings import retain_freed_host_memory  # noqa: E402
from train_step import export_algorithm_model  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "examples"))
import fashion_resnet  # noqa: E402

MODELS = ["fashion-resnet-16", "gpt-4x256", "fashion64-resnet-16"]
# --compare: (the rewriting pass, the two variants' names, whether the
# rewritten model runs under autocast).
COMPARISONS = {
    "precision": ("--composer-mixed-precision", ("autocast", "bf16 pass"),
                  False),
    "channels-last": ("--composer-channels-last",
                      ("as exported", "channels-last"), True),
}
# Distinct batches cycled through; the step time does not depend on them.
BATCHES = 8


def batches(model_name):
    """(inputs, targets) of BATCHES batches for `model_name`."""
    if model_name.startswith("gpt"):
        generator = torch.Generator().manual_seed(1)
        tokens = torch.randint(0, 1000, (BATCHES, 8, 129),
                               generator=generator)
        return tokens[..., :-1], tokens[..., 1:]
    count = BATCHES * 128
    images = read_idx(f"{DATA}/train-images-idx3-ubyte.gz")[:count]
    labels = read_idx(f"{DATA}/train-labels-idx1-ubyte.gz")[:count].long()
    images = ((images.float() / 255 - MEAN) / STD).reshape(count, 1, 28, 28)
    if model_name.startswith("fashion64"):
        images = nn.functional.interpolate(images, size=(64, 64),
                                           mode="bilinear")
        images = images.expand(-1, 3, -1, -1).contiguous()
    return (images.reshape(BATCHES, 128, *images.shape[1:]),
            labels.reshape(BATCHES, 128))


def export_model(model_name, path):
    if not model_name.startswith("fashion64"):
        export_algorithm_model(model_name, path)
        return
    # As examples/fashion_resnet.py --in-channels 3 --stem-stride 2 writes it.
    fashion_resnet.export(path, in_channels=3, stem_stride=2)


class Variant:
    def __init__(self, path, autocast):
        self.model = torch.jit.load(path).train()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01,
                                         momentum=0.9)
        self.autocast = autocast
        self.times = []

    def step(self, inputs, targets):
        start = time.perf_counter()
        self.optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16,
                            enabled=self.autocast):
            logits = self.model(inputs)
            loss = nn.functional.cross_entropy(
                logits.flatten(0, -2), targets.flatten())
        loss.backward()
        self.optimizer.step()
        loss.item()
        self.times.append(time.perf_counter() - start)


def run_repeat(args):
    """One repeat, in this process: prints the two medians and the ratio."""
    retain_freed_host_memory()
    torch.set_num_threads(args.threads)
    torch._C._set_graph_executor_optimize(False)
    inputs, targets = batches(args.model[0])
    autocast = Variant(args.exported, True)
    rewritten = Variant(args.rewritten, COMPARISONS[args.compare][2])
    rewritten.model.load_state_dict(autocast.model.state_dict())
    for step in range(args.steps):
        pair = (autocast, rewritten) if step % 2 == 0 else (rewritten,
                                                            autocast)
        for variant in pair:
            variant.step(inputs[step % BATCHES], targets[step % BATCHES])
    a, b = (v.times[args.warmup:] for v in (autocast, rewritten))
    ratio = statistics.median(x / y for x, y in zip(a, b))
    print(statistics.median(a), statistics.median(b), ratio)


def compare(args, model_name, tmp):
    exported = os.path.join(tmp, "model.pt")
    rewritten = os.path.join(tmp, "rewritten.pt")
    export_model(model_name, exported)
    subprocess.run([OPT, exported, COMPARISONS[args.compare][0], "-o",
                    rewritten], check=True, stderr=subprocess.DEVNULL)
    ratios = []
    for repeat in range(args.repeat):
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--model",
             model_name, "--steps", str(args.steps), "--warmup",
             str(args.warmup), "--threads", str(args.threads),
             "--compare", args.compare,
             "--exported", exported, "--rewritten", rewritten],
            check=True, capture_output=True, text=True).stdout
        a, b, ratio = (float(x) for x in out.split())
        ratios.append(ratio)
        print(f"| {model_name} | {repeat + 1} | {a * 1e3:.1f} | "
              f"{b * 1e3:.1f} | {ratio:.3f} |", flush=True)
    return ratios


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", action="append", choices=MODELS,
                        help="default: the ResNet and the decoder")
    parser.add_argument("--compare", choices=COMPARISONS,
                        default="precision")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200,
                        help="steps of each variant per repeat")
    parser.add_argument("--warmup", type=int, default=10,
                        help="steps of each variant not timed")
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    parser.add_argument("--exported", help=argparse.SUPPRESS)
    parser.add_argument("--rewritten", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.exported:
        run_repeat(args)
        return
    if args.steps <= args.warmup:
        parser.error("--steps must be more than --warmup")
    print(f"{args.threads} threads, {args.steps - args.warmup} timed steps "
          f"of each variant per repeat, steps alternating")
    first, second = COMPARISONS[args.compare][1]
    print(f"| model | repeat | {first} ms/step | {second} ms/step | "
          f"{first} / {second}, median over step pairs |")
    print("| --- | --- | --- | --- | --- |")
    summary = {}
    with tempfile.TemporaryDirectory() as tmp:
        for model_name in args.model or MODELS[:2]:
            summary[model_name] = compare(args, model_name, tmp)
    for model_name, ratios in summary.items():
        print(f"{model_name}: median ratio {statistics.median(ratios):.3f}, "
              f"range {min(ratios):.3f}-{max(ratios):.3f}; {second} at "
              f"least as fast in {sum(r >= 1 for r in ratios)} of "
              f"{len(ratios)} repeats", flush=True)


if __name__ == "__main__":
    main()
