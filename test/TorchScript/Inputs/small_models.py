"""Small models for the importer's lit tests.

Run as: small_models.py NAME {script,trace} OUT.pt
Also writes OUT.pt.input.pt, an example input for compare.py.
"""
import sys

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


MODELS = {"conv_block": ConvBlock, "control_flow": ControlFlow,
          "twin_blocks": TwinBlocks}


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
