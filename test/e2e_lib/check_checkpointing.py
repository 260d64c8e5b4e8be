"""Compares a model whose units composer-activation-checkpointing put in
composer::checkpoint calls (lowered to the runtime) with the model it came
from, in a fresh process with the runtime library loaded.

Run as: check_checkpointing.py LIBRARY ORIGINAL.pt CHECKPOINTED.pt INPUT.pt
Prints one line per check; exits 1 on the first failure.

In training mode, with dropout on, from one seed: the outputs, every
parameter's gradient, the buffers (batch norm's running statistics, updated
once although each unit runs twice) and the random stream after backward
must equal the original's bit for bit, since the rerun computes the same
ops on the same values with the same draws. The checkpointed backward keeps
only the units' inputs, which the graph shows: each call is one node of the
autograd graph, not the unit's ops.
"""
import sys

import torch

import runtime_ops


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def step(model, x):
    """A train-mode forward and backward from seed 0: the output, each
    parameter's gradient, the buffers and a draw after backward."""
    model.train()
    torch.manual_seed(0)
    out = model(x)
    if not isinstance(out, torch.Tensor):
        out = out[0]
    out.double().square().mean().backward()
    grads = {}
    for name, param in model.named_parameters():
        if param.requires_grad:
            if param.grad is None:
                fail(f"no gradient for {name}")
            grads[name] = param.grad.clone()
    buffers = {k: v.clone() for k, v in model.named_buffers()}
    return out.detach(), grads, buffers, torch.rand(4)


def mismatch(expected, actual):
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return "layout"
    if torch.equal(expected, actual):
        return None
    return f"max abs diff {(expected.double() - actual.double()).abs().max():.3e}"


def main():
    library, original_path, checkpointed_path, input_path = sys.argv[1:5]
    runtime_ops.load_library(library)
    x = torch.load(input_path)
    original = torch.jit.load(original_path)
    checkpointed = torch.jit.load(checkpointed_path)

    calls = checkpointed.forward.graph.findAllNodes("composer::checkpoint")
    methods = sorted(name for name in checkpointed._c._method_names()
                     if name.startswith("checkpointed_"))
    if not calls or len(methods) != len(calls):
        fail(f"{len(calls)} composer::checkpoint calls, methods {methods}")
    print(f"graph: {len(calls)} composer::checkpoint calls, "
          f"methods {methods[0]} ...")

    out_o, grads_o, buffers_o, draw_o = step(original, x)
    out_c, grads_c, buffers_c, draw_c = step(checkpointed, x)
    if (diff := mismatch(out_o, out_c)):
        fail(f"train outputs: {diff}")
    print("train: outputs equal")
    if list(grads_o) != list(grads_c):
        fail("parameters differ")
    for name in grads_o:
        if (diff := mismatch(grads_o[name], grads_c[name])):
            fail(f"gradient of {name}: {diff}")
    print(f"backward: gradients of all {len(grads_o)} parameters equal")
    for name in buffers_o:
        if (diff := mismatch(buffers_o[name], buffers_c[name])):
            fail(f"buffer {name}: {diff}")
    print(f"buffers: all {len(buffers_o)} equal after the step")
    if not torch.equal(draw_o, draw_c):
        fail("the random stream after backward differs")
    print("random stream: equal after backward")

    with torch.no_grad():
        original.eval()
        checkpointed.eval()
        a, b = original(x), checkpointed(x)
        a = a if isinstance(a, torch.Tensor) else a[0]
        b = b if isinstance(b, torch.Tensor) else b[0]
        if (diff := mismatch(a, b)):
            fail(f"eval outputs: {diff}")
    print("eval: outputs equal")
    # What backward keeps: the checkpoint calls' nodes stand where the
    # units' ops would.
    checkpointed.train()
    out = checkpointed(x)
    out = out if isinstance(out, torch.Tensor) else out[0]
    seen, stack, nodes = set(), [out.grad_fn], []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        nodes.append(node.name())
        stack.extend(next_fn for next_fn, _ in node.next_functions)
    recorded = sum("CheckpointFunction" in name for name in nodes)
    if recorded != len(calls):
        fail(f"{recorded} checkpoint nodes in the autograd graph")
    print(f"autograd: {recorded} checkpoint nodes, {len(nodes)} nodes in all")
    print("PASS")


if __name__ == "__main__":
    main()
