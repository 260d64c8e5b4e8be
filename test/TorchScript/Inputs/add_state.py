"""Edits the .mlir of twin_blocks as a pass adding state would: a new
parameter and a new buffer under a new submodule of blocks.0, the output
scaled by the parameter, and blocks.1.conv.weight frozen.

Run as: add_state.py IN.mlir OUT.mlir
"""
import re
import sys

text = open(sys.argv[1]).read()
declarations = (
    "  composer.parameter @blocks.0.gate.scale "
    "init(dense<2.0> : tensor<3x1x1xf32>) : !composer.tensor<3x1x1xf32>\n"
    "  composer.buffer @blocks.0.gate.count "
    "init(dense<5> : tensor<i64>) : !composer.tensor<i64>\n")
text = text.replace("  func.func @forward", declarations + "  func.func @forward", 1)
text = re.sub(r"composer.parameter @blocks.1.conv.weight :",
              "composer.parameter @blocks.1.conv.weight frozen :", text)
result = re.search(r"return (%\d+) : !composer.tensor", text)
text = text.replace(result.group(0), f"""%gate = composer.get_param @blocks.0.gate.scale : !composer.tensor
    %gated = composer.mul {result.group(1)}, %gate : (!composer.tensor, !composer.tensor) -> !composer.tensor
    return %gated : !composer.tensor""")
open(sys.argv[2], "w").write(text)
