#!/usr/bin/python3
"""Fused composer:: ops vs their aten compositions, forward + backward, CPU.

Run from the repository root after building:
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/ops.py [--batch 8] [--repeat 5]

For each method op at ResNet-50's activation shapes (per sample; batch --batch,
ghost batch norm on --ghost-batch * 4 samples in ghost batches of
--ghost-batch), times one forward and backward of the runtime op
(`torch.ops.composer.*`, from libComposerRuntime) and of the aten composition
`composer-opt --lower-to=aten` emits for it, in NCHW and channels_last, on the
same inputs and output gradient, in one process. The allocator is set as
composer-train sets it (freed host memory kept mapped, via mallopt) for both,
so page faults on fresh allocations do not dominate either side. Prints the
best time of each over --repeat rounds (the two alternate, so a busy moment
hits both) and the speedup aten / runtime per case, and the geometric mean
per op.
"""
import argparse
import math
import os
import time

import torch
import torch.nn.functional as F

from process_settings import retain_freed_host_memory

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_LIB = os.path.join(ROOT, "build", "lib", "libComposerRuntime.so")


def binomial(channels):
    row = torch.tensor([1.0, 2.0, 1.0])
    return (row[:, None] * row[None, :] / 16).expand(channels, 1, 3, 3).contiguous()


def make_step(fn, inputs, grad_out):
    def step():
        for t in inputs:
            t.grad = None
        out = fn(*inputs)
        out.backward(grad_out)
    return step


def best_times(steps, repeat, iters):
    """Best seconds per step of each, measured in alternation."""
    for step in steps:
        step()
    best = [float("inf")] * len(steps)
    for _ in range(repeat):
        for i, step in enumerate(steps):
            start = time.perf_counter()
            for _ in range(iters):
                step()
            best[i] = min(best[i], (time.perf_counter() - start) / iters)
    return best


def cases(batch, ghost):
    ops = torch.ops.composer
    # BlurPool before ResNet-50's strided convs (blur_first: stride 1 on the
    # conv's input): layer2-4's first 3x3 conv and downsample inputs.
    for c, hw in [(128, 56), (256, 56), (256, 28), (512, 28), (512, 14), (1024, 14)]:
        f = binomial(c)
        yield ("blur_pool2d", (batch, c, hw, hw), [],
               lambda x, f=f: ops.blur_pool2d(x, f, [1, 1]),
               lambda x, f=f, c=c: F.conv2d(x, f, None, 1, 1, 1, c))
    # The stem's max pool: max pool at stride 1, then blur at stride 2.
    f = binomial(64)
    yield ("blur_max_pool2d", (batch, 64, 112, 112), [],
           lambda x: ops.blur_max_pool2d(x, f, [3, 3], [1, 1], [1, 1], [2, 2]),
           lambda x: F.conv2d(F.max_pool2d(x, 3, 1, 1), f, None, 2, 1, 1, 64))
    # Every batch norm shape of ResNet-50, in ghost batches.
    n = ghost * 4
    for c, hw in [(64, 112), (64, 56), (256, 56), (128, 28), (512, 28),
                  (256, 14), (1024, 14), (512, 7), (2048, 7)]:
        mean, var = torch.zeros(c), torch.ones(c)
        mean_ref, var_ref = torch.zeros(c), torch.ones(c)

        def aten_gbn(x, w, b, mean=mean_ref, var=var_ref):
            chunks = x.chunk(-(-x.shape[0] // ghost))  # as Composer
            m = 0.1 / len(chunks)
            return torch.cat([F.batch_norm(ch, mean, var, w, b, True, m, 1e-5)
                              for ch in chunks])

        yield ("ghost_batch_norm", (n, c, hw, hw), [c, c],
               lambda x, w, b, mean=mean, var=var: ops.ghost_batch_norm(
                   x, w, b, mean, var, True, 0.1, 1e-5, ghost),
               aten_gbn)
    # Squeeze-excite after ResNet-50's convs with >= 128 channels.
    for c, hw in [(256, 56), (128, 28), (512, 28), (1024, 14), (512, 7), (2048, 7)]:
        def aten_se(x, fc1, fc2):
            gate = torch.sigmoid(F.linear(F.relu(F.linear(x.mean((2, 3)), fc1)), fc2))
            return x * gate[:, :, None, None]

        yield ("squeeze_excite", (batch, c, hw, hw), [(64, c), (c, 64)],
               lambda x, fc1, fc2: ops.squeeze_excite(x, fc1, fc2), aten_se)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", default=DEFAULT_LIB)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--ghost-batch", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--only", help="run only this op")
    args = parser.parse_args()

    retain_freed_host_memory()
    torch.ops.load_library(args.lib)
    torch.manual_seed(0)
    dtype = getattr(torch, args.dtype)
    print(f"threads {torch.get_num_threads()}, batch {args.batch}, "
          f"ghost batches of {args.ghost_batch}, {args.dtype}, "
          f"{args.repeat} x {args.iters} steps each")
    print(f"{'op':18} {'shape':22} {'format':13} {'aten ms':>9} {'runtime ms':>10} {'speedup':>8}")
    speedups = {}
    for name, shape, param_shapes, fused, aten in cases(args.batch, args.ghost_batch):
        if args.only and name != args.only:
            continue
        for fmt_name, fmt in [("nchw", torch.contiguous_format),
                              ("channels_last", torch.channels_last)]:
            x = torch.randn(shape).to(dtype).contiguous(memory_format=fmt)
            # Reduced-precision activations with fp32 parameters, as under
            # the mixed-precision pass; aten's composition needs one dtype.
            params = [torch.rand(p) * 0.1 + (1 if isinstance(p, int) else 0)
                      for p in param_shapes]
            fused_in = [x.clone().requires_grad_()] + [p.clone().requires_grad_() for p in params]
            aten_in = [x.clone().requires_grad_()] + [p.to(dtype).requires_grad_() for p in params]
            with torch.no_grad():
                grad_out = torch.randn_like(fused(*fused_in))
            t_aten, t_fused = best_times(
                [make_step(aten, aten_in, grad_out), make_step(fused, fused_in, grad_out)],
                args.repeat, args.iters)
            ratio = t_aten / t_fused
            speedups.setdefault(name, []).append(ratio)
            print(f"{name:18} {str(tuple(shape)):22} {fmt_name:13} "
                  f"{t_aten * 1e3:9.2f} {t_fused * 1e3:10.2f} {ratio:7.2f}x", flush=True)
    print()
    for name, ratios in speedups.items():
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{name:18} geometric mean speedup {geo:.2f}x "
              f"(min {min(ratios):.2f}x, max {max(ratios):.2f}x)")


if __name__ == "__main__":
    main()
