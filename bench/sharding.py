#!/usr/bin/python3
"""Sharded data parallelism on this machine: what each rank holds, its peak
memory, the step time and the bytes it sends per step, for DDP
(`parallelism.sharding: none`), ZeRO-2 (`shard_grad_op`) and ZeRO-3
(`full_shard`, on the model through composer-shard-params) on CPU ranks.

Run from the repository root after building:
    /usr/bin/python3 bench/sharding.py [--steps N] [--repeat R]

Model: the example GPT decoder (examples/gpt_decoder.py) at a size whose
AdamW state dominates (4 layers of width 512, context 64: 13 M parameters,
activations of a few MB), trained on fortunes byte tokens at a global batch
of 8 sequences, one thread per rank. Memory figures are rank 0's:
  state     the trainable parameters, gradients and optimizer state (fp32
            master shards included) the runtime holds after a step, by its
            own accounting (memory/*_bytes);
  peak RSS  the process's high-water mark (memory_monitor).
ZeRO-3's goal: at most 1/N of one process's state, plus what it holds
gathered at once: the root unit (embeddings, final norm, the tied head:
gathered for the whole step) and two layers (the running one and the
prefetched one).
"full_shard, no prefetch" is the model through composer-shard-params with
prefetch=false: each unit's all-gather starts when the unit runs rather than
while the one before it runs.
Step times are medians over `--repeat` runs of the steps after a warm-up; 4
ranks on 2 cores are oversubscribed, so their times are not comparable and
are left out. Bytes are what rank 0 sent in a step, as ring algorithms move
them.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from train_metrics import seconds_per_step

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, "build", "bin", "composer-train")
OPT = os.path.join(ROOT, "build", "bin", "composer-opt")
PYTHON = "/usr/bin/python3"
GLOBAL_BATCH = 8
ADAMW = "{name: adamw, lr: 1.0e-3, weight_decay: 0.01}"
NO_PREFETCH = "full_shard, no prefetch"

RECIPE = """
model: {model}
seed: 1
train_data: {{type: tokens, path: {tokens}, seq_len: 64,
  batch_size: {batch}}}
optimizer: {optimizer}
algorithms: {{gradient_clipping: {{clipping_type: norm,
  clipping_threshold: 1.0}}}}
