#!/usr/bin/env python3
"""CUDA against CPU for every composer:: op, from Python (no GoogleTest
needed on the GPU machine):

    check_ops.py --lib build-gpu/lib/libComposerRuntime.so

For each op, both memory formats and fp32/bf16/fp16: the output and the
gradients of every differentiable input on CUDA agree with the same op on CPU
(the CPU kernels are checked against the aten compositions by the gtest
suite); then torch.autograd.gradcheck in float64 on CUDA, small shapes.
Prints one line per case and exits 1 if any disagrees.
"""
import argparse
import sys

import torch

TOLERANCE = {torch.float32: 1e-4, torch.bfloat16: 3e-2, torch.float16: 4e-3}


def binomial(channels, device):
    row = torch.tensor([1.0, 2.0, 1.0], device=device)
    return (row[:, None] * row[None, :] / 16).expand(channels, 1, 3, 3).contiguous()


def cases():
    ops = torch.ops.composer

    def blur(x, f):
        return ops.blur_pool2d(x, f, [2, 2])

    def max_blur(x, f):
        return ops.blur_max_pool2d(x, f, [3, 3], [1, 1], [1, 1], [2, 2])

    def ghost(x, w, b):
        mean = torch.zeros(x.shape[1], device=x.device)
        var = torch.ones(x.shape[1], device=x.device)
        return ops.ghost_batch_norm(x, w, b, mean, var, True, 0.1, 1e-5, 3)

    def squeeze_excite(x, fc1, fc2):
        return ops.squeeze_excite(x, fc1, fc2)

    c = 16
    yield "blur_pool2d", blur, [(5, c, 13, 12)], lambda d: [binomial(c, d)]
    # Distinct values: one argmax per window whatever the precision.
    yield ("blur_max_pool2d", max_blur, [(5, c, 13, 12)],
           lambda d: [binomial(c, d)])
    yield "ghost_batch_norm", ghost, [(8, c, 7, 6), (c,), (c,)], lambda d: []
    yield "squeeze_excite", squeeze_excite, [(5, c, 9, 8), (4, c), (c, 4)], lambda d: []


def inputs(shapes, dtype, fmt, device, distinct):
    torch.manual_seed(0)
    x = torch.randn(shapes[0])
    if distinct:
        x = torch.randperm(x.numel()).float().view(x.shape) / 64
    tensors = [x.to(dtype).to(device).contiguous(memory_format=fmt)]
    tensors += [torch.rand(s).to(device) * 0.5 + 0.5 for s in shapes[1:]]
    return [t.detach().requires_grad_() for t in tensors]


def run(fn, tensors, fixed, grad_out):
    out = fn(*tensors[:1], *fixed, *tensors[1:]) if fixed else fn(*tensors)
    grads = torch.autograd.grad(out, tensors, grad_out.to(out.dtype))
    return [out] + list(grads)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--device", default="cuda",
                        help="cpu: a smoke test of the script itself")
    args = parser.parse_args()
    torch.ops.load_library(args.lib)
    cuda = torch.device(args.device)
    failures = 0
    for name, fn, shapes, fixed_for in cases():
        distinct = name == "blur_max_pool2d"
        for dtype in TOLERANCE:
            for fmt_name, fmt in [("nchw", torch.contiguous_format),
                                  ("channels_last", torch.channels_last)]:
                cpu_in = inputs(shapes, dtype, fmt, "cpu", distinct)
                gpu_in = inputs(shapes, dtype, fmt, cuda, distinct)
                with torch.no_grad():
                    probe = fn(*cpu_in[:1], *fixed_for("cpu"), *cpu_in[1:])
                grad_out = torch.randn(probe.shape)
                cpu = run(fn, cpu_in, fixed_for("cpu"), grad_out)
                gpu = run(fn, gpu_in, fixed_for(cuda), grad_out.to(cuda))
                worst = 0.0
                for a, b in zip(cpu, gpu):
                    scale = max(1.0, a.float().abs().max().item())
                    worst = max(worst, (a.float() - b.float().cpu()).abs().max().item() / scale)
                ok = worst <= TOLERANCE[dtype] and gpu[0].is_contiguous(memory_format=fmt)
                failures += not ok
                print(f"{name:17} {str(dtype):15} {fmt_name:13} max rel diff {worst:.2e} "
                      f"{'ok' if ok else 'FAILED'}", flush=True)
        double_in = inputs(shapes, torch.float64, torch.contiguous_format, cuda, distinct)
        double_in = [t.detach().double().requires_grad_() for t in double_in]
        fixed = [f.double() for f in fixed_for(cuda)]
        ok = torch.autograd.gradcheck(
            lambda *t: fn(*t[:1], *fixed, *t[1:]) if fixed else fn(*t),
            double_in, eps=1e-6, atol=1e-5, raise_exception=False)
        failures += not ok
        print(f"{name:17} gradcheck float64 on {cuda.type} {'ok' if ok else 'FAILED'}",
              flush=True)
    print("PASS" if failures == 0 else f"{failures} FAILED")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
