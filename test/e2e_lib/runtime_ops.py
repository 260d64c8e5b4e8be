"""The composer:: runtime operators (docs/runtime-ops.md) in a .pt written
with composer-opt --lower-to=runtime.

Run as: runtime_ops.py MODEL.pt [LIBRARY INPUT.pt]
Prints how often the saved code calls each operator, read from the archive
(no library needed). With LIBRARY (libComposerRuntime.so) and an input, also
checks that loading fails without the library and that, with it loaded, the
model loads and runs in eval and train mode.
"""
import re
import sys
import zipfile

import torch

OPS = ("blur_pool2d", "blur_max_pool2d", "ghost_batch_norm", "squeeze_excite")
FLOAT32 = 6  # c10::ScalarType::Float


def code_counts(path):
    """Calls of each operator in the archive's TorchScript code."""
    counts = dict.fromkeys(OPS, 0)
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if "/code/" in name and name.endswith(".py"):
                text = archive.read(name).decode()
                for op in OPS:
                    counts[op] += len(re.findall(rf"\bops\.composer\.{op}\(", text))
    return counts


def graph_counts(module):
    """composer:: nodes of each kind in a loaded model's forward, and how many
    ghost_batch_norm nodes take dtype float32 (an absorbed input cast)."""
    graph = module.forward.graph
    counts = {op: len(graph.findAllNodes(f"composer::{op}")) for op in OPS}
    cast = sum(1 for n in graph.findAllNodes("composer::ghost_batch_norm")
               if n.inputsAt(9).toIValue() == FLOAT32)
    return counts, cast


def describe(counts):
    return " ".join(f"{op}={counts[op]}" for op in OPS)


def load_library(path):
    torch.ops.load_library(path)
    # The operators are there (and not just some library).
    for op in OPS:
        getattr(torch.ops.composer, op)


def main():
    model_path = sys.argv[1]
    print(f"code: {describe(code_counts(model_path))}")
    if len(sys.argv) < 4:
        return
    library, input_path = sys.argv[2:4]
    try:
        torch.jit.load(model_path)
        print("without the library: loads")
    except RuntimeError as e:
        match = re.search(r"Unknown builtin op: (composer::\w+)", str(e))
        print(f"without the library: load fails"
              f" ({match.group(0) if match else str(e).splitlines()[0]})")
    load_library(library)
    model = torch.jit.load(model_path)
    counts, _ = graph_counts(model)
    print(f"graph: {describe(counts)}")
    example = torch.load(input_path)
    with torch.no_grad():
        for train in (False, True):
            out = model.train(train)(example)
            print(f"{'train' if train else 'eval'}: output "
                  f"{list(out.shape)}, finite: {bool(torch.isfinite(out).all())}")


if __name__ == "__main__":
    main()
