"""Checks a model written by composer-stochastic-depth against stochastic
depth written by module surgery (reference.py) on the same weights, in a
fresh process, beyond what check_method.py can check of a random method.

Run as: check_stochastic_depth.py METHOD[:OPTION=NUMBER,...] MODEL_NAME MODE ORIGINAL.pt CANDIDATE.pt INPUT.pt
METHOD is stochastic_depth (block mode) or stochastic_depth_sample. MODE is
how ORIGINAL.pt was exported; a traced model's batch norms are fixed in eval
mode, so the reference's are put in eval mode too. Checks:
- eval outputs equal the reference's (the expectation);
- train outputs with the same seed equal the reference's (same draws in
  the same order), over 200 steps, and each block's observed drop
  frequency is within 4 sigma of its rate;
- block mode: each branch's convolutions are inside a prim::If of the
  exported graph, and (scripted models, whose batch norms count their
  batches) a dropped block's batch norms did not run.
Prints one line per check; exits 1 on the first failure.
"""
import math
import sys

import torch
import torch.nn as nn

import models
import reference
from check_method import parse_method

TOLERANCE = 1e-5
STEPS = 200


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def close(what, expected, actual):
    diff = (expected - actual).abs().max().item()
    if not diff <= TOLERANCE * max(1.0, expected.abs().max().item()):
        fail(f"{what}: max abs diff {diff}")


def convolutions_in_if(graph):
    """(convolutions nested in a prim::If, all convolutions) of `graph`."""
    kinds = ("aten::conv2d", "aten::_convolution")

    def count(block, nested):
        inside = total = 0
        for node in block.nodes():
            if node.kind() in kinds:
                total += 1
                inside += nested
            for sub in node.blocks():
                a, b = count(sub, nested or node.kind() == "prim::If")
                inside += a
                total += b
        return inside, total

    return count(graph, False)


def main():
    method, name, mode, original_path, candidate_path, input_path = sys.argv[1:7]
    original = torch.jit.load(original_path)
    candidate = torch.jit.load(candidate_path)
    ref, _ = models.build(name)
    ref.load_state_dict(original.state_dict())
    method, options = parse_method(method)
    sites = reference.METHODS[method](ref, **options)
    block_mode = method == "stochastic_depth"
    print(f"reference: {sites} blocks")
    blocks = [(n, m) for n, m in ref.named_modules() if hasattr(m, "sd_rate")]

    example = torch.load(input_path)
    with torch.no_grad():
        ref.eval()
        candidate.eval()
        close("eval", ref(example), candidate(example))
        print("eval: matches the reference")

        # Small inputs keep 200 steps of two models short.
        x = torch.randn(2, 3, 32, 32)
        ref.train()
        candidate.train()
        if mode == "trace":
            for module in ref.modules():
                if isinstance(module, nn.modules.batchnorm._BatchNorm):
                    module.eval()
        state = candidate.state_dict()
        counters = {n: state[f"{n}.bn1.num_batches_tracked"].item()
                    for n, _ in blocks}
        for step in range(STEPS):
            torch.manual_seed(step)
            expected = ref(x)
            torch.manual_seed(step)
            close(f"train step {step}", expected, candidate(x))
        print(f"train: matches the reference with the same seed, {STEPS} steps")

    trials = STEPS * (1 if block_mode else x.shape[0])
    for block_name, block in blocks:
        mean = trials * block.sd_rate
        sigma = math.sqrt(mean * (1 - block.sd_rate))
        if abs(block.sd_drops - mean) > 4 * sigma + 1:
            fail(f"{block_name}: {block.sd_drops} drops in {trials}, "
                 f"rate {block.sd_rate}")
    total = sum(block.sd_drops for _, block in blocks)
    if options.get("drop_rate", 0.2) > 0 and total == 0:
        fail("nothing dropped")
    print(f"statistics: drop frequency of the {len(blocks)} blocks within "
          "4 sigma of their rates")

    if block_mode:
        inside, total_convs = convolutions_in_if(candidate.graph)
        expected = sum(isinstance(m, nn.Conv2d) for _, b in blocks
                       for n, m in b.named_modules()
                       if not n.startswith("downsample"))
        if inside != expected:
            fail(f"{inside} convolutions inside prim::If, expected {expected}")
        print(f"graph: the {inside} branch convolutions of {total_convs} run "
              "only when their block is kept")
        if mode == "script":
            state = candidate.state_dict()
            for block_name, block in blocks:
                ran = state[f"{block_name}.bn1.num_batches_tracked"].item() - \
                    counters[block_name]
                if ran != STEPS - block.sd_drops:
                    fail(f"{block_name}: batch norm ran {ran} times, "
                         f"{block.sd_drops} of {STEPS} steps dropped")
            print("not executed: dropped blocks' batch norms did not run")
        else:
            print("not executed: not counted (traced batch norms)")
    print("PASS")


if __name__ == "__main__":
    main()
