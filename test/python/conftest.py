"""Fixtures of the composer_opt package's tests: small real models, the
build's tools."""

import os
import sys

import pytest
import torch
from torch import nn

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SOURCE, "examples"))


class Residual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(x + self.bn2(self.conv2(y)))


class SmallCNN(nn.Module):
    """Every vision method finds sites here: strided convolutions, a max
    pool, batch and group norms, a residual block, a dropout before the
    classifier."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False)
        self.gn = nn.GroupNorm(4, 32)
        self.pool = nn.MaxPool2d(2)
        self.block = Residual(32)
        self.features = nn.Linear(32, 32)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = torch.relu(self.bn(self.stem(x)))
        x = self.pool(torch.relu(self.gn(self.down(x))))
        x = self.block(x)
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(self.dropout(torch.relu(self.features(x))))


def small_gpt():
    from gpt_decoder import GPTDecoder
    return GPTDecoder(vocab=64, dim=32, heads=2, layers=1, context=16)


@pytest.fixture
def cnn():
    torch.manual_seed(0)
    return SmallCNN()


@pytest.fixture
def gpt():
    torch.manual_seed(0)
    return small_gpt()


@pytest.fixture(scope="session")
def tools():
    import composer_opt
    return os.path.join(os.path.dirname(composer_opt.library_directory()),
                        "bin")
