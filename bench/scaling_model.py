#!/usr/bin/python3
"""A scaling model for data-parallel training: step time and memory per
rank for DDP, ZeRO-2 (`shard_grad_op`) and ZeRO-3 (`full_shard`) at N ranks.

    /usr/bin/python3 bench/scaling_model.py validate [--steps N] [--repeat R]
    /usr/bin/python3 bench/scaling_model.py tables

The model, per step and rank:
  compute   measured (one rank at the local batch) or 6 * P * tokens /
            (peak * MFU) for a transformer, 3 * forward FLOPs for a CNN;
            ZeRO-3 as built checkpoints its units and recomputes their
            forward in backward: a third more;
  optimizer an elementwise pass over the parameters the rank steps (all of
            them under DDP, 1/N under ZeRO), measured or at memory bandwidth;
  bytes     per collective, as the runtime logs them: DDP all-reduces the
            gradients; ZeRO-2 reduce-scatters them and all-gathers the
            weights; ZeRO-3 all-gathers the weights in forward and again in
            backward and reduce-scatters the gradients;
  time      of a collective of S bytes on N ranks, ring (alpha-beta):
            all-reduce 2 (N-1) (alpha + S / (N beta)), reduce-scatter or
            all-gather (N-1) (alpha + S / (N beta));
  copies    the runtime's own memory traffic around its collectives
            (flattening, averaging, the local chunk), counted from its code
            in COPY_TRAFFIC, at a measured copy bandwidth (HBM's for GPUs);
  overlap   the part of the communication hidden behind compute: DDP's
            bucketed all-reduce runs during backward (2/3 of the compute);
            the runtime's ZeRO-2 reduces after backward and gathers after
            the step, so nothing of it hides; its ZeRO-3 starts each unit's
            gather while the unit before runs, which hides the gathers
            behind forward and backward where the link runs beside the
            compute (a GPU's; not two CPU cores shared by two ranks), but
            not its reduce-scatters, which backward waits for;
  memory    weights, gradients and optimizer state (K bytes per parameter,
            fp32 master weights included), whole or 1/N as each strategy
            keeps them, ZeRO-3 plus two units in flight, and activations
            (ZeRO-3: the units' inputs, plus one unit's activations while
            its backward recomputes them).

`validate` fits alpha and beta of Gloo over loopback with torch.distributed
(2 processes, 1 thread each), measures one rank's compute (with SGD, while
a second process trains beside it, as the other rank does) and AdamW's step
(what it adds) on the GPT decoder of bench/sharding.py at the
local batch, predicts 2 ranks under DDP, ZeRO-2 and ZeRO-3, and compares with
composer-train's measured step times and logged bytes. `tables` prints predictions for GPT-2 125M, 350M and 1.3B and
ResNet-50 on 8 to 512 H100 GPUs: predictions from vendors' figures, not
measurements.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
PYTHON = "/usr/bin/python3"
STRATEGIES = ("ddp", "zero2", "zero3")
# ZeRO-3's checkpointed units run their forward again in backward: forward
# is a third of forward and backward.
RECOMPUTE = 1 / 3


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------

class Link:
    """A ring's per-step latency alpha (s) and per-rank bandwidth beta
    (bytes/s, one direction)."""

    def __init__(self, name, alpha, beta):
        self.name, self.alpha, self.beta = name, alpha, beta

    def reduce_scatter(self, size, ranks):
        if ranks == 1:
            return 0.0
        return (ranks - 1) * (self.alpha + size / (ranks * self.beta))

    all_gather = reduce_scatter

    def all_reduce(self, size, ranks):
        return 2 * self.reduce_scatter(size, ranks)


def bytes_per_step(strategy, grad_bytes, weight_bytes):
    """{collective: bytes} a step moves (what the runtime logs, before the
    ring's (N-1)/N share)."""
    if strategy == "ddp":
        return {"all_reduce": grad_bytes}
    if strategy == "zero2":
        return {"reduce_scatter": grad_bytes, "all_gather": weight_bytes}
    # Each unit's weights in forward, and again in backward's recomputation.
    return {"reduce_scatter": grad_bytes, "all_gather": 2 * weight_bytes}


# Bytes read plus written per step by the runtime's own copies around its
# collectives, as (multiple of the gradient bytes G, of the weight bytes W)
# one process holds, counted from runtime/dist/ProcessGroup.cpp and
# ShardedDataParallel.cpp at 2 ranks (a chunk is half):
#   DDP     each gradient into its bucket (2 G), the average's division
#           (2 G), back into .grad (2 G);
#   ZeRO-2  the flat gradient (zeros and copy, 3 G), the reduce-scatter's
#           all-to-all (its own chunk, G), sum (1.5 G) and copy out (G),
#           the division (G), the all-gather's own chunk (W);
#   ZeRO-3  per unit: zeros and the gradients added in (4 G), the
#           reduce-scatter (3.5 G), the fp32 sum (G), the division (G),
#           and two gathers' own chunks (2 W).
COPY_TRAFFIC = {"ddp": (6, 0), "zero2": (7.5, 1), "zero3": (9.5, 2)}


def step_time(strategy, ranks, compute, optimizer, grad_bytes, weight_bytes,
              link, copy_bandwidth, overlap=None):
    """Seconds per step. `compute` is forward and backward at the local
    batch; `optimizer` the step over all parameters on one rank;
    `copy_bandwidth` the bytes per second a copy reads plus writes."""
    comm = 0.0
    for kind, size in bytes_per_step(strategy, grad_bytes,
                                     weight_bytes).items():
        comm += getattr(link, kind)(size, ranks)
    if strategy.startswith("zero3"):
        compute *= 1 + RECOMPUTE
    if overlap is None:
        overlap = {"ddp": 2 / 3, "zero2": 0.0, "zero3": 1.0}[strategy]
    hidden = comm
    if strategy == "zero3":
        # The prefetched gathers hide; the reduce-scatters do not.
        hidden = link.all_gather(2 * weight_bytes, ranks)
    exposed = comm - min(hidden, overlap * compute) if ranks > 1 else 0.0
    g, w = COPY_TRAFFIC[strategy]
    copies = (g * grad_bytes + w * weight_bytes) / copy_bandwidth \
        if ranks > 1 else 0.0
    steps = optimizer if strategy == "ddp" else optimizer / ranks
    return compute + steps + exposed + copies, comm


def memory(strategy, ranks, params, weight_bytes_per, grad_bytes_per,
           state_bytes_per, unit_params, activations):
    """Bytes per rank: weights, gradients, optimizer state (with masters),
    activations. `activations` is {"all": kept unchecked, "checkpointed":
    kept with every unit checkpointed}."""
    weights = params * weight_bytes_per
    grads = params * grad_bytes_per
    state = params * state_bytes_per
    if strategy != "ddp":
        grads /= ranks
        state /= ranks
    kept = activations["all"]
    if strategy.startswith("zero3"):
        weights = weights / ranks + 2 * unit_params * weight_bytes_per
        kept = activations["checkpointed"]
    return {"weights": weights, "gradients": grads, "optimizer": state,
            "activations": kept}


# --------------------------------------------------------------------------
# validate: Gloo over loopback, the GPT decoder on 1 and 2 CPU ranks
# --------------------------------------------------------------------------

def _collective_worker(rank, port, sizes, repeat, out):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=2)
    results = {}
    for size in sizes:
        tensor = torch.ones(size // 4)
        dist.all_reduce(tensor)
        times = []
        for _ in range(repeat):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(tensor)
            times.append(time.perf_counter() - start)
        results[size] = statistics.median(times)
    if rank == 0:
        with open(out, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


def _copy_worker(rank, size, repeat, out):
    import torch
    torch.set_num_threads(1)
    source, target = torch.ones(size // 4), torch.empty(size // 4)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        target.copy_(source)
        times.append(time.perf_counter() - start)
    if rank == 0:
        with open(out, "w") as f:
            json.dump(2 * size / statistics.median(times), f)


def measure_copy_bandwidth(tmp):
    """Bytes read plus written per second by one thread's copy of 64 MiB,
    while a second process copies beside it, as the other rank does."""
    import torch.multiprocessing as mp
    out = os.path.join(tmp, "copy.json")
    mp.spawn(_copy_worker, args=(64 << 20, 15, out), nprocs=2)
    with open(out) as f:
        return json.load(f)


def fit_loopback(tmp):
    """alpha and beta of a 2-rank Gloo all-reduce over loopback, by least
    squares on t = 2 alpha + S / beta (the ring formula at N = 2)."""
    import torch.multiprocessing as mp
    sizes = [1 << k for k in range(12, 26, 2)]
    out = os.path.join(tmp, "collectives.json")
    mp.spawn(_collective_worker, args=(29617, sizes, 9, out), nprocs=2)
    with open(out) as f:
        points = [(int(s), t) for s, t in json.load(f).items()]
    n = len(points)
    mean_s = sum(s for s, _ in points) / n
    mean_t = sum(t for _, t in points) / n
    slope = (sum((s - mean_s) * (t - mean_t) for s, t in points)
             / sum((s - mean_s) ** 2 for s, _ in points))
    intercept = mean_t - slope * mean_s
    return Link("Gloo loopback", max(intercept / 2, 0.0), 1 / slope), points


def side_by_side_compute(tmp, model, tokens, steps, warmup, batch):
    """Seconds per SGD step of one process at `batch` while another trains
    beside it: what each of two ranks computes at on this machine, whose two
    cores share caches and memory bandwidth."""
    import sharding
    from train_metrics import seconds_per_step
    processes, paths = [], []
    for copy in range(2):
        jsonl = os.path.join(tmp, f"side-by-side-{copy}.jsonl")
        recipe = os.path.join(tmp, f"side-by-side-{copy}.yaml")
        with open(recipe, "w") as f:
            f.write(sharding.RECIPE.format(
                model=model, tokens=tokens, batch=batch, sharding="none",
                steps=steps, jsonl=jsonl, optimizer="{name: sgd, lr: 1.0e-3}"))
        env = dict(os.environ, OMP_NUM_THREADS="1")
        processes.append(subprocess.Popen([sharding.TRAIN, recipe], env=env,
                                          stdout=subprocess.DEVNULL))
        paths.append(jsonl)
    for process in processes:
        if process.wait() != 0:
            raise RuntimeError("a side-by-side run failed")
    return statistics.mean(seconds_per_step(p, steps, warmup) for p in paths)


def validate(args):
    import sharding
    from train_metrics import seconds_per_step
    local = sharding.GLOBAL_BATCH // 2
    runs = {"compute": ("none", 1, local, "{name: sgd, lr: 1.0e-3}"),
            "one rank": ("none", 1, local, sharding.ADAMW),
            "none": ("none", 2, None, sharding.ADAMW),
            "shard_grad_op": ("shard_grad_op", 2, None, sharding.ADAMW),
            "full_shard": ("full_shard", 2, None, sharding.ADAMW)}
    with tempfile.TemporaryDirectory() as tmp:
        link, points = fit_loopback(tmp)
        copy_bandwidth = measure_copy_bandwidth(tmp)
        model, sharded, tokens = sharding.prepare(tmp)
        measured, logged = {}, {}
        beside = statistics.median(
            side_by_side_compute(tmp, model, tokens, args.steps, args.warmup,
                                 local) for _ in range(args.repeat))
        for name, (strategy, ranks, batch, optimizer) in runs.items():
            times = []
            trained = sharded["true"] if strategy == "full_shard" else model
            for _ in range(args.repeat):
                state, _, jsonl = sharding.run(tmp, trained, tokens, strategy,
                                               ranks, args.steps, batch,
                                               optimizer)
                times.append(seconds_per_step(jsonl, args.steps,
                                              args.warmup))
            measured[name] = statistics.median(times)
            logged[name] = state
    one = logged["one rank"]
    weight_bytes = one["memory/parameters_bytes"]
    grad_bytes = one["memory/gradients_bytes"]
    # SGD without momentum steps in one pass: the rest of its step is the
    # forward and backward. AdamW's step is what it adds.
    alone = measured["compute"]
    optimizer = max(measured["one rank"] - alone, 0.0)
    # Two ranks on two cores compute as two processes side by side do.
    compute = beside
    print(f"Gloo loopback, 2 ranks: alpha {link.alpha * 1e6:.0f} us, "
          f"beta {link.beta / 1e9:.2f} GB/s (fit on all-reduces of "
          f"{points[0][0] >> 10} KiB to {points[-1][0] >> 20} MiB); copies "
          f"at {copy_bandwidth / 1e9:.1f} GB/s read plus written per rank")
    print(f"one rank at the local batch ({local} sequences): "
          f"{measured['one rank'] * 1e3:.0f} ms/step, of which the AdamW step "
          f"{optimizer * 1e3:.0f} ms (against SGD); forward and backward "
          f"{alone * 1e3:.0f} ms alone, {beside * 1e3:.0f} ms beside a second "
          f"process (the compute the 2-rank predictions use)")
    print("2 ranks on 2 cores: communication competes with compute for the "
          "cores, so the model takes no overlap here")
    print("| strategy | logged bytes/step | modelled bytes/step | predicted "
          "ms | measured ms | error |")
    print("| --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for strategy, name in (("ddp", "none"), ("zero2", "shard_grad_op"),
                           ("zero3", "full_shard")):
        state = logged[name]
        sent = sum(state.get(f"communication/bytes/{kind}", 0)
                   for kind in ("all_reduce", "reduce_scatter", "all_gather"))
        modelled = sum(
            (2 if kind == "all_reduce" else 1) * size / 2
            for kind, size in bytes_per_step(strategy, grad_bytes,
                                             weight_bytes).items())
        predicted, _ = step_time(strategy, 2, compute, optimizer, grad_bytes,
                                 weight_bytes, link, copy_bandwidth,
                                 overlap=0.0)
        actual = measured[name]
        error = predicted / actual - 1
        worst = max(worst, abs(error))
        print(f"| {name} | {sent / 1e6:.2f} MB | {modelled / 1e6:.2f} MB | "
              f"{predicted * 1e3:.0f} | {actual * 1e3:.0f} | {error:+.1%} |")
    print(f"largest error: {worst:.1%} (goal: within 20%)")


# --------------------------------------------------------------------------
# tables: predictions for GPUs from vendors' figures
# --------------------------------------------------------------------------

# NVIDIA H100 SXM5 (datasheet): 989 TFLOPS dense BF16, NVLink 4 at 900 GB/s
# per GPU (450 GB/s each way) inside an 8-GPU node; ConnectX-7 NDR
# InfiniBand, 400 Gb/s (50 GB/s each way) per GPU between nodes. The ring's
# per-step latency is NCCL's software latency more than the wire's: 2 us on
# NVLink and 6 us across InfiniBand are assumed. 80 GB of HBM3.
H100_PEAK = 989e12
H100_MEMORY = 80e9
H100_BANDWIDTH = 3.35e12
NVLINK = Link("NVLink 4", 2e-6, 450e9)
INFINIBAND = Link("InfiniBand NDR", 6e-6, 50e9)
# Model FLOPs utilization assumed: 40% for GPT-style transformers (large
# matrix products), 20% for ResNet-50, whose BatchNorm and elementwise
# layers are memory-bound.
MFU = {"transformer": 0.4, "cnn": 0.2}


def gpt2(layers, width, heads, vocab=50257, context=1024):
    params = 12 * layers * width ** 2 + (vocab + context) * width
    return {"layers": layers, "width": width, "heads": heads,
            "params": params, "context": context,
            "unit": 12 * width ** 2}


GPT2 = {"GPT-2 125M": gpt2(12, 768, 12), "GPT-2 350M": gpt2(24, 1024, 16),
        "GPT-2 1.3B": gpt2(24, 2048, 16)}


def gpt_activations(model, sequences):
    """16-bit activations saved for backward (Korthikanti et al. 2022):
    s b h (34 + 5 a s / h) bytes per layer; checkpointed, each layer keeps
    its 16-bit input (2 s b h) and one layer recomputes all of its own."""
    s, h, a = model["context"], model["width"], model["heads"]
    layer = s * sequences * h * (34 + 5 * a * s / h)
    return {"all": model["layers"] * layer,
            "checkpointed": model["layers"] * 2 * s * sequences * h + layer}


def resnet50_profile():
    """torchvision's ResNet-50 at 224x224: parameters, forward FLOPs per
    image, the largest block's parameters, and per image in bf16 the bytes
    of every module output (what backward keeps) and what it keeps with
    every block checkpointed (the blocks' inputs, the outputs outside them
    and the largest block's outputs)."""
    import torch
    import torchvision
    model = torchvision.models.resnet50()
    params = sum(p.numel() for p in model.parameters())
    saved = [0]
    flops = [0]
    inside = {"block": None, "outside": 0, "inputs": 0, "largest": 0}
    per_block = {}

    def hook(module, inputs, output):
        if isinstance(output, torch.Tensor):
            saved[0] += output.numel() * 2
            if inside["block"] is None:
                inside["outside"] += output.numel() * 2
            else:
                per_block[inside["block"]] += output.numel() * 2
        if isinstance(module, torch.nn.Conv2d):
            flops[0] += (2 * output.numel() * module.in_channels
                         // module.groups * module.kernel_size[0]
                         * module.kernel_size[1])
        elif isinstance(module, torch.nn.Linear):
            flops[0] += 2 * module.in_features * module.out_features

    def enter(block, inputs):
        inside["block"] = id(block)
        per_block[id(block)] = 0
        inside["inputs"] += inputs[0].numel() * 2

    def leave(block, inputs, output):
        inside["block"] = None

    for module in model.modules():
        if not list(module.children()):
            module.register_forward_hook(hook)
    blocks = [block for layer in (model.layer1, model.layer2, model.layer3,
                                  model.layer4) for block in layer]
    for block in blocks:
        block.register_forward_pre_hook(enter)
        block.register_forward_hook(leave)
    with torch.no_grad():
        model(torch.zeros(1, 3, 224, 224))
    unit = max(sum(p.numel() for p in block.parameters()) for block in blocks)
    checkpointed = inside["outside"] + inside["inputs"] + max(per_block.values())
    return params, flops[0], unit, {"all": saved[0],
                                    "checkpointed": checkpointed}


def link_for(ranks):
    return NVLINK if ranks <= 8 else INFINIBAND


def print_table(name, params, unit, compute, activations, batch_note, mfu):
    """`activations`: {"all": ..., "checkpointed": ...} bytes per GPU."""
    # bf16 weights and gradients; AdamW's two fp32 moments and fp32 master
    # weights: 12 bytes of state per parameter.
    grad_bytes = weight_bytes = 2 * params
    optimizer = params * 28 / H100_BANDWIDTH  # 28 B/param
    print(f"\n{name}: {params / 1e6:.0f} M parameters; {batch_note}; "
          f"compute {compute * 1e3:.1f} ms/step at {mfu:.0%} MFU\n")
    print("| GPUs | link | DDP ms | ZeRO-2 ms | ZeRO-3 ms | DDP GB | ZeRO-2 "
          "GB | ZeRO-3 GB |")
    print("| --- " * 8 + "|")
    for ranks in (8, 16, 32, 64, 128, 256, 512):
        link = link_for(ranks)
        times, sizes = [], []
        for strategy in STRATEGIES:
            seconds, _ = step_time(strategy, ranks, compute, optimizer,
                                   grad_bytes, weight_bytes, link,
                                   H100_BANDWIDTH)
            held = memory(strategy, ranks, params, 2, 2, 12, unit,
                          activations)
            total = sum(held.values())
            times.append(f"{seconds * 1e3:.1f}")
            sizes.append(f"{total / 1e9:.1f}" +
                         ("" if total <= H100_MEMORY else " (over)"))
        print(f"| {ranks} | {link.name} | " + " | ".join(times) + " | " +
              " | ".join(sizes) + " |")


def tables(args):
    print("Predictions, not measurements: H100 SXM5 (989 TFLOPS BF16, 80 "
          "GB), 8 GPUs per node on NVLink 4 (450 GB/s each way), nodes on "
          "InfiniBand NDR (50 GB/s per GPU); bf16 compute, fp32 AdamW state "
          "and master weights. DDP hides its all-reduce behind backward; "
          "this runtime's ZeRO-2 hides nothing; its ZeRO-3 recomputes each "
          "unit's forward (+1/3 compute) and hides its prefetched gathers "
          "behind forward and backward, but not its reduce-scatters. The "
          "runtime's own copies around the collectives run at HBM3's 3.35 "
          "TB/s. GB: weights, gradients, optimizer state and activations "
          "per GPU (\"over\": beyond 80 GB); ZeRO-3 keeps the units' inputs "
          "and one unit's activations.")
    sequences = 8
    for name, model in GPT2.items():
        tokens = sequences * model["context"]
        mfu = MFU["transformer"]
        compute = 6 * model["params"] * tokens / (H100_PEAK * mfu)
        print_table(name, model["params"], model["unit"], compute,
                    gpt_activations(model, sequences),
                    f"{sequences} sequences of {model['context']} tokens "
                    "per GPU", mfu)
    params, flops, unit, saved = resnet50_profile()
    images = 256
    compute = 3 * flops * images / (H100_PEAK * MFU["cnn"])
    print_table("ResNet-50", params, unit, compute,
                {k: v * images for k, v in saved.items()},
                f"{images} images of 224x224 per GPU", MFU["cnn"])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=("validate", "tables"))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    validate(args) if args.mode == "validate" else tables(args)


if __name__ == "__main__":
    main()
