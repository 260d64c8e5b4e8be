"""Records torchvision's RandomResizedCrop.get_params: every random draw it
makes and the box it returns, for images and settings chosen to reach both
the accepted attempts and the central fallback.

Output, one case per block:
  case H W SCALE_LO SCALE_HI RATIO_LO RATIO_HI DRAWS
  u VALUE            (a uniform_ result, exactly as drawn)
  i HIGH VALUE       (a randint(0, HIGH) result)
  box TOP LEFT HEIGHT WIDTH
"""
import math
import sys

import torch
from torchvision import transforms

log = []
uniform = torch.Tensor.uniform_
randint = torch.randint


def recording_uniform(self, a=0.0, b=1.0, **kw):
    out = uniform(self, a, b, **kw)
    log.append("u %r" % float(out.item()))
    return out


def recording_randint(low, high, size, **kw):
    out = randint(low, high, size, **kw)
    log.append("i %d %d" % (int(high), int(out.item())))
    return out


torch.Tensor.uniform_ = recording_uniform
torch.randint = recording_randint

torch.manual_seed(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
settings = [((0.08, 1.0), (3 / 4, 4 / 3)), ((0.35, 1.0), (3 / 4, 4 / 3)),
            ((0.9, 1.0), (1.0, 1.0)), ((0.5, 0.5), (0.5, 2.0))]
sizes = [(375, 500), (500, 375), (64, 64), (28, 28), (20, 500), (500, 20),
         (1, 1), (3, 1000)]
for height, width in sizes:
    for scale, ratio in settings:
        for _ in range(3):
            log.clear()
            image = torch.empty(1, height, width)
            box = transforms.RandomResizedCrop.get_params(image, list(scale),
                                                          list(ratio))
            print("case %d %d %r %r %r %r %d" % (height, width, scale[0],
                                                 scale[1], ratio[0], ratio[1],
                                                 len(log)))
            print("\n".join(log))
            print("box %d %d %d %d" % tuple(box))
