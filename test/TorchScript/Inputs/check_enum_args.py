"""Checks that export gives back the dtype and memory-format ints import read.

Run as: check_enum_args.py ORIGINAL.pt EXPORTED.pt INPUT.pt
Prints each aten::to, aten::contiguous and aten::softmax node of the exported
forward with its constant arguments, whether they equal the original's, and
whether the outputs do.
"""
import sys

import torch

KINDS = ("aten::to", "aten::contiguous", "aten::softmax")


def enum_args(model):
    """(kind, constant arguments) of the cast nodes, in graph order."""
    nodes = []
    for node in model.forward.graph.nodes():
        if node.kind() not in KINDS:
            continue
        args = [arg.toIValue() for arg in node.inputs()
                if arg.node().kind() == "prim::Constant"]
        nodes.append((node.kind(), args))
    return nodes


def main():
    original, exported = (torch.jit.load(path) for path in sys.argv[1:3])
    x = torch.load(sys.argv[3])
    actual = enum_args(exported)
    for kind, args in actual:
        print(kind, args)
    print("arguments equal:", actual == enum_args(original))
    print("outputs equal:", torch.equal(original(x), exported(x)))


if __name__ == "__main__":
    main()
