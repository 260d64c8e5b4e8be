"""Small models for the importer's lit tests.

Run as: small_models.py NAME {script,trace} OUT.pt
Also writes OUT.pt.input.pt, an example input for compare.py.
"""
import enum
import sys
from typing import List, NamedTuple, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))
        y = F.max_pool2d(y, 2)
        y = F.adaptive_avg_pool2d(y, 1).flatten(1)
        return self.fc(y)


class ControlFlow(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.scale = nn.Parameter(torch.ones(3))

    def forward(self, x, n: int):
        if self.training:
            self.steps.add_(1)
        for _ in range(n):
            x = x * self.scale
        return x


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return F.relu(self.conv(x)) + x


class TwinBlocks(nn.Module):
    """Two instances of one module class: scripted, they share a type."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())

    def forward(self, x):
        return self.blocks(x)


class Casts(nn.Module):
    """The dtype and memory-format arguments typed ops keep by name."""

    def forward(self, x):
        y = x.to(torch.bfloat16).to(torch.float64,
                                    memory_format=torch.channels_last)
        y = y.contiguous(memory_format=torch.channels_last).contiguous()
        y = torch.softmax(y, 1, torch.float32) + torch.softmax(y.float(), 1)
        # A dtype the dialect has no element type for stays generic.
        return y + x.to(torch.complex64).abs()


class Outputs(NamedTuple):
    logits: torch.Tensor
    features: Optional[torch.Tensor]


class Mode(enum.Enum):
    SCALE = 1
    SHIFT = 2


class NamedTupleOutput(nn.Module):
    """Class-typed values: a NamedTuple built, read by field, kept in a list,
    passed between methods and returned, with an Optional field that is None
    in eval; an enum attribute compared with an enum constant."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.fc = nn.Linear(4, 5)
        self.mode = Mode.SCALE

    def head(self, x) -> Outputs:
        y = F.relu(self.conv(x))
        return Outputs(self.fc(y.mean((2, 3))),
                       y if self.training else None)

    def forward(self, x) -> Outputs:
        outs: List[Outputs] = [self.head(x)]
        logits = outs[0].logits
        if self.mode == Mode.SCALE:
            logits = logits * 2
        return Outputs(logits, outs[0][1])


class NoGrad(nn.Module):
    """`with torch.no_grad():` in forward: prim::Enter and prim::Exit on a
    no_grad object, a buffer updated inside."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.register_buffer("mean", torch.zeros(4))

    def forward(self, x):
        y = self.conv(x)
        with torch.no_grad():
            target = torch.tanh(y) * 2
            self.mean.mul_(0.9).add_(y.mean((0, 2, 3)), alpha=0.1)
        return y - target + self.mean.view(1, 4, 1, 1)


class Fork(nn.Module):
    """torch.jit.fork: prim::fork carries the forked code as a subgraph."""

    def forward(self, x):
        return torch.jit.wait(torch.jit.fork(torch.neg, x)) + 1


class LongChain(nn.Module):
    """1000 adds when traced: a forward of more than 1000 nodes."""

    def forward(self, x):
        for _ in range(1000):
            x = x + 1
        return x


def SequentialRoot():
    """An nn.Sequential as the model itself: its children are named by
    numbers ("0"), which TorchScript reserves as value names."""
    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 4, 3))


MODELS = {"conv_block": ConvBlock, "long_chain": LongChain, "control_flow": ControlFlow,
          "twin_blocks": TwinBlocks, "casts": Casts,
          "named_tuple": NamedTupleOutput, "no_grad": NoGrad, "fork": Fork,
          "sequential_root": SequentialRoot}


def main():
    name, mode, out = sys.argv[1:4]
    torch.manual_seed(0)
    model = MODELS[name]()
    if mode == "script":
        exported = torch.jit.script(model)
    else:
        exported = torch.jit.trace(model.eval(), torch.randn(1, 3, 8, 8))
    exported.save(out)
    torch.save(torch.randn(2, 3, 16, 16), out + ".input.pt")


if __name__ == "__main__":
    main()
