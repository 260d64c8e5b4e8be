#!/usr/bin/python3
"""What a checkpoint costs a sharded run, written whole or sharded
(`parallelism.state_dict_type: full | sharded`), on 2 CPU ranks.

Run from the repository root after building:
    /usr/bin/python3 bench/sharded_checkpoints.py [--steps N] [--repeat R]

The model, data and recipe are bench/sharding.py's (the example GPT decoder
at 4 layers of width 512, 13 M parameters, AdamW; global batch 8; one
thread per rank). Each strategy (shard_grad_op, full_shard) and checkpoint
kind trains `--steps` steps twice: saving after every batch, and saving
once at the end. A checkpoint's cost is the difference of the two wall
times over the extra saves; a whole checkpoint gathers the weights (under
full_shard) and the optimizer state for rank 0 to write, a sharded one has
every rank write its part. The runs are interleaved, `--repeat` rounds;
medians. Also the bytes on disk of one checkpoint.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

from sharding import ADAMW, GLOBAL_BATCH, RECIPE, TRAIN, prepare


def train(tmp, model, tokens, sharding, kind, steps, interval):
    """Wall seconds of a 2-rank run saving every `interval` batches, and the
    bytes of its last checkpoint."""
    folder = os.path.join(tmp, f"ckpt-{sharding}-{kind}-{interval}")
    shutil.rmtree(folder, ignore_errors=True)
    recipe = os.path.join(tmp, "recipe.yaml")
    text = RECIPE.format(model=model, tokens=tokens, batch=GLOBAL_BATCH // 2,
                         sharding=sharding, steps=steps,
                         jsonl=os.path.join(tmp, "metrics.jsonl"),
                         optimizer=ADAMW)
    text = text.replace(f"parallelism: {{sharding: {sharding}}}",
                        f"parallelism: {{sharding: {sharding}, "
                        f"state_dict_type: {kind}}}")
    text += f"save_folder: {folder}\nsave_interval: {interval}ba\n"
    with open(recipe, "w") as f:
        f.write(text)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    start = time.perf_counter()
    subprocess.run([TRAIN, recipe, "--nproc-per-node", "2"], check=True,
                   env=env, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    last = os.path.join(folder, open(os.path.join(folder, "latest")).read()
                        .strip())
    if os.path.isdir(last):
        size = sum(os.path.getsize(os.path.join(last, f))
                   for f in os.listdir(last))
    else:
        size = os.path.getsize(last)
    shutil.rmtree(folder)
    return seconds, size


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    variants = [(s, k) for s in ("shard_grad_op", "full_shard")
                for k in ("full", "sharded")]
    costs = {v: [] for v in variants}
    sizes = {}
    with tempfile.TemporaryDirectory() as tmp:
        model, sharded, tokens = prepare(tmp)
        for _ in range(args.repeat):
            for sharding, kind in variants:
                trained = sharded if sharding == "full_shard" else model
                every, _ = train(tmp, trained, tokens, sharding, kind,
                                 args.steps, 1)
                once, size = train(tmp, trained, tokens, sharding, kind,
                                   args.steps, args.steps)
                costs[(sharding, kind)].append((every - once) /
                                               (args.steps - 1))
                sizes[(sharding, kind)] = size
    print(f"GPT decoder, 4 x 512, 2 ranks; {args.steps} steps, checkpoint "
          f"every batch against once; median of {args.repeat}")
    print("| sharding | checkpoint | s per checkpoint | MB on disk |")
    print("| --- | --- | --- | --- |")
    median = {v: statistics.median(c) for v, c in costs.items()}
    for sharding, kind in variants:
        print(f"| {sharding} | {kind} | {median[(sharding, kind)]:.2f} | "
              f"{sizes[(sharding, kind)] / 1e6:.0f} |")
    for sharding in ("shard_grad_op", "full_shard"):
        print(f"{sharding}: a sharded checkpoint costs "
              f"{median[(sharding, 'sharded')] / median[(sharding, 'full')]:.2f}x"
              f" a whole one")


if __name__ == "__main__":
    main()
