"""Checks that a model written by composer-opt behaves exactly like the
original, in a fresh process: state_dict, eval outputs, train-mode outputs
with the same seed, gradients after one backward, and one SGD step.

Run as: compare.py ORIGINAL.pt CANDIDATE.pt INPUT.pt [--eval-only]
Prints one line per check; exits 1 on the first difference. --eval-only
stops after the state_dict and eval checks.
"""
import sys

import torch


def flatten(output):
    if output is None:  # an absent Optional output (GoogLeNet's aux logits)
        return []
    if isinstance(output, torch.Tensor):
        return [output]
    if isinstance(output, dict):
        return [t for key in sorted(output) for t in flatten(output[key])]
    if isinstance(output, (list, tuple)):
        return [t for item in output for t in flatten(item)]
    raise TypeError(f"unexpected output type {type(output)}")


def layout(output):
    """The output's structure as text: containers (a NamedTuple by its name
    and fields), None and tensors."""
    if not isinstance(output, (dict, list, tuple)):
        return type(output).__name__
    if isinstance(output, dict):
        return "{" + ", ".join(f"{k!r}: {layout(output[k])}"
                               for k in sorted(output)) + "}"
    items = ", ".join(layout(item) for item in output)
    fields = getattr(output, "_fields", None)
    if fields:
        return f"{type(output).__name__}{fields}({items})"
    return f"{type(output).__name__}({items})"


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def bitwise_equal(e, a):
    """Equal values, NaN matching NaN (a diverged step must diverge alike)."""
    if e.is_floating_point():
        return bool(((e == a) | (e.isnan() & a.isnan())).all())
    return torch.equal(e, a)


def same_tensors(what, expected, actual):
    if len(expected) != len(actual):
        fail(f"{what}: {len(expected)} vs {len(actual)} tensors")
    for i, (e, a) in enumerate(zip(expected, actual)):
        if e.shape != a.shape or e.dtype != a.dtype:
            fail(f"{what}[{i}]: {e.dtype}{list(e.shape)} vs {a.dtype}{list(a.shape)}")
        if not bitwise_equal(e, a):
            diff = (e.double() - a.double()).abs().max().item()
            fail(f"{what}[{i}]: values differ (max abs diff {diff})")


def run(model, example, train, seed=0):
    """The output's layout and its tensors in order."""
    model.train(train)
    torch.manual_seed(seed)
    output = model(example)
    return layout(output), flatten(output)


def same_outputs(what, expected, actual):
    if expected[0] != actual[0]:
        fail(f"{what}: {expected[0]} vs {actual[0]}")
    same_tensors(what, expected[1], actual[1])


def main():
    original_path, candidate_path, input_path = sys.argv[1:4]
    eval_only = "--eval-only" in sys.argv[4:]
    example = torch.load(input_path)
    original = torch.jit.load(original_path)
    candidate = torch.jit.load(candidate_path)

    sd_o, sd_c = original.state_dict(), candidate.state_dict()
    if list(sd_o) != list(sd_c):
        fail(f"state_dict keys differ: {sorted(set(sd_o) ^ set(sd_c))[:5]}")
    same_tensors("state_dict", list(sd_o.values()), list(sd_c.values()))
    print(f"state_dict: {len(sd_o)} entries identical")

    with torch.no_grad():
        same_outputs("eval output", run(original, example, False),
                     run(candidate, example, False))
    print("eval: outputs bitwise identical")
    if eval_only:
        print("PASS")
        return

    # Train mode: dropout draws and batch statistics; also updates buffers.
    layout_o, out_o = run(original, example, True, seed=1)
    layout_c, out_c = run(candidate, example, True, seed=1)
    same_outputs("train output", (layout_o, [t.detach() for t in out_o]),
                 (layout_c, [t.detach() for t in out_c]))
    print("train: outputs bitwise identical with the same seed")
    same_tensors("buffers after train forward",
                 [b for b in original.buffers()], [b for b in candidate.buffers()])

    loss_o = sum(t.float().square().mean() for t in out_o)
    loss_c = sum(t.float().square().mean() for t in out_c)
    loss_o.backward()
    loss_c.backward()
    params_o = dict(original.named_parameters())
    params_c = dict(candidate.named_parameters())
    if list(params_o) != list(params_c):
        fail("parameter names differ")
    grads_o = [p.grad if p.grad is not None else torch.zeros(0) for p in params_o.values()]
    grads_c = [p.grad if p.grad is not None else torch.zeros(0) for p in params_c.values()]
    same_tensors("gradients", grads_o, grads_c)
    print(f"backward: {sum(g.numel() > 0 for g in grads_o)} gradients identical")

    for params in (params_o, params_c):
        torch.optim.SGD(params.values(), lr=0.1, momentum=0.9).step()
    same_tensors("parameters after SGD step", list(params_o.values()),
                 list(params_c.values()))
    with torch.no_grad():
        same_outputs("eval output after SGD step", run(original, example, False),
                     run(candidate, example, False))
    print("sgd: parameters and outputs identical after one step")
    print("PASS")


if __name__ == "__main__":
    main()
