"""A small ResNet for 28x28 grayscale images (Fashion-MNIST), exported as
TorchScript for composer-train.

    /usr/bin/python3 examples/fashion_resnet.py out.pt [--width 16] [--trace]
        [--norm batch|none] [--in-channels 1] [--stem-stride 1]

For the 64x64 RGB JPEGs of examples/make_fashion_jpeg.py, `--in-channels 3
--stem-stride 2` halves the image in the first convolution, so a step costs
about what a 28x28 step costs.

`--norm none` leaves BatchNorm out, so data-parallel training with a global
batch B equals one process with batch B (BatchNorm sees only its rank's
samples).
"""
import argparse

import torch
from torch import nn


def norm_layer(kind, channels):
    return nn.BatchNorm2d(channels) if kind == "batch" else nn.Identity()


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride, norm="batch"):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = norm_layer(norm, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = norm_layer(norm, cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = nn.Sequential()
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False),
                norm_layer(norm, cout))

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + self.downsample(x))


class FashionResNet(nn.Module):
    def __init__(self, width=16, num_classes=10, norm="batch", in_channels=1,
                 stem_stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, width, 3, stem_stride, 1,
                               bias=False)
        self.bn1 = norm_layer(norm, width)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = BasicBlock(width, 2 * width, 2, norm)
        self.layer2 = BasicBlock(2 * width, 4 * width, 2, norm)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4 * width, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer2(self.layer1(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def export(path, width=16, trace=False, seed=0, norm="batch", in_channels=1,
           stem_stride=1):
    torch.manual_seed(seed)
    model = FashionResNet(width, norm=norm, in_channels=in_channels,
                          stem_stride=stem_stride)
    if trace:
        size = 28 * stem_stride
        scripted = torch.jit.trace(model,
                                   torch.randn(2, in_channels, size, size))
    else:
        scripted = torch.jit.script(model)
    scripted.save(path)
    return model


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--norm", choices=["batch", "none"], default="batch")
    parser.add_argument("--in-channels", type=int, default=1)
    parser.add_argument("--stem-stride", type=int, default=1)
    args = parser.parse_args()
    export(args.output, args.width, args.trace, args.seed, args.norm,
           args.in_channels, args.stem_stride)
