"""Compares a model lowered to the composer:: runtime operators
(composer-opt --lower-to=runtime) with the same pipeline lowered to aten ops
(--lower-to=aten), in a fresh process with the runtime library loaded: the
runtime model calls the operators, and its outputs, running statistics and
gradients agree with the aten model's up to the kernels' summation order.

Run as: check_runtime.py LIBRARY ATEN.pt RUNTIME.pt INPUT.pt [--bf16 FP32.pt]
--bf16: the pipeline ran mixed precision; FP32.pt is the same pipeline
without it (lowered to aten), the reference for gradients.
Prints one line per check; exits 1 on the first failure.

Outputs and buffers are compared directly, relative to their magnitude:
fp32 has 24 bits, and a deep network turns per-op rounding differences of
~1e-7 into ~1e-5; bf16 has 8, so one flipped rounding is 4e-3.

Gradients through batch norms of few values (ghost batches of one sample,
2x2 maps deep in the network) are ill-conditioned: aten's own fp32 gradients
are up to ~1e-2 off the float64 ones, bf16 ones ~0.5 off the fp32 ones. So
in float64 the two models must compute the same gradients (to 1e-9: the
same math), and in the model's precision the runtime model's gradients must
be as close to a precise reference (the aten model in float64; for --bf16,
FP32.pt in float64) as aten's are, up to GRADIENT_FACTOR, or within the
precision's floor. The fp32 floor is wide because the kernels accumulate in
fp32 where aten's CPU batch norm accumulates in double, and the
conditioning amplifies either.
"""
import sys

import torch

import runtime_ops

TOLERANCES = {"fp32": 2e-4, "bf16": 5e-2}
GRADIENT_FLOORS = {"fp32": 1e-1, "bf16": 1e-2}
GRADIENT_FACTOR = 3
FLOAT64_TOLERANCE = 1e-9


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def same_layout(what, expected, actual):
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        fail(f"{what}: {expected.dtype}{list(expected.shape)} vs "
             f"{actual.dtype}{list(actual.shape)}")


def close(what, expected, actual, tolerance):
    """Max abs difference relative to the expected magnitude."""
    same_layout(what, expected, actual)
    if not expected.numel():
        return 0.0
    expected, actual = expected.double(), actual.double()
    diff = (expected - actual).abs().max().item()
    scale = max(1e-6, expected.abs().max().item())
    if not diff <= tolerance * scale:
        fail(f"{what}: max abs diff {diff} (scale {scale})")
    return diff / scale


def relative_error(actual, reference):
    """Norm of the difference relative to the reference's norm: robust to
    entries that cancel to nearly zero."""
    actual, reference = actual.double(), reference.double()
    return (actual - reference).norm().item() / max(1e-30, reference.norm().item())


def outputs(model, x, train):
    model.train(train)
    torch.manual_seed(0)
    out = model(x)
    return out if isinstance(out, torch.Tensor) else out["out"]


def gradients(model, x):
    """Train-mode output (detached) and each parameter's gradient."""
    out = outputs(model, x, True)
    out.double().square().mean().backward()
    grads = {}
    for name, param in model.named_parameters():
        if param.grad is None:
            fail(f"no gradient for {name}")
        grads[name] = param.grad
    return out.detach(), grads


def main():
    library, aten_path, runtime_path, input_path = sys.argv[1:5]
    reference_path = None
    if "--bf16" in sys.argv[5:]:
        reference_path = sys.argv[sys.argv.index("--bf16") + 1]
    precision = "bf16" if reference_path else "fp32"
    tolerance = TOLERANCES[precision]
    runtime_ops.load_library(library)
    example = torch.load(input_path)
    aten = torch.jit.load(aten_path)
    runtime = torch.jit.load(runtime_path)

    counts, casts = runtime_ops.graph_counts(runtime)
    if not sum(counts.values()):
        fail("the runtime model calls no composer:: operator")
    aten_counts, _ = runtime_ops.graph_counts(aten)
    if sum(aten_counts.values()):
        fail(f"the aten model calls composer:: operators: {aten_counts}")
    print(f"graph: {runtime_ops.describe(counts)} "
          f"({casts} with dtype float32); the aten model has none")

    state_a, state_r = aten.state_dict(), runtime.state_dict()
    if list(state_a) != list(state_r):
        fail(f"state_dict keys differ: {sorted(set(state_a) ^ set(state_r))[:5]}")
    if any(not torch.equal(state_a[k], state_r[k]) for k in state_a):
        fail("state_dict values differ")
    print(f"state: {len(state_a)} entries identical")

    small = example[..., : example.shape[-2] // 2, : example.shape[-1] // 2]
    with torch.no_grad():
        for label, x in (("eval", example), ("eval small input", small)):
            diff = close(label, outputs(aten, x, False),
                         outputs(runtime, x, False), tolerance)
            print(f"{label}: outputs match (relative diff {diff:.1e})")

    out_a, grads_a = gradients(aten, example)
    out_r, grads_r = gradients(runtime, example)
    diff = close("train", out_a, out_r, tolerance)
    print(f"train: outputs match (relative diff {diff:.1e})")
    buffers_a, buffers_r = dict(aten.named_buffers()), dict(runtime.named_buffers())
    worst = 0.0
    for key in buffers_a:
        worst = max(worst, close(f"buffer {key} after train forward",
                                 buffers_a[key], buffers_r[key], tolerance))
    print(f"train: {len(buffers_a)} buffers match (relative diff {worst:.1e})")

    # The precise reference, from a fresh load (the buffers above moved).
    if reference_path:
        _, grads_ref = gradients(torch.jit.load(reference_path).double(),
                                 example.double())
    else:
        _, grads_ref = gradients(torch.jit.load(aten_path).double(),
                                 example.double())
        _, grads_r64 = gradients(torch.jit.load(runtime_path).double(),
                                 example.double())
        worst = max(relative_error(grads_r64[name], grads_ref[name])
                    for name in grads_ref)
        if not worst <= FLOAT64_TOLERANCE:
            fail(f"float64 gradients differ (relative error {worst})")
        print(f"backward: float64 gradients of all {len(grads_ref)} "
              f"parameters equal (relative error {worst:.1e})")
    if list(grads_a) != list(grads_r) or list(grads_a) != list(grads_ref):
        fail("parameter names differ")
    worst_a = worst_r = 0.0
    for name, reference in grads_ref.items():
        same_layout(f"gradient of {name}", grads_a[name], grads_r[name])
        error_a = relative_error(grads_a[name], reference)
        error_r = relative_error(grads_r[name], reference)
        if not error_r <= max(GRADIENT_FACTOR * error_a,
                              GRADIENT_FLOORS[precision]):
            fail(f"gradient of {name}: relative error {error_r} from the "
                 f"reference, aten's {error_a}")
        worst_a, worst_r = max(worst_a, error_a), max(worst_r, error_r)
    print(f"backward: {precision} gradients of all {len(grads_ref)} "
          f"parameters match the {'fp32' if reference_path else 'float64'} "
          f"reference (relative error at most {worst_r:.1e}, "
          f"aten's {worst_a:.1e})")
    print("PASS")


if __name__ == "__main__":
    main()
