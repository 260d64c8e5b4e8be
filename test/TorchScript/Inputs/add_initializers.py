"""Declares new state of every registered initializer kind in the .mlir of
conv_block (conv.weight 4x3x3x3, fc.weight 5x4), under the submodule
`init`, as passes would.

Run as: add_initializers.py IN.mlir OUT.mlir [KEY=INITIALIZER ...]
where KEY=INITIALIZER replaces the initializer of `init.KEY`.
"""
import sys

DECLARATIONS = [
    ("buffer", "tril", "tril_ones", "2x3x3xf32"),
    ("buffer", "zeros", "zeros", "2x3xi64"),
    ("buffer", "mask", "dropout_mask:0.25", "64x32xf32"),
    ("parameter", "first", "svd_first:conv.weight", "4x3x3x3xf32"),
    ("parameter", "second", "svd_second:conv.weight", "4x4x1x1xf32"),
    ("parameter", "first_t", "svd_first_t:fc.weight", "4x5xf32"),
    ("parameter", "second_t", "svd_second_t:fc.weight", "4x4xf32"),
    ("parameter", "weight", "linear_default", "6x9xf32"),
    ("parameter", "bias", "linear_default:9", "6xf32"),
]

text = open(sys.argv[1]).read()
overrides = dict(arg.split("=", 1) for arg in sys.argv[3:])
declarations = "".join(
    f'  composer.{kind} @init.{name} init("{overrides.get(name, init)}") '
    f": !composer.tensor<{shape}>\n"
    for kind, name, init, shape in DECLARATIONS)
text = text.replace("  func.func @forward", declarations + "  func.func @forward", 1)
open(sys.argv[2], "w").write(text)
