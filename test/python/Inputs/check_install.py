"""Prints where the package, its libraries and tools were found, relative
to the install prefix argv[1], and optimizes a model with them."""

import os
import sys

import torchvision

import composer_opt
from composer_opt import _runtime

prefix = sys.argv[1]
for path in (composer_opt.__file__, composer_opt.library_directory(),
             _runtime.tool_path("composer-train"),
             composer_opt.load_runtime()):
    print(os.path.relpath(path, prefix))
model = composer_opt.functional.apply_blurpool(torchvision.models.resnet18())
print(model.composer_report)
