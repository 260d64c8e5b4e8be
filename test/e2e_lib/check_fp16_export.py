"""Checks that composer-mixed-precision with dtype=f16 exports the same
casts as with bf16, in fp16: the two graphs have the same nodes in the same
order, and every cast the bf16 model makes to bf16 the fp16 model makes to
fp16 (the fp32 casts, for batch norm, softmax and losses, are the same).
Parameters stay fp32. Where LibTorch has fp16 CPU kernels (>= 2.1) the fp16
model also runs, within fp16 tolerance of fp32; LibTorch 1.13 has none.

Run as: check_fp16_export.py ORIGINAL.pt BF16.pt F16.pt INPUT.pt
"""
import sys

import torch

BF16, F16 = 15, 5  # c10::ScalarType
TOLERANCE = 0.01  # of the output's largest magnitude: fp16 has 11 bits


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def nodes(model):
    graph = model.forward.graph.copy()
    torch._C._jit_pass_inline(graph)
    return list(graph.nodes())


def cast_dtype(node):
    """The dtype an aten::to(self, dtype, ...) casts to, else None."""
    if node.kind() != "aten::to":
        return None
    value = node.inputsAt(1).toIValue()
    return value if isinstance(value, int) else None


def fp16_kernels():
    try:
        x = torch.ones(1, 1, 3, 3, dtype=torch.half)
        torch.nn.functional.conv2d(x, x)
        torch.mm(x[0, 0], x[0, 0])
        return True
    except RuntimeError:
        return False


def main():
    original_path, bf16_path, f16_path, input_path = sys.argv[1:5]
    original = torch.jit.load(original_path).eval()
    bf16 = torch.jit.load(bf16_path).eval()
    f16 = torch.jit.load(f16_path).eval()

    if any(p.dtype != torch.float32 for p in f16.parameters()):
        fail("parameters are no longer fp32 master weights")
    bf16_nodes = nodes(bf16)
    f16_nodes = nodes(f16)
    kinds = [n.kind() for n in bf16_nodes]
    if kinds != [n.kind() for n in f16_nodes]:
        fail("the fp16 graph is not the bf16 graph")
    low = 0
    for b, h in zip(bf16_nodes, f16_nodes):
        want = F16 if cast_dtype(b) == BF16 else cast_dtype(b)
        if cast_dtype(h) != want:
            fail(f"a cast to {cast_dtype(h)} where bf16 casts to "
                 f"{cast_dtype(b)}: {h}")
        low += want == F16
    if not low:
        fail("no cast to fp16")
    print(f"graph: the bf16 graph with its {low} bf16 casts in fp16")

    if not fp16_kernels():
        print(f"run: skipped, LibTorch {torch.__version__} has no fp16 CPU "
              "kernels (needs >= 2.1)")
        print("PASS")
        return
    example = torch.load(input_path)
    with torch.no_grad():
        out = f16(example)
        full = original(example)
    if out.dtype != torch.half:
        fail(f"output dtype {out.dtype}, expected float16")
    scale = full.abs().max().item()
    diff = (out.float() - full).abs().max().item()
    if not diff <= TOLERANCE * scale:
        fail(f"fp16 output differs from fp32 by {diff} (scale {scale})")
    print("run: fp16 output within fp16 tolerance of fp32")
    print("PASS")


if __name__ == "__main__":
    main()
