"""Checks the new state add_initializers.py declared, as exported.

Run as: check_initializers.py OUT.pt [AGAIN.pt]
AGAIN.pt: the same .mlir exported again, which must be bit-identical.
"""
import sys

import torch

model = torch.jit.load(sys.argv[1])
state = model.state_dict()
init = {key[len("init."):]: value for key, value in state.items()
        if key.startswith("init.")}
print("new:", " ".join(sorted(init)))

tril = init["tril"]
print("tril_ones:", tril.dtype, torch.equal(tril, torch.ones(3, 3).tril().expand(2, 3, 3)))
print("zeros:", init["zeros"].dtype, bool((init["zeros"] == 0).all()))
mask = init["mask"]
kept = float(mask.mean())
print("dropout_mask:", mask.dtype, bool(((mask == 0) | (mask == 1)).all()),
      "kept near 0.75:", abs(kept - 0.75) < 0.05)

# At full rank the pairs give back their source.
conv = state["conv.weight"].double()
pair = (init["second"].double().reshape(4, 4) @ init["first"].double().reshape(4, 27))
print("svd conv pair:", torch.allclose(pair.reshape(conv.shape), conv, atol=1e-5))
fc_t = state["fc.weight"].double().t()
pair_t = init["second_t"].double() @ init["first_t"].double()
print("svd transposed pair:", torch.allclose(pair_t, fc_t, atol=1e-5))

bound = 1 / 9 ** 0.5
print("linear_default:", all(bool((init[k].abs() <= bound).all()) and
                             float(init[k].std()) > 0 for k in ("weight", "bias")))

if len(sys.argv) > 2:
    again = torch.jit.load(sys.argv[2]).state_dict()
    print("reproducible:", all(torch.equal(value, again[key])
                               for key, value in state.items()))