parallelism: {{sharding: {sharding}}}
max_duration: {steps}ba
threads: 1
loggers: {{progress_bar: false, jsonl: {jsonl}}}
callbacks: {{speed_monitor: {{window_size: 5}}, memory_monitor: {{}}}}
"""


def prepare(tmp):
    """Exports the model and writes the tokens into `tmp`; returns their
    paths."""
    model = os.path.join(tmp, "gpt.pt")
    subprocess.run([PYTHON, os.path.join(ROOT, "examples", "gpt_decoder.py"),
                    model, "--layers", "4", "--width", "512", "--heads", "8",
                    "--context", "64"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([PYTHON, os.path.join(ROOT, "examples", "text_tokens.py"),
                    tmp], check=True, stdout=subprocess.DEVNULL)
    sharded = {}
    for prefetch in ("true", "false"):
        sharded[prefetch] = os.path.join(tmp, f"gpt-sharded-{prefetch}.pt")
        subprocess.run([OPT, model,
                        f"--composer-shard-params=prefetch={prefetch}",
                        "--lower-to=runtime", "-o", sharded[prefetch]],
                       check=True, stderr=subprocess.DEVNULL)
    return model, sharded, os.path.join(tmp, "fortunes-train.tokens")


def gathered_bound(model):
    """The bytes ZeRO-3 may hold gathered: the root unit's parameters (all
    outside the decoder's layers: gathered for the whole step, as FSDP
    keeps its root unsharded) and the two largest layers' (the running one
    and the prefetched one)."""
    import torch
    layers, root = {}, 0
    for name, tensor in torch.jit.load(model).named_parameters():
        size = tensor.numel() * tensor.element_size()
        if name.startswith("blocks."):
            layer = ".".join(name.split(".")[:2])
            layers[layer] = layers.get(layer, 0) + size
        else:
            root += size
    return root + sum(sorted(layers.values())[-2:])


def run(tmp, model, tokens, sharding, ranks, steps, batch=None,
        optimizer=ADAMW):
    """Trains `steps` steps on `ranks` processes at the global batch (or
    `batch` per rank) with `optimizer` (YAML); returns the last step's
    metrics, rank 0's peak RSS and the metrics file."""
    jsonl = os.path.join(tmp, f"{sharding}-{ranks}.jsonl")
    if os.path.exists(jsonl):
        os.remove(jsonl)
    recipe = os.path.join(tmp, "recipe.yaml")
    with open(recipe, "w") as f:
        f.write(RECIPE.format(model=model, tokens=tokens,
                              batch=batch or GLOBAL_BATCH // ranks,
                              sharding=sharding, steps=steps, jsonl=jsonl,
                              optimizer=optimizer))
    command = [TRAIN, recipe]
    if ranks > 1:
        command += ["--nproc-per-node", str(ranks)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
    with open(jsonl) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    last = [r for r in rows if "memory/parameters_bytes" in r][-1]
    peak = max(r.get("memory/peak_rss_bytes", 0) for r in rows)
    return last, peak, jsonl


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    mib = 1 << 20
    with tempfile.TemporaryDirectory() as tmp:
        model, sharded, tokens = prepare(tmp)
        gathered = gathered_bound(model)
        runs = [("none", 1), ("none", 2), ("shard_grad_op", 2),
                ("full_shard", 2), (NO_PREFETCH, 2), ("none", 4),
                ("shard_grad_op", 4), ("full_shard", 4)]
        rows = []
        for sharding, ranks in runs:
            times, state, peak = [], None, 0
            trained = {"full_shard": sharded["true"],
                       NO_PREFETCH: sharded["false"]}.get(sharding, model)
            strategy = "full_shard" if trained != model else sharding
            for _ in range(args.repeat if ranks <= 2 else 1):
                state, peak_run, jsonl = run(tmp, trained, tokens, strategy,
                                             ranks, args.steps)
                peak = max(peak, peak_run)
                times.append(seconds_per_step(jsonl, args.steps, args.warmup))
            rows.append((sharding, ranks, state, peak,
                         statistics.median(times) if ranks <= 2 else None))
    print(f"GPT decoder, 4 x 512, context 64; global batch {GLOBAL_BATCH}; "
          f"{args.steps - args.warmup} timed steps, median of {args.repeat}")
    print("| sharding | ranks | parameters MiB | gradients MiB | optimizer "
          "MiB | state MiB | peak RSS MiB | ms/step | reduce-scatter MiB | "
          "all-gather MiB | all-reduce MiB |")
    print("| --- " * 11 + "|")
    totals = {}
    for sharding, ranks, state, peak, seconds in rows:
        held = [state[f"memory/{k}_bytes"] / mib
                for k in ("parameters", "gradients", "optimizer_state")]
        totals[(sharding, ranks)] = sum(held)
        sent = [state.get(f"communication/bytes/{k}", 0) / mib
                for k in ("reduce_scatter", "all_gather", "all_reduce")]
        timing = f"{seconds * 1e3:.0f}" if seconds else "-"
        print(f"| {sharding} | {ranks} | " +
              " | ".join(f"{v:.1f}" for v in held) +
              f" | {sum(held):.1f} | {peak / mib:.0f} | {timing} | " +
              " | ".join(f"{v:.2f}" for v in sent) + " |")
    for sharding in ("shard_grad_op", "full_shard"):
        for ranks in (2, 4):
            print(f"state per rank, {sharding} / none at {ranks} ranks: "
                  f"{totals[(sharding, ranks)] / totals[('none', ranks)]:.3f}")
    for ranks in (2, 4):
        bound = totals[("none", 1)] / ranks + gathered / mib
        print(f"full_shard at {ranks} ranks: {totals[('full_shard', ranks)]:.1f}"
              f" MiB against 1/{ranks} of the state plus the root unit and "
              f"two layers, "
              f"{bound:.1f} MiB: "
              f"{'met' if totals[('full_shard', ranks)] <= bound else 'MISSED'}")
    times = {(s, r): t for s, r, _, _, t in rows if t}
    for sharding in ("shard_grad_op", "full_shard", NO_PREFETCH):
        print(f"step time, {sharding} / none at 2 ranks: "
              f"{times[(sharding, 2)] / times[('none', 2)]:.3f}")


if __name__ == "__main__":
    main()
