"""Writes a ResNet-like .mlir model of at least N operations to stdout.

Run as: large_graph.py N
Blocks of conv -> batch norm -> relu -> residual add, every 16th block a
strided conv without the add; every block shares one weight, so that the
size is in the graph, not in the declarations.
"""
import sys

TENSOR = "!composer.tensor"
CONV = ("composer.conv2d {x}, %w, %none {{dilation = array<i64: 1, 1>, "
        "groups = 1 : i64, padding = array<i64: 1, 1>, "
        "stride = array<i64: {s}, {s}>}} : ({T}, {T}, !composer.none) -> {T}")
NORM = ("composer.batch_norm {x}, %g, %g, %m, %m, %t, %momentum "
        "{{cudnn_enabled = true, eps = 1.000000e-05 : f64}} : ({T}, {T}, {T}, "
        "{T}, {T}, !composer.bool, !composer.float) -> {T}")


def main():
    size = int(sys.argv[1])
    write = sys.stdout.write
    write("module {\n"
          "  composer.parameter @w : !composer.tensor<64x64x3x3xf32>\n"
          "  composer.parameter @g : !composer.tensor<64xf32>\n"
          "  composer.buffer @m : !composer.tensor<64xf32>\n"
          f"  func.func @forward(%x: {TENSOR}, %t: !composer.bool) -> {TENSOR} {{\n"
          "    %none = composer.constant(none) : !composer.none\n"
          "    %momentum = composer.constant(1.000000e-01) : !composer.float\n"
          f"    %w = composer.get_param @w : {TENSOR}\n"
          f"    %g = composer.get_param @g : {TENSOR}\n"
          f"    %m = composer.get_param @m : {TENSOR}\n")
    x, block, ops = "%x", 0, 0
    while ops < size:
        stride = 2 if block % 16 == 15 else 1
        write(f"    %c{block} = " + CONV.format(x=x, s=stride, T=TENSOR) + "\n")
        write(f"    %b{block} = " + NORM.format(x=f"%c{block}", T=TENSOR) + "\n")
        write(f"    %r{block} = composer.relu %b{block} : ({TENSOR}) -> {TENSOR}\n")
        if stride == 1:
            write(f"    %a{block} = composer.add %r{block}, {x} {{alpha = 1 : i64}}"
                  f" : ({TENSOR}, {TENSOR}) -> {TENSOR}\n")
            x, ops = f"%a{block}", ops + 4
        else:
            x, ops = f"%r{block}", ops + 3
        block += 1
    write(f"    return {x} : {TENSOR}\n  }}\n}}\n")


if __name__ == "__main__":
    main()
