"""Checks that a model composer-factorize wrote with `force` at full rank
computes what the original does, in a fresh process: the original state is
kept (the factorized weights frozen), every pair has rank min(out, fan_in),
and eval outputs and train-mode outputs (same seed) match the original's
within 1e-5 relative.

Run as: check_factorize_full_rank.py ORIGINAL.pt CANDIDATE.pt INPUT.pt
Prints one line per check; exits 1 on the first failure.
"""
import sys

import torch

from check_method import close, fail


def main():
    original_path, candidate_path, input_path = sys.argv[1:4]
    example = torch.load(input_path)
    original = torch.jit.load(original_path)
    candidate = torch.jit.load(candidate_path)

    kept = original.state_dict()
    state = candidate.state_dict()
    if any(not torch.equal(kept[k], state[k]) for k in kept):
        fail("original state changed")
    sources = sorted(k[:-len(".factor0.weight")] for k in state
                     if k.endswith(".factor0.weight"))
    params = dict(candidate.named_parameters())
    for site in sources:
        weight = kept[site + ".weight"]
        first, second = state[site + ".factor0.weight"], state[site + ".factor1.weight"]
        rank = min(weight.shape[0], weight[0].numel())
        if first.shape[0] != rank or second.shape[1] != rank:
            fail(f"{site}: rank {first.shape[0]}, not min(out, fan_in) = {rank}")
        if params[site + ".weight"].requires_grad:
            fail(f"{site}.weight is not frozen")
    added = len(state) - len(kept)
    print(f"state: {len(kept)} original entries kept, {added} added, "
          f"{len(sources)} pairs at full rank, originals frozen")

    def outputs(model, train):
        model.train(train)
        torch.manual_seed(0)
        return model(example)

    with torch.no_grad():
        diff = close("eval", outputs(original, False), outputs(candidate, False))
        print(f"eval: matches the original (max abs diff {diff:.2e})")
        diff = close("train", outputs(original, True), outputs(candidate, True))
        print(f"train: matches the original (max abs diff {diff:.2e})")
    print("PASS")


if __name__ == "__main__":
    main()
