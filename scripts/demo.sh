#!/usr/bin/env bash
# The main job on its built-in default: export torchvision's ResNet-50 with
# Debian's PyTorch, run composer-opt on it, show what it did and check that
# the written model behaves exactly like the original; then train a small
# ResNet on Fashion-MNIST with composer-train to >= 91% test accuracy.
# Usage: scripts/demo.sh [WORKDIR]   (default: build/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

work="${1:-build/demo}"
mkdir -p "$work"
opt=build/bin/composer-opt
e2e=test/e2e_lib

echo "== Exporting torchvision resnet50 (torch.jit.script) to $work/resnet50.pt"
/usr/bin/python3 $e2e/models.py resnet50 script "$work/resnet50.pt"

echo "== composer-opt $work/resnet50.pt --input-spec=2x3x64x64xf32 -o $work/resnet50.opt.pt"
$opt "$work/resnet50.pt" --input-spec=2x3x64x64xf32 --mlir-timing \
  -o "$work/resnet50.opt.pt"
$opt "$work/resnet50.pt" --input-spec=2x3x64x64xf32 -o "$work/resnet50.mlir" 2>/dev/null
echo "== The model as composer IR ($work/resnet50.mlir):"
echo "   parameters: $(grep -c 'composer.parameter' "$work/resnet50.mlir")," \
     "buffers: $(grep -c 'composer.buffer' "$work/resnet50.mlir")"
echo "   composer ops by kind:"
grep -oE '= composer\.[a-z_0-9]+' "$work/resnet50.mlir" | sed 's/= //' |
  grep -vE 'composer\.(op|constant|get_param|get_attr|loop)$' | sort | uniq -c |
  sort -rn | sed 's/^/     /'
echo "   generic TorchScript nodes: $(grep -c 'composer.op "' "$work/resnet50.mlir")"
echo "   forward: $(grep -m1 -o 'func.func @forward.*{' "$work/resnet50.mlir")"

echo "== Checking $work/resnet50.opt.pt against the original in a fresh process"
/usr/bin/python3 $e2e/compare.py "$work/resnet50.pt" "$work/resnet50.opt.pt" \
  "$work/resnet50.pt.input.pt"

echo "== composer-opt $work/resnet50.pt --composer-mild -o $work/resnet50.mild.pt"
$opt "$work/resnet50.pt" --composer-mild -o "$work/resnet50.mild.pt"
/usr/bin/python3 - "$work/resnet50.pt" "$work/resnet50.mild.pt" <<'PY'
import sys, torch
original, mild = (torch.jit.load(p).eval() for p in sys.argv[1:3])
added = sorted(set(mild.state_dict()) - set(original.state_dict()))
cl = sum(p.dim() == 4 and p.is_contiguous(memory_format=torch.channels_last)
         for p in mild.parameters())
x = torch.randn(2, 3, 64, 64)
print(f"   stock PyTorch loads it: {len(added)} blur filters added "
      f"(e.g. {added[0]}), {cl} weights stored channels_last, "
      f"output {tuple(mild(x).shape)}")
PY

echo "== Training a small ResNet on Fashion-MNIST with composer-train"
echo "   (examples/recipes/fashion-mnist.yaml: 8 epochs, a few minutes on 2 cores)"
/usr/bin/python3 examples/fashion_resnet.py "$work/fashion.pt"
rm -rf "$work/fashion-mnist"
build/bin/composer-train examples/recipes/fashion-mnist.yaml \
  model="$work/fashion.pt" save_folder="$work/fashion-mnist" \
  loggers.jsonl="$work/fashion-mnist/metrics.jsonl" \
  loggers.tensorboard="$work/fashion-mnist/tensorboard"
/usr/bin/python3 - "$work/fashion-mnist/metrics.jsonl" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
accuracy = [r["metrics/eval/Accuracy"] for r in rows if "metrics/eval/Accuracy" in r]
print(f"   test accuracy by epoch: {', '.join(f'{a:.4f}' for a in accuracy)}")
assert accuracy[-1] >= 0.91, f"final test accuracy {accuracy[-1]:.4f} < 0.91"
print(f"   final test accuracy {accuracy[-1]:.4f} >= 0.91")
PY
echo "   checkpoints, metrics.jsonl and a TensorBoard event file: $work/fashion-mnist"

echo "== Which methods pay here: training time against final accuracy"
echo "   bench/pareto.py trains the plain recipe, each method alone, the"
echo "   pipelines and examples/recipes/fashion-mnist-fast.yaml (about an hour"
echo "   on 2 cores, so the demo does not run it; this machine's run is in"
echo "   docs/images/pareto-fashion-mnist.png):"
echo "   OMP_NUM_THREADS=2 /usr/bin/python3 bench/pareto.py --out $work/pareto"
echo "   writes the Pareto picture to $work/pareto/pareto.png (and pareto.json);"
echo "   --only NAME and --max-duration 1ep give a shorter run."
if [ -f "$work/pareto/pareto.png" ]; then
  echo "   the picture from an earlier run: $work/pareto/pareto.png"
fi
