"""Checks that a model a state-adding pass wrote keeps its new parameters
and buffers where PyTorch would name them, inside containers too.

Run as: check_new_state.py ORIGINAL.pt CANDIDATE.pt INPUT.pt [CANDIDATE.pt...]
Prints, for each candidate, the new keys under the containers (nn.ModuleList
and nn.ModuleDict children, named by index or key) and whether each names a
submodule the model has; then one train step's gradients. Exits 1 on the
first failure.
"""
import sys

import torch


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    original_path, candidate_path, input_path = sys.argv[1:4]
    example = torch.load(input_path)
    original = torch.jit.load(original_path)
    for path in [candidate_path] + sys.argv[4:]:
        check(original, torch.jit.load(path), example)
    print("PASS")


def check(original, candidate, example):
    old, new = original.state_dict(), candidate.state_dict()
    if any(not torch.equal(old[k], new[k]) for k in old):
        fail("original state changed")
    added = sorted(set(new) - set(old))
    modules = dict(candidate.named_modules())
    # Containers: submodules that have no forward of their own.
    containers = {name for name, module in original.named_modules()
                  if name and not hasattr(module, "forward")}
    inside = [k for k in added
              if any(k.startswith(c + ".") for c in containers)]
    for key in added:
        owner = key.rpartition(".")[0]
        if owner not in modules:
            fail(f"{key}: no submodule '{owner}'")
    print(f"state: {len(added)} added, {len(inside)} inside containers, "
          f"each on its own submodule")
    candidate.train()
    torch.manual_seed(0)
    out = candidate(example)
    out.float().square().mean().backward()
    params = [p for p in candidate.parameters() if p.requires_grad]
    if any(p.grad is None or not torch.isfinite(p.grad).all()
           for p in params):
        fail("a trainable parameter has no finite gradient")
    print(f"train: finite gradients for all {len(params)} trainable "
          f"parameters")


if __name__ == "__main__":
    main()
