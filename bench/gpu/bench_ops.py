#!/usr/bin/env python3
"""Per-op benchmark on one CUDA GPU: each composer:: fused op against the
aten composition it replaces (docs/runtime-ops.md), forward + backward, on
ResNet-50's shapes at batch 64, fp32 and bf16, NCHW and channels_last.

    bench_ops.py --lib build-gpu/lib/libComposerRuntime.so [--batch 64]

Each case runs `warmup` untimed steps, then `iters` timed ones, each between
two CUDA events; the median is printed, fused and aten on the same tensors,
with their ratio (aten / fused: above 1 is a speedup) and the largest
forward difference between the two as a sanity check.
"""
import argparse
import math

import torch
import torch.nn.functional as F

from bench_common import add_run_options, describe_run, median_ms, start


def binomial(channels, device):
    taps = torch.tensor([1.0, 2.0, 1.0], device=device)
    return (taps[:, None] * taps[None, :] / 16).expand(channels, 1, 3, 3).contiguous()


def blur_case(x, stride):
    c = x.shape[1]
    filt = binomial(c, x.device)
    filt_x = filt.to(x.dtype)  # aten's conv2d takes one dtype
    fused = lambda t: torch.ops.composer.blur_pool2d(t, filt, [stride, stride])
    aten = lambda t: F.conv2d(t, filt_x, None, stride, 1, 1, c)
    return fused, aten, [x]


def blur_max_case(x):
    c = x.shape[1]
    filt = binomial(c, x.device)
    filt_x = filt.to(x.dtype)
    fused = lambda t: torch.ops.composer.blur_max_pool2d(
        t, filt, [3, 3], [1, 1], [1, 1], [2, 2])
    aten = lambda t: F.conv2d(F.max_pool2d(t, 3, 1, 1, 1), filt_x, None, 2, 1,
                              1, c)
    return fused, aten, [x]


def ghost_bn_case(x, ghost=32):
    """Training mode; with bf16 activations, the cast-aware form (BatchNorm
    runs in fp32 under mixed precision) against batch_norm(x.float())."""
    c, n = x.shape[1], x.shape[0]
    k = math.ceil(n / ghost)
    dev = x.device
    weight = torch.ones(c, device=dev, requires_grad=True)
    bias = torch.zeros(c, device=dev, requires_grad=True)
    rm_fused, rv_fused = torch.zeros(c, device=dev), torch.ones(c, device=dev)
    rm_aten, rv_aten = torch.zeros(c, device=dev), torch.ones(c, device=dev)
    dtype = torch.float32 if x.dtype != torch.float32 else None

    def fused(t, w, b):
        return torch.ops.composer.ghost_batch_norm(t, w, b, rm_fused, rv_fused,
                                                   True, 0.1, 1e-5, ghost,
                                                   dtype)

    def aten(t, w, b):
        t = t.float()
        return torch.cat([
            F.batch_norm(chunk, rm_aten, rv_aten, w, b, True, 0.1 / k, 1e-5)
            for chunk in t.chunk(k)  # Composer's ghost batches
        ])

    return fused, aten, [x, weight, bias]


def squeeze_excite_case(x, latent=64):
    c = x.shape[1]
    dev = x.device
    fc1 = (torch.randn(latent, c, device=dev) / c**0.5).to(x.dtype)
    fc2 = (torch.randn(c, latent, device=dev) / latent**0.5).to(x.dtype)
    fc1.requires_grad_()
    fc2.requires_grad_()

    def fused(t, w1, w2):
        return torch.ops.composer.squeeze_excite(t, w1, w2)

    def aten(t, w1, w2):
        gate = torch.sigmoid(F.linear(F.relu(F.linear(t.mean((2, 3)), w1)), w2))
        return t * gate[:, :, None, None]

    return fused, aten, [x, fc1, fc2]


def cases(batch):
    b = batch
    # BlurPool blurs (at stride 1) the inputs of ResNet-50's strided
    # convolutions: layer2-4's conv2 and downsample; and the stem's max pool.
    for shape in [(b, 128, 56, 56), (b, 256, 56, 56), (b, 256, 28, 28),
                  (b, 512, 28, 28), (b, 512, 14, 14), (b, 1024, 14, 14)]:
        yield "blur_pool2d s1", shape, lambda x: blur_case(x, 1)
    yield "blur_pool2d s2", (b, 256, 56, 56), lambda x: blur_case(x, 2)
    yield "blur_max_pool2d", (b, 64, 112, 112), blur_max_case
    for shape in [(b, 64, 112, 112), (b, 256, 56, 56), (b, 512, 28, 28),
                  (b, 1024, 14, 14), (b, 2048, 7, 7)]:
        yield "ghost_batch_norm", shape, ghost_bn_case
    for shape in [(b, 256, 56, 56), (b, 512, 28, 28), (b, 1024, 14, 14),
                  (b, 2048, 7, 7)]:
        yield "squeeze_excite", shape, squeeze_excite_case


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lib", required=True,
                        help="libComposerRuntime.so built with CUDA")
    add_run_options(parser, batch=64, warmup=5)
    args = parser.parse_args()

    dev, name = start(args, "bench_ops.py")
    torch.ops.load_library(args.lib)
    print(f"{describe_run(name, args)} after {args.warmup} warmup, "
          "forward+backward")
    header = (f"{'op':18} {'shape':20} {'dtype':8} {'layout':13} "
              f"{'fused ms':>9} {'aten ms':>9} {'aten/fused':>10} {'max diff':>9}")
    print(header)
    print("-" * len(header))
    ratios = {}
    for name, shape, make in cases(args.batch):
        for dtype in (torch.float32, torch.bfloat16):
            for layout, fmt in (("NCHW", torch.contiguous_format),
                                ("channels_last", torch.channels_last)):
                x = torch.randn(shape, device=dev).to(dtype).contiguous(
                    memory_format=fmt).requires_grad_()
                fused, aten, inputs = make(x)
                try:
                    with torch.no_grad():
                        diff = (fused(*inputs).float() -
                                aten(*inputs).float()).abs().max().item()
                    y = fused(*inputs)
                    grad = torch.randn_like(y)
                    diff_inputs = [t for t in inputs if t.requires_grad]

                    def step(f):
                        return lambda: torch.autograd.grad(
                            f(*inputs), diff_inputs, grad)

                    t_fused = median_ms(step(fused), args.warmup, args.iters,
                                        dev)
                    t_aten = median_ms(step(aten), args.warmup, args.iters,
                                       dev)
                except RuntimeError as e:
                    print(f"{name:18} {str(list(shape)):20} "
                          f"{str(dtype)[6:]:8} {layout:13} failed: "
                          f"{str(e).splitlines()[0]}")
                    continue
                ratio = t_aten / t_fused
                ratios.setdefault(name.split()[0], []).append(ratio)
                print(f"{name:18} {str(list(shape)):20} {str(dtype)[6:]:8} "
                      f"{layout:13} {t_fused:9.3f} {t_aten:9.3f} "
                      f"{ratio:10.2f} {diff:9.2e}")
                del x, inputs
    print()
    for op, rs in ratios.items():
        geo = math.exp(sum(math.log(r) for r in rs) / len(rs))
        print(f"{op}: geometric mean aten/fused {geo:.2f} over {len(rs)} "
              f"cases (min {min(rs):.2f}, max {max(rs):.2f})")


if __name__ == "__main__":
    main()
