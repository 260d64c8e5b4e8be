#!/usr/bin/env python3
"""ResNet-50 training throughput on one CUDA GPU: the model as it is (fp32,
NCHW) against composer-opt's versions of it (bench/gpu/prepare.sh), whose
method ops are aten compositions or the composer:: runtime ops.

    bench_resnet50.py --lib build-gpu/lib/libComposerRuntime.so \\
        --models bench/gpu/models [--batch 256]

Every variant trains the same random batch (224x224, 1000 classes) with SGD
(momentum 0.9) and cross-entropy: `warmup` untimed steps (TorchScript
profiles and optimizes during the first ones), then `iters` timed steps,
each between two CUDA events; images/s is batch / median step time. Model
FLOP utilization = images/s * 3 * 4.1 GFLOP (ResNet-50's forward and
backward per 224^2 image, BlurPool's and Squeeze-Excite's extra work not
counted) / the GPU's dense bf16 peak, from a table by device name or
COMPOSER_PEAK_TFLOPS. With torchvision installed, eager torchvision
references (fp32, and channels_last + bf16 autocast) are timed too.
"""
import argparse
import contextlib
import gzip
import io
import os

import torch
import torch.nn.functional as F

from bench_common import add_run_options, describe_run, median_ms, start

FLOPS_PER_IMAGE = 3 * 4.1e9

# Dense (no sparsity) bf16 tensor-core peaks, TFLOP/s; first match wins.
PEAK_TFLOPS = [
    ("GB200", 2500), ("B200", 2250), ("H200", 989), ("H100 PCIe", 756),
    ("H100 NVL", 835), ("H100", 989), ("H800", 989), ("A100", 312),
    ("A800", 312), ("L40S", 362), ("L40", 181), ("L4", 121), ("A10", 125),
    ("V100", 125), ("T4", 65),
]


def peak_tflops(name):
    env = os.environ.get("COMPOSER_PEAK_TFLOPS")
    if env:
        return float(env), "COMPOSER_PEAK_TFLOPS"
    for key, value in PEAK_TFLOPS:
        if key in name:
            return float(value), f"table entry '{key}'"
    return None, "unknown device: set COMPOSER_PEAK_TFLOPS"


def load_gz(path, device):
    with gzip.open(path, "rb") as f:
        data = io.BytesIO(f.read())
    return torch.jit.load(data, map_location=device)


def reinitialize(model):
    """Standard initialization for the zeroed weights prepare.sh stored:
    throughput does not depend on the values, but zeros could hit special
    cases (and dead ReLUs)."""
    binomial = torch.tensor([1.0, 2.0, 1.0])
    binomial = binomial[:, None] * binomial[None, :] / 16
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                torch.nn.init.kaiming_normal_(p, mode="fan_out",
                                              nonlinearity="relu")
            elif name.endswith("weight"):
                p.fill_(1)
            else:
                p.zero_()
        for name, b in model.named_buffers():
            if name.endswith("running_var"):
                b.fill_(1)
            elif name.endswith("filter") and b.dim() == 4 and b.shape[1:] == (
                    1, 3, 3) and not b.any():
                b.copy_(binomial.expand_as(b))
            elif b.is_floating_point():
                b.zero_()


def median_step_ms(model, x, y, warmup, iters, autocast):
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9,
                          weight_decay=5e-5)

    def step():
        with (torch.autocast(x.device.type, dtype=torch.bfloat16)
              if autocast else contextlib.nullcontext()):
            out = model(x)
        loss = F.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    # One timed step on the CPU: a smoke test of the script.
    return median_ms(step, warmup, iters, x.device, cpu_iters=1)


def variants(models, device, have_lib):
    """(label, loader, input memory format, autocast); loaders return None
    when their model is missing."""
    def from_file(name, needs_lib=False):
        path = os.path.join(models, name)

        def load():
            if not os.path.exists(path):
                return None, f"{path} missing (run bench/gpu/prepare.sh)"
            if needs_lib and not have_lib:
                return None, "needs the runtime library (--lib)"
            m = load_gz(path, device)
            reinitialize(m)
            return m, None
        return load

    def eager():
        try:
            import torchvision
        except ImportError:
            return None, "torchvision not installed"
        return torchvision.models.resnet50(weights=None).to(device), None

    def eager_channels_last():
        m, why = eager()
        return (m.to(memory_format=torch.channels_last) if m else None), why

    nchw, cl = torch.contiguous_format, torch.channels_last
    return [
        ("scripted fp32 NCHW (baseline)", from_file("resnet50.pt.gz"), nchw,
         False),
        ("eager torchvision fp32 NCHW", eager, nchw, False),
        ("eager torchvision channels_last + bf16 autocast",
         eager_channels_last, cl, True),
        ("composer medium, aten ops", from_file("resnet50.medium.aten.pt.gz"),
         nchw, False),
        ("composer medium, runtime ops",
         from_file("resnet50.medium.runtime.pt.gz", True), nchw, False),
        ("composer medium+SE+GBN, aten ops",
         from_file("resnet50.all.aten.pt.gz"), nchw, False),
        ("composer medium+SE+GBN, runtime ops",
         from_file("resnet50.all.runtime.pt.gz", True), nchw, False),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lib", help="libComposerRuntime.so built with CUDA")
    parser.add_argument("--models", required=True,
                        help="directory of prepare.sh's *.pt.gz")
    add_run_options(parser, batch=256, warmup=10)
    parser.add_argument("--only", action="append",
                        help="run variants whose label holds this text")
    args = parser.parse_args()

    device, name = start(args, "bench_resnet50.py")
    have_lib = False
    if args.lib:
        torch.ops.load_library(args.lib)
        have_lib = True
    peak, source = peak_tflops(name)
    print(f"{describe_run(name, args)} steps after {args.warmup} warmup")
    print(f"peak: {f'{peak:g} TFLOP/s bf16 dense' if peak else 'n/a'} "
          f"({source}); model FLOPs {FLOPS_PER_IMAGE / 1e9:.1f} GFLOP/image")
    # One batch for every variant.
    x = torch.randn(args.batch, 3, 224, 224, device=device)
    y = torch.randint(0, 1000, (args.batch,), device=device)

    header = (f"{'variant':48} {'ms/step':>8} {'images/s':>9} "
              f"{'vs baseline':>11} {'MFU':>6}")
    print(header)
    print("-" * len(header))
    baseline = None
    for label, load, fmt, autocast in variants(args.models, device, have_lib):
        if args.only and not any(o in label for o in args.only):
            continue
        try:
            model, why = load()
            if model is None:
                print(f"{label:48} skipped: {why}")
                continue
            ms = median_step_ms(model, x.contiguous(memory_format=fmt), y,
                                args.warmup, args.iters, autocast)
        except RuntimeError as e:
            print(f"{label:48} failed: {str(e).splitlines()[0]}")
            continue
        finally:
            model = None
            if device.type == "cuda":
                torch.cuda.empty_cache()
        rate = args.batch / (ms / 1e3)
        if baseline is None and "baseline" in label:
            baseline = rate
        speedup = f"{rate / baseline:.2f}x" if baseline else "-"
        mfu = f"{rate * FLOPS_PER_IMAGE / (peak * 1e12):.1%}" if peak else "-"
        print(f"{label:48} {ms:8.1f} {rate:9.0f} {speedup:>11} {mfu:>6}")


if __name__ == "__main__":
    main()
