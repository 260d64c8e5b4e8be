#!/usr/bin/python3
"""Training step time: composer-train vs a PyTorch eager loop in Python.

Run from the repository root after building:
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/train_step.py [--steps N] [--repeat N]
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/train_step.py --algorithms
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/train_step.py --precision

--algorithms times composer-train alone, with each data-side runtime
algorithm of issue 14 against the plain recipe: ColOut (per batch and per
sample), RandAugment and AugMix on the Fashion-MNIST ResNet (real images, one
loader worker), and sequence length warmup on a GPT-2-style decoder
(synthetic tokens); also SAM and selective backprop on the ResNet. The
variants of a model run one after another in each repeat, and the ratios
are of medians.

--precision times composer-train alone on the example ResNet (batch 128,
real images, one loader worker) and on a GPT-2-style decoder (4 layers,
width 256, 8 x 128 synthetic tokens) in fp32, under LibTorch's autocast
(`precision: amp_bf16`), and as composer-opt's bf16 pass writes it
(--composer-mixed-precision, trained with `precision: fp32`), and prints
steps per second and the ratio to fp32; the same measurement as
--algorithms, the variants of a model interleaved in each repeat, in
reverse order every other repeat. It then prints, repeat by repeat,
amp_bf16's step time over the pass's (above 1 where the pass steps faster),
and the median of those ratios.

Same model (exported with torch.jit.script for composer-train, the same
nn.Module run eagerly in Python), same synthetic batch shape, same optimizer
(SGD, momentum 0.9), same number of threads. composer-train's step time comes
from its speed monitor ("wall_clock/train", which includes waiting for data
and logging), over the steps after a warm-up; the eager loop is timed around
the same steps, in a fresh process each time, twice: as a user runs it (glibc's
default allocator settings) and with the allocator settings composer-train
applies to itself (freed host memory kept mapped, set with mallopt through
ctypes), which separates the allocator's share of the difference. Prints the
median of --repeat runs and the ratios composer-train / eager (below 1 means
composer-train is faster).
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
TRAIN = os.path.join(ROOT, "build", "bin", "composer-train")
sys.path.insert(0, os.path.join(ROOT, "examples"))
from fashion_resnet import FashionResNet  # noqa: E402
from process_settings import retain_freed_host_memory  # noqa: E402
from train_metrics import seconds_per_step  # noqa: E402


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                                 nn.Linear(256, 256), nn.ReLU(),
                                 nn.Linear(256, 10))

    def forward(self, x):
        return self.net(x)


CASES = [
    ("mlp-784-256-256", lambda: MLP(), 64),
    ("fashion-resnet-8", lambda: FashionResNet(8), 32),
    ("fashion-resnet-16", lambda: FashionResNet(16), 128),
]

RECIPE = """
model: {model}
seed: 1
train_data:
  type: synthetic
  num_samples: {samples}
  shape: [1, 28, 28]
  num_classes: 10
  batch_size: {batch}
  shuffle: false
  num_workers: 1
optimizer: {{name: sgd, lr: 0.01, momentum: 0.9}}
max_duration: {steps}ba
threads: {threads}
loggers: {{progress_bar: false, jsonl: {jsonl}}}
callbacks: {{speed_monitor: {{window_size: 10}}}}
"""


def run_train(recipe):
    """Runs composer-train quietly; its diagnostics are shown if it fails."""
    done = subprocess.run([TRAIN, recipe], capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise subprocess.CalledProcessError(done.returncode, done.args)


def composer_step(model_path, batch, steps, warmup, threads, tmp):
    jsonl = os.path.join(tmp, "metrics.jsonl")
    if os.path.exists(jsonl):
        os.remove(jsonl)
    recipe = os.path.join(tmp, "recipe.yaml")
    with open(recipe, "w") as f:
        f.write(RECIPE.format(model=model_path, samples=batch * steps,
                              batch=batch, steps=steps, threads=threads,
                              jsonl=jsonl))
    run_train(recipe)
    return seconds_per_step(jsonl, steps, warmup)


# (model, variant, the recipe's algorithms mapping)
ALGORITHM_CASES = [
    ("fashion-resnet-16", "plain", "{}"),
    ("fashion-resnet-16", "colout (batch)", "{colout: {}}"),
    ("fashion-resnet-16", "colout (per sample)", "{colout: {batch: false}}"),
    ("fashion-resnet-16", "randaugment", "{randaugment: {}}"),
    ("fashion-resnet-16", "augmix", "{augmix: {}}"),
    # SAM: two forward-backward passes a step at interval 1. Selective
    # backprop active from the first step (its default window is 0.5-0.9):
    # a scoring forward without gradients, then keep 0.5 of the batch; with
    # interrupt 2 every other step trains on the whole batch.
    ("fashion-resnet-16", "sam", "{sam: {}}"),
    ("fashion-resnet-16", "sam (interval 2)", "{sam: {interval: 2}}"),
    ("fashion-resnet-16", "selective_backprop (interrupt 0)",
     "{selective_backprop: {start: 0, end: 1, interrupt: 0}}"),
    ("fashion-resnet-16", "selective_backprop",
     "{selective_backprop: {start: 0, end: 1}}"),
    ("gpt-4x256", "plain", "{}"),
    ("gpt-4x256", "seq_length_warmup",
     "{seq_length_warmup: {max_seq_length: 128}}"),
]

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
ALGORITHM_DATA = {
    "fashion-resnet-16": f"""
  images: {FASHION}
  labels: {FASHION.replace("images-idx3", "labels-idx1")}
  normalize: {{mean: [0.2860], std: [0.3530]}}
  batch_size: 128
  num_workers: 1""",
    # Sequence length warmup's default duration (0.3) covers the first 30%
    # of the run: the timed steps are all but the first.
    "gpt-4x256": """
  type: synthetic
  num_samples: 4096
  shape: [128]
  vocab_size: 1000
  batch_size: 8
  num_workers: 1""",
}

ALGORITHM_RECIPE = """
model: {model}
seed: 1
train_data:{data}
  limit: {samples}
  shuffle: false
