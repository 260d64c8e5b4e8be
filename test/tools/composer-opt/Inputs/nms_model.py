"""A small scripted detector head that calls torchvision::nms, an operator
that only torchvision's library registers.

Run as: nms_model.py export OUT.pt RSP
          writes OUT.pt, OUT.pt.input.pt and RSP, a response file holding
          --load-library=<torchvision's operator library>
        nms_model.py compare A.pt B.pt INPUT.pt
          prints PASS when both models give the same outputs
        nms_model.py run A.pt INPUT.pt
          prints the kept boxes' count and the features' shape
"""
import glob
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.score = nn.Linear(4, 1)

    def forward(self, images, boxes):
        features = F.max_pool2d(F.relu(self.conv(images)), 2)
        scores = self.score(features.mean(dim=(2, 3))).flatten()
        keep = torchvision.ops.nms(boxes, scores, 0.5)
        return keep, features


def operator_library():
    """Debian's python3-torchvision: torchvision/_C.cpython-*.so."""
    directory = os.path.dirname(torchvision.__file__)
    return glob.glob(os.path.join(directory, "_C*.so"))[0]


def export(out, rsp):
    torch.manual_seed(0)
    torch.jit.script(Detector().eval()).save(out)
    corners = torch.rand(6, 2) * 8
    boxes = torch.cat([corners, corners + torch.rand(6, 2) * 8 + 1], dim=1)
    torch.save((torch.randn(6, 3, 8, 8), boxes), out + ".input.pt")
    with open(rsp, "w") as f:
        f.write(f"--load-library={operator_library()}\n")


def compare(a, b, inputs):
    images, boxes = torch.load(inputs)
    outputs = [torch.jit.load(path).eval()(images, boxes) for path in (a, b)]
    same = all(torch.equal(x, y) for x, y in zip(*outputs))
    print("PASS" if same else f"FAIL: {outputs}")


def run(path, inputs):
    keep, features = torch.jit.load(path).eval()(*torch.load(inputs))
    print(f"kept {keep.numel()} boxes, features {list(features.shape)}")


if __name__ == "__main__":
    {"export": export, "compare": compare, "run": run}[sys.argv[1]](*sys.argv[2:])
