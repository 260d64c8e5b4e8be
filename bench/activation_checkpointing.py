#!/usr/bin/python3
"""Activation checkpointing on the example GPT decoder: the activation
memory a training step keeps for backward and its time, unchecked and with
composer-activation-checkpointing (lowered to the runtime), in one run.

Run from the repository root after building:
    /usr/bin/python3 bench/activation_checkpointing.py [--repeat R]

Model: examples/gpt_decoder.py, 6 layers of width 256, 4 heads, context 256,
dropout 0.1, batch 8 sequences of random tokens; one thread (OMP 1) and
composer-train's allocator settings (glibc's mmap threshold at 32 MiB, no
trimming). Each
variant runs in a fresh process (interleaved, `--repeat` times): forward,
backward and an SGD update per step, 3 warm-up steps and `--steps` timed.
  saved MiB   what autograd keeps from forward for backward: the tensors
              packed by saved_tensors_hooks during forward, each storage
              once, parameters excluded (they are state, not activations);
  peak MiB    the process's high-water RSS above its RSS after loading the
              model (so it includes the gradients, 19 MiB);
  ms/step     median step time.
Ratios are against the unchecked model in the same run.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPT = os.path.join(ROOT, "build", "bin", "composer-opt")
LIBRARY = os.path.join(ROOT, "build", "lib", "libComposerRuntime.so")
PYTHON = "/usr/bin/python3"
BATCH, CONTEXT, VOCAB = 8, 256, 256  # examples/gpt_decoder.py: byte tokens
VARIANTS = [
    ("unchecked", None),
    ("every layer", "composer-activation-checkpointing"),
    ("every 2nd layer", "composer-activation-checkpointing{every=2}"),
]


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(model_path, steps):
    """One variant, in this process: prints its figures as JSON."""
    import torch
    torch.set_num_threads(1)
    torch.ops.load_library(LIBRARY)
    model = torch.jit.load(model_path)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    param_storages = {p.data_ptr() for p in params}
    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, VOCAB, (BATCH, CONTEXT + 1), generator=generator)
    x, y = tokens[:, :-1], tokens[:, 1:]

    def step(hooks=None):
        if hooks:
            with torch.autograd.graph.saved_tensors_hooks(*hooks):
                logits = model(x)
        else:
            logits = model(x)
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.sub_(1e-3 * p.grad)
                p.grad = None

    rest = rss_mib()
    step()
    saved = {}

    def pack(tensor):
        storage = tensor.storage()
        if storage.data_ptr() not in param_storages:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    # Packed during forward only: the recomputation in backward keeps one
    # unit's activations at a time, which the peak shows.
    step((pack, lambda t: t))
    for _ in range(2):
        step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"saved": sum(saved.values()) / 2**20,
                      "peak": peak - rest,
                      "ms": 1000 * statistics.median(times)}))


def export(tmp):
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import gpt_decoder
    path = os.path.join(tmp, "gpt.pt")
    gpt_decoder.export(path, layers=6, width=256, heads=4, context=CONTEXT,
                       dropout=0.1)
    models = {}
    for name, pipeline in VARIANTS:
        if pipeline is None:
            models[name] = path
            continue
        out = os.path.join(tmp, name.replace(" ", "_") + ".pt")
        subprocess.run([OPT, path, f"--pass-pipeline=builtin.module({pipeline})",
                        "--lower-to=runtime", "-o", out], check=True,
                       stderr=subprocess.DEVNULL)
        models[name] = out
    return models


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.steps)
        return
    # composer-train's allocator settings (runtime/ProcessSettings.cpp), so
    # that neither variant pays for returning memory to the system and
    # faulting it back in each step.
    env = dict(os.environ, OMP_NUM_THREADS="1",
               MALLOC_MMAP_THRESHOLD_=str(32 << 20),
               MALLOC_TRIM_THRESHOLD_=str(1 << 30),
               MALLOC_TOP_PAD_=str(64 << 20))
    results = {name: [] for name, _ in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        models = export(tmp)
        for _ in range(args.repeat):
            for name, _ in VARIANTS:
                out = subprocess.run(
                    [PYTHON, __file__, "--measure", models[name],
                     "--steps", str(args.steps)],
                    check=True, capture_output=True, text=True, env=env)
                results[name].append(json.loads(out.stdout.splitlines()[-1]))
    median = {name: {key: statistics.median(r[key] for r in runs)
                     for key in ("saved", "peak", "ms")}
              for name, runs in results.items()}
    base = median["unchecked"]
    print(f"GPT decoder 6 x 256, context {CONTEXT}, batch {BATCH}, "
          f"median of {args.repeat}")
    print("| variant | saved MiB | ratio | peak MiB | ratio | ms/step | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, m in median.items():
        print(f"| {name} | {m['saved']:.1f} | {m['saved'] / base['saved']:.2f} "
              f"| {m['peak']:.1f} | {m['peak'] / base['peak']:.2f} "
              f"| {m['ms']:.0f} | {m['ms'] / base['ms']:.2f} |")


if __name__ == "__main__":
    main()