optimizer: {{name: sgd, lr: 0.01, momentum: 0.9}}
max_duration: {steps}ba
threads: {threads}
precision: {precision}
algorithms: {algorithms}
loggers: {{progress_bar: false, jsonl: {jsonl}}}
callbacks: {{speed_monitor: {{window_size: 10}}}}
"""


def export_algorithm_model(name, path):
    if name == "gpt-4x256":
        sys.path.insert(0, os.path.join(ROOT, "test", "e2e_lib"))
        from models import GPT
        model = GPT(vocab=1000, dim=256, heads=4, layers=4, context=128)
    else:
        model = FashionResNet(16)
    torch.manual_seed(0)
    torch.jit.script(model.train()).save(path)


def algorithm_step(model_name, path, algorithms, args, tmp,
                   precision="fp32", skip=None):
    jsonl = os.path.join(tmp, "metrics.jsonl")
    if os.path.exists(jsonl):
        os.remove(jsonl)
    recipe = os.path.join(tmp, "recipe.yaml")
    batch = 128 if model_name.startswith("fashion") else 8
    with open(recipe, "w") as f:
        f.write(ALGORITHM_RECIPE.format(
            model=path, data=ALGORITHM_DATA[model_name],
            samples=batch * args.steps, steps=args.steps,
            threads=args.threads, precision=precision, algorithms=algorithms,
            jsonl=jsonl))
    run_train(recipe)
    # The decoder is timed from its second step, so that sequence length
    # warmup's ramp (the first 30% of the run) is in the window.
    if skip is None:
        skip = 1 if model_name.startswith("gpt") else args.warmup
    return seconds_per_step(jsonl, args.steps, skip)


def compare_algorithms(args):
    print(f"composer-train, {args.threads} threads, {args.steps} steps "
          f"(ResNet: the last {args.steps - args.warmup} timed, decoder: the "
          f"last {args.steps - 1}), median of {args.repeat}")
    print("| model | variant | ms/step | ratio to plain |")
    print("| --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        models = {}
        for name, _, _ in ALGORITHM_CASES:
            if name not in models:
                models[name] = os.path.join(tmp, name + ".pt")
                export_algorithm_model(name, models[name])
        times = {(name, variant): [] for name, variant, _ in ALGORITHM_CASES}
        for _ in range(args.repeat):
            for name, variant, algorithms in ALGORITHM_CASES:
                times[name, variant].append(algorithm_step(
                    name, models[name], algorithms, args, tmp))
        for name, variant, _ in ALGORITHM_CASES:
            median = statistics.median(times[name, variant])
            plain = statistics.median(times[name, "plain"])
            print(f"| {name} | {variant} | {median * 1e3:.1f} | "
                  f"{median / plain:.3f} |", flush=True)


# (variant, composer-opt options or None for the exported model, precision)
PRECISION_CASES = [
    ("fp32", None, "fp32"),
    ("amp_bf16", None, "amp_bf16"),
    ("bf16 pass", ["--composer-mixed-precision"], "fp32"),
    ("channels-last + amp_bf16", ["--composer-channels-last"], "amp_bf16"),
    ("medium pipeline (its bf16 pass)", ["--composer-medium"], "fp32"),
]
# The decoder has no convolution for channels-last or BlurPool.
PRECISION_MODELS = {"fashion-resnet-16": PRECISION_CASES,
                    "gpt-4x256": PRECISION_CASES[:3]}


def compare_precisions(args):
    print(f"composer-train, {args.threads} threads, {args.steps} steps "
          f"(the last {args.steps - args.warmup} timed), median of "
          f"{args.repeat}")
    print("| model | variant | ms/step | steps/s | speedup over fp32 |")
    print("| --- | --- | --- | --- | --- |")
    for model_name in args.precision_model or PRECISION_MODELS:
        compare_precision(args, model_name, PRECISION_MODELS[model_name])


def compare_precision(args, model_name, cases):
    with tempfile.TemporaryDirectory() as tmp:
        exported = os.path.join(tmp, "model.pt")
        export_algorithm_model(model_name, exported)
        models = {}
        for variant, options, _ in cases:
            models[variant] = exported
            if options:
                models[variant] = os.path.join(tmp, f"{len(models)}.pt")
                subprocess.run([os.path.join(ROOT, "build", "bin",
                                             "composer-opt"), exported,
                                *options, "-o", models[variant]],
                               check=True, stderr=subprocess.DEVNULL)
        times = {variant: [] for variant, _, _ in cases}
        failed = set()
        for repeat in range(args.repeat):
            # Every other repeat runs the variants in reverse, so that no
            # variant always follows the same one: the machine's speed
            # drifts over minutes, and a fixed order would bias the ratios.
            order = cases if repeat % 2 == 0 else cases[::-1]
            for variant, _, precision in order:
                if variant in failed:
                    continue
                try:
                    times[variant].append(algorithm_step(
                        model_name, models[variant], "{}", args, tmp,
                        precision, skip=args.warmup))
                except subprocess.CalledProcessError:
                    failed.add(variant)
        fp32 = statistics.median(times["fp32"])
        for variant, _, _ in cases:
            if variant in failed:
                print(f"| {model_name} | {variant} | composer-train failed "
                      "| | |")
                continue
            median = statistics.median(times[variant])
            print(f"| {model_name} | {variant} | {median * 1e3:.1f} | "
                  f"{1 / median:.1f} | {fp32 / median:.2f} |", flush=True)
        if not {"amp_bf16", "bf16 pass"} & failed:
            ratios = [autocast / rewritten for autocast, rewritten in
                      zip(times["amp_bf16"], times["bf16 pass"])]
            print(f"{model_name}: amp_bf16 / bf16 pass step time per repeat: "
                  + ", ".join(f"{ratio:.3f}" for ratio in ratios)
                  + f" (median {statistics.median(ratios):.3f}; the pass "
                  f"is faster in {sum(ratio > 1 for ratio in ratios)} of "
                  f"{len(ratios)})", flush=True)


def eager_in_process(case, batch, steps, warmup, threads, retain):
    """Runs eager_step in a fresh Python process, like a user's script."""
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--eager", case,
         "--batch", str(batch), "--steps", str(steps), "--warmup",
         str(warmup), "--threads", str(threads)] +
        (["--retain"] if retain else []),
        check=True, capture_output=True, text=True).stdout
    return float(out.split()[-1])


