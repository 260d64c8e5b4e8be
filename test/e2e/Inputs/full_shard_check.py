"""What a full_shard run holds and sends per step (train-full-shard.test).

  full_shard_check.py LIBRARY SHARDED.pt ONE.jsonl RANKS.jsonl RANKS INTERVAL

SHARDED.pt is the model through composer-shard-params; ONE.jsonl the
metrics of one process training it unsharded, RANKS.jsonl those of rank 0
of RANKS processes under full_shard, which wrote full checkpoints every
INTERVAL batches (0: sharded ones, which gather nothing). By the runtime's
own accounting, a rank holds at most 1/RANKS of the parameters, gradients
and optimizer state, plus what is gathered: the root unit's parameters,
which stay gathered for the step (the root is not checkpointed), and two
units': the one that runs and the one whose all-gather is under way. Shards
are padded to RANKS elements per buffer. With three layers, a runtime that
kept every unit gathered would exceed it. Each unit's gradients are
reduce-scattered once per step, and its parameters all-gathered once in
forward and, checkpointed, once more in backward; no gradient is
all-reduced. Every gather but the first of forward (the root's) and of
backward (the last layer's) finds its all-gather started by the one before:
in forward from the model's order, in backward from the previous step's, so
the first step's backward prefetches nothing.
"""
import json
import sys

import torch

MEMORY = ("memory/parameters_bytes", "memory/gradients_bytes",
          "memory/optimizer_state_bytes")


def attribute_path(value):
    """The dotted module attribute a chain of prim::GetAttr reads."""
    fields = []
    while value.node().kind() == "prim::GetAttr":
        fields.append(value.node().s("name"))
        value = value.node().input()
    return ".".join(reversed(fields))


def unit_bytes(library, model_path):
    """The parameter bytes of each unit the model's gathers name."""
    torch.ops.load_library(library)
    model = torch.jit.load(model_path)
    tensors = dict(model.named_parameters())
    units = {}
    for name in model._c._method_names():
        graph = model._c._get_method(name).graph
        for node in graph.findAllNodes("composer::gather_unit"):
            unit = node.inputsAt(0).toIValue()
            params = node.inputsAt(2).node().inputs()
            units[unit] = sum(tensors[attribute_path(p)].numel() *
                              tensors[attribute_path(p)].element_size()
                              for p in params)
    assert units, "the model gathers nothing"
    return units


def rows(path):
    result = [json.loads(line) for line in open(path) if line.strip()]
    result = [r for r in result if MEMORY[0] in r]
    assert result, f"{path}: no memory logged"
    return result


def main(library, model_path, one_path, ranks_path, ranks, interval):
    units = unit_bytes(library, model_path)
    assert len(units) >= 4, "the check needs at least three units and the root"
    root = units.pop("")
    two_units = sum(sorted(units.values())[-2:])
    total = sum(rows(one_path)[-1][key] for key in MEMORY)
    # Each flat buffer (a unit's decayed and undecayed parameters) is padded
    # by fewer than RANKS fp32 elements, counted in the shards of each of the
    # three and in the gathered buffers.
    padding = 4 * 2 * (len(units) + 1) * ranks * 4
    bound = total / ranks + root + two_units + padding
    for row in rows(ranks_path):
        held = sum(row[key] for key in MEMORY)
        assert held <= bound, (row, bound)
        scattered = row["communication/bytes/reduce_scatter"]
        gathered = row["communication/bytes/all_gather"]
        assert scattered > 0, row
        # A full checkpoint (INTERVAL batches apart; 0: sharded ones, which
        # gather nothing) gathers the weights and the optimizer state too;
        # its bytes count in the next step's.
        if interval and row["step"] > 1 and (row["step"] - 1) % interval == 0:
            assert gathered > 2 * scattered, row
        else:
            assert scattered < gathered <= 2 * scattered, row
        # The loss and stop flags ride on one all-reduce, the clipping norm
        # on another; no gradient does.
        assert row["communication/bytes/all_reduce"] <= 64, row
        layers = len(units)
        assert row["communication/unit_gathers"] == 1 + 2 * layers, row
        prefetched = layers if row["step"] == 1 else 2 * layers - 1
        assert row["communication/unit_gathers_prefetched"] == prefetched, row
    print(f"root and {len(units)} units; held at most 1/{ranks} of the state "
          f"plus the root and two units; each step reduce-scatters once and "
          f"gathers at most twice; all but the first gather of forward and "
          f"of backward prefetched")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]),
         int(sys.argv[6]))
