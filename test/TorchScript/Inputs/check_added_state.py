"""Checks the model written from add_state.py's edit, in a fresh process.

Run as: check_added_state.py ORIGINAL.pt EDITED.pt
"""
import sys

import torch

original = torch.jit.load(sys.argv[1]).eval()
edited = torch.jit.load(sys.argv[2]).eval()
x = torch.randn(2, 3, 8, 8)

added = sorted(set(edited.state_dict()) - set(original.state_dict()))
print("added:", " ".join(added))
print("removed:", " ".join(sorted(set(original.state_dict()) - set(edited.state_dict()))) or "none")
state = edited.state_dict()
print("scale:", state["blocks.0.gate.scale"].flatten().tolist(),
      "count:", int(state["blocks.0.gate.count"]))
print("parameters:", " ".join(name for name, _ in edited.named_parameters()
                              if name.startswith("blocks.0.gate")))
print("frozen:", " ".join(name for name, p in edited.named_parameters()
                          if not p.requires_grad))
print("output doubled:", torch.equal(edited(x), original(x) * 2))
# The sibling instance of the same original class is untouched and both
# submodules still run on their own.
print("blocks.1 has gate:", getattr(edited.blocks, "1")._c.hasattr("gate"),
      "blocks.0 has gate:", getattr(edited.blocks, "0")._c.hasattr("gate"))
print("submodules run:", torch.equal(getattr(edited.blocks, "0")(x), getattr(original.blocks, "0")(x)),
      torch.equal(getattr(edited.blocks, "1")(x), getattr(original.blocks, "1")(x)))
edited.train()
edited(x).sum().backward()
grads = dict((n, p.grad) for n, p in edited.named_parameters())
print("scale has grad:", grads["blocks.0.gate.scale"] is not None,
      "frozen has grad:", grads["blocks.1.conv.weight"] is not None)