def eager_step(make, batch, steps, warmup, threads):
    torch.manual_seed(1)
    model = make().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    data = torch.randint(0, 256, (steps, batch, 1, 28, 28),
                         dtype=torch.uint8).float() / 255
    labels = torch.randint(0, 10, (steps, batch))
    start = 0.0
    for step in range(steps):
        if step == warmup:
            start = time.perf_counter()
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(data[step]), labels[step])
        loss.backward()
        optimizer.step()
        loss.item()
    return (time.perf_counter() - start) / (steps - warmup)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int,
                        default=int(os.environ.get("OMP_NUM_THREADS", "2")))
    parser.add_argument("--algorithms", action="store_true",
                        help="time issue 14's data-side algorithms instead")
    parser.add_argument("--precision", action="store_true",
                        help="fp32 vs amp_bf16 vs the bf16 pass instead")
    parser.add_argument("--precision-model", action="append",
                        choices=list(PRECISION_MODELS),
                        help="--precision: just this model (repeatable)")
    parser.add_argument("--eager", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--retain", action="store_true",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.eager:
        if args.retain:
            retain_freed_host_memory()
        make = dict((name, make) for name, make, _ in CASES)[args.eager]
        print(eager_step(make, args.batch, args.steps, args.warmup,
                         args.threads))
        return
    if args.algorithms:
        compare_algorithms(args)
        return
    if args.precision:
        compare_precisions(args)
        return
    print(f"torch {torch.__version__}, {args.threads} threads, "
          f"{args.steps - args.warmup} timed steps, median of {args.repeat}")
    print("| model | batch | composer-train ms/step | eager ms/step | ratio "
          "| eager, same allocator settings, ms/step | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make, batch in CASES:
            torch.manual_seed(0)
            path = os.path.join(tmp, name + ".pt")
            torch.jit.script(make()).save(path)
            ours, theirs, tuned = [], [], []
            for _ in range(args.repeat):
                ours.append(composer_step(path, batch, args.steps, args.warmup,
                                          args.threads, tmp))
                theirs.append(eager_in_process(name, batch, args.steps,
                                               args.warmup, args.threads,
                                               False))
                tuned.append(eager_in_process(name, batch, args.steps,
                                              args.warmup, args.threads, True))
            a, b, c = (statistics.median(x) for x in (ours, theirs, tuned))
            print(f"| {name} | {batch} | {a * 1e3:.2f} | {b * 1e3:.2f} | "
                  f"{a / b:.3f} | {c * 1e3:.2f} | {a / c:.3f} |", flush=True)


if __name__ == "__main__":
    main()
