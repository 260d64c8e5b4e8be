"""Writes small scripted CNNs whose parameters sit in no unit that
composer-shard-params can shard alone, for train-shard-any-model.test:

    unitless_models.py OUT_DIR

  flat.pt     three convolutions (biases: Optional[Tensor] attributes), a
              residual add and a linear head, all read by the root module;
  shared.pt   the same with its second convolution applied twice and the
              head's weight tied to a second head (one tensor, two names);
  frozen.pt   the same as flat.pt with the first convolution frozen
              (requires_grad False).
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class Flat(nn.Module):
    def __init__(self, twice=False):
        super().__init__()
        self.twice = twice
        self.c1 = nn.Conv2d(1, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.c3 = nn.Conv2d(8, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)
        self.fc2 = nn.Linear(8, 10)
        if twice:
            self.fc2.weight = self.fc.weight

    def forward(self, x):
        x = F.relu(self.c1(x))
        y = F.relu(self.c2(x))
        if self.twice:
            y = F.relu(self.c2(y))
        y = self.c3(y)
        x = F.relu(x + y).mean((2, 3))
        return self.fc(x) + self.fc2(x)


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
torch.jit.script(Flat()).save(os.path.join(out, "flat.pt"))
torch.manual_seed(0)
torch.jit.script(Flat(twice=True)).save(os.path.join(out, "shared.pt"))
torch.manual_seed(0)
frozen = Flat()
frozen.c1.weight.requires_grad_(False)
frozen.c1.bias.requires_grad_(False)
torch.jit.script(frozen).save(os.path.join(out, "frozen.pt"))
