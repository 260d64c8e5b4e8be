"""Checks a model written by composer-opt with composer-mixed-precision
(bf16) against the original run under torch.autocast, in a fresh process.

Run as: check_mixed_precision.py ORIGINAL.pt CANDIDATE.pt INPUT.pt
Prints one line per check; exits 1 on the first failure.
"""
import sys

import torch

MATMUL_LIKE = {"aten::conv2d", "aten::_convolution", "aten::linear",
               "aten::matmul"}
BF16 = 15  # c10::ScalarType::BFloat16
TOLERANCE = 0.03  # of the output's largest magnitude: bf16 has 8 bits


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def casts_to_bf16(value):
    node = value.node()
    return (node.kind() == "aten::to"
            and node.inputsAt(1).toIValue() == BF16)


def main():
    original_path, candidate_path, input_path = sys.argv[1:4]
    example = torch.load(input_path)
    original = torch.jit.load(original_path).eval()
    candidate = torch.jit.load(candidate_path).eval()

    state_o, state_c = original.state_dict(), candidate.state_dict()
    if list(state_o) != list(state_c) or any(
            not torch.equal(state_o[k], state_c[k]) for k in state_o):
        fail("parameters or buffers changed")
    if any(p.dtype != torch.float32 for p in candidate.parameters()):
        fail("parameters are no longer fp32 master weights")
    print(f"state: {len(state_c)} entries unchanged, parameters fp32")

    graph = candidate.forward.graph.copy()
    torch._C._jit_pass_inline(graph)
    matmul_like = [n for n in graph.findAllNodes("aten::conv2d")
                   + graph.findAllNodes("aten::_convolution")
                   + graph.findAllNodes("aten::linear")
                   + graph.findAllNodes("aten::matmul")]
    # CPU autocast keeps transposed convolutions in fp32: LibTorch 1.13 has
    # no bf16 CPU kernel for them.
    transposed = [n for n in matmul_like if n.kind() == "aten::_convolution"
                  and n.inputsAt(6).toIValue()]
    transposed += graph.findAllNodes("aten::conv_transpose2d")
    sites = [n for n in matmul_like if n not in transposed]
    low = [n for n in sites
           if all(casts_to_bf16(v) for v in list(n.inputs())[:2])]
    if not sites or len(low) != len(sites):
        fail(f"{len(sites) - len(low)} of {len(sites)} matmul-like ops do "
             f"not take bf16 inputs")
    if any(casts_to_bf16(v) for n in transposed for v in n.inputs()):
        fail("a transposed convolution takes a bf16 input")
    print(f"graph: all {len(sites)} matmul-like ops take bf16 input and weight"
          + (f", {len(transposed)} transposed convolutions fp32"
             if transposed else ""))

    with torch.no_grad():
        out = candidate(example)
        full = original(example)
        references = [("fp32", full)]
        try:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                references.insert(0, ("autocast", original(example)))
        except RuntimeError as error:
            # A traced transposed convolution is aten::_convolution, which
            # CPU autocast runs in bf16, where LibTorch 1.13 has no kernel.
            print(f"autocast: fails on the original "
                  f"({str(error).strip().splitlines()[-1][:60]}...)")
    # The casts are inside the model: its output keeps its dtype, so that a
    # loss outside it runs in fp32 as under autocast.
    if out.dtype != full.dtype:
        fail(f"output dtype {out.dtype}, expected the model's own {full.dtype}")
    scale = full.abs().max().item()
    for name, ref in references:
        diff = (out.float() - ref.float()).abs().max().item()
        if not diff <= TOLERANCE * scale:
            fail(f"eval differs from {name} by {diff} (scale {scale})")
    print(f"eval: {str(out.dtype)[6:]} output within bf16 tolerance of "
          f"{' and '.join(name for name, _ in references)}")

    candidate.train()
    torch.manual_seed(0)
    params = list(candidate.parameters())
    # Three steps: from the second, TorchScript differentiates the graph
    # itself (autodiff), which does not cast gradients as eager autograd does.
    # The target is in the model's dtype, as a user's would be (mse_loss's
    # backward fails where output and target dtypes differ).
    target = torch.zeros_like(full)
    for _ in range(3):
        for p in params:
            p.grad = None
        torch.nn.functional.mse_loss(candidate(example), target).backward()
    if any(p.grad is None or p.grad.dtype != torch.float32 for p in params):
        fail("a parameter has no fp32 gradient")
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    torch.optim.SGD(params, lr=0.01).step()
    with torch.no_grad():
        if not torch.isfinite(candidate.eval()(example).float()).all():
            fail("non-finite output after an SGD step")
    print(f"train: fp32 gradients for all {len(params)} parameters, one SGD step")
    print("PASS")


if __name__ == "__main__":
    main()
