#!/usr/bin/env bash
# Prepares the models bench/gpu/run.sh trains, on the build machine (it
# needs composer-opt, which the GPU machine does not have):
#   bench/gpu/prepare.sh [OUT_DIR]          (default: bench/gpu/models)
#
# torchvision's ResNet-50 is scripted with every parameter and buffer zeroed
# (throughput does not depend on the values; zeros make the files a few
# hundred KB gzipped), composer-opt writes each variant, and the parameters
# the passes added are zeroed too (BlurPool's filters, buffers, are kept):
#   resnet50.pt                 the model as it is (fp32, NCHW)
#   resnet50.medium.aten.pt     --composer-medium (BlurPool, channels-last,
#                               bf16 mixed precision), methods as aten ops
#   resnet50.medium.runtime.pt  the same, methods as composer:: runtime ops
#   resnet50.all.aten.pt        medium plus Squeeze-Excite and Ghost
#   resnet50.all.runtime.pt     BatchNorm, as aten ops / as runtime ops
# each gzipped (*.pt.gz). The benchmark re-initializes weights on load.
# Runtime variants need `composer-opt --lower-to=runtime`; without it they
# are skipped with a note.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here/models}
opt=${COMPOSER_OPT:-$root/build/bin/composer-opt}
# Debian's python3 has torch and torchvision (the e2e tests use it).
python=${COMPOSER_PYTHON:-/usr/bin/python3}

die() {
  echo "prepare.sh: $*" >&2
  exit 1
}

[[ -x $opt ]] || die "no composer-opt at $opt: build it first (cmake --build build)"
"$python" -c 'import torch, torchvision' 2>/dev/null ||
  die "$python cannot import torch and torchvision (set COMPOSER_PYTHON)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

echo "== exporting torchvision resnet50 (scripted, zeroed)"
"$python" - "$tmp/resnet50.pt" <<'EOF'
import sys

import torch
import torchvision

model = torchvision.models.resnet50(weights=None)
with torch.no_grad():
    for t in list(model.parameters()) + list(model.buffers()):
        t.zero_()
torch.jit.save(torch.jit.script(model), sys.argv[1])
EOF

medium='--composer-medium'
all='--pass-pipeline=builtin.module(composer-blurpool,composer-squeeze-excite,composer-ghost-batchnorm,composer-channels-last,composer-mixed-precision)'

runtime=yes
if ! "$opt" --help 2>/dev/null | grep -q -- '=runtime'; then
  runtime=no
  echo "note: this composer-opt has no --lower-to=runtime; runtime variants skipped"
fi

# variant NAME LOWERING ARGS...: composer-opt's remarks go to NAME.log.
variant() {
  local name=$1 lowering=$2
  shift 2
  echo "== $name ($lowering)"
  if ! "$opt" "$tmp/resnet50.pt" "$@" --lower-to="$lowering" \
    -o "$tmp/$name.pt" >"$out/$name.log" 2>&1; then
    cat "$out/$name.log" >&2
    die "composer-opt failed for $name"
  fi
  sed -i "s|$tmp/||g" "$out/$name.log"
  grep remark "$out/$name.log" | sed 's|^|   |' || true
}

variant resnet50.medium.aten aten "$medium"
variant resnet50.all.aten aten "$all"
if [[ $runtime == yes ]]; then
  variant resnet50.medium.runtime runtime "$medium"
  variant resnet50.all.runtime runtime "$all"
else
  rm -f "$out"/resnet50.*.runtime.pt.gz
fi

# Zero what the passes added (Squeeze-Excite's weights are random); the
# BlurPool filters are buffers and keep their values. Runtime variants load
# only with the runtime library.
echo "== zeroing new parameters"
"$python" - "$root/build/lib/libComposerRuntime.so" "$tmp"/resnet50.*.pt <<'EOF'
import os
import sys

import torch

library, paths = sys.argv[1], sys.argv[2:]
if os.path.exists(library):
    torch.ops.load_library(library)
for path in paths:
    try:
        model = torch.jit.load(path)
    except RuntimeError as e:
        note = str(e).splitlines()[0]
        print(f"note: {os.path.basename(path)} kept as written: {note}")
        continue
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    torch.jit.save(model, path)
EOF

for f in "$tmp"/resnet50*.pt; do
  gzip -9 -n -c "$f" >"$out/$(basename "$f").gz"
done
echo "== wrote $out:"
ls -l "$out"/*.pt.gz
