#!/usr/bin/env bash
# The CUDA op tests and GPU benchmarks, on a machine with an NVIDIA GPU, a
# CUDA PyTorch wheel (python3 -c 'import torch'), CMake, a C++ compiler and
# the CUDA toolkit (LibTorch's CMake config needs it), but no MLIR:
#   bench/gpu/run.sh          (5 to 8 minutes)
# 1. builds the runtime alone against the wheel's LibTorch, with the CUDA
#    kernels for this GPU's architecture, in $BUILD_DIR (build-gpu);
# 2. runs the CUDA op tests (RuntimeOpsCudaTests, when GoogleTest is there)
#    and check_ops.py (CUDA against CPU, gradcheck in float64);
# 3. bench_ops.py: each fused op against its aten composition;
# 4. bench_resnet50.py: ResNet-50 training throughput of the models
#    bench/gpu/prepare.sh wrote on the build machine (bench/gpu/models).
# Every step has a timeout inside an overall budget ($BUDGET_S, 470 s) and a
# failed step does not stop the next; the exit status says whether all
# passed. SKIP_BUILD=1 reuses $BUILD_DIR.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$root/build-gpu}
python=${PYTHON:-python3}
budget=${BUDGET_S:-470}
jobs=${JOBS:-$(nproc)}
status=0

say() { printf '\n== %s (%ss)\n' "$*" "$SECONDS"; }
warn() { echo "run.sh: warning: $*" >&2; }
die() {
  echo "run.sh: $*" >&2
  exit 1
}
# The timeout for a step that wants $1 seconds, within what is left.
limit() {
  local left=$((budget - SECONDS))
  ((left < $1)) && echo "$left" || echo "$1"
}
# run NAME SECONDS COMMAND...: runs a step, noting failure and timeout.
run() {
  local name=$1 want=$2 t
  shift 2
  t=$(limit "$want")
  if ((t < 10)); then
    echo "run.sh: $name skipped: the ${budget}s budget is spent" >&2
    status=1
    return 1
  fi
  timeout "$t" "$@"
  local rc=$?
  if ((rc == 124)); then
    echo "run.sh: $name timed out after ${t}s" >&2
  elif ((rc != 0)); then
    echo "run.sh: $name failed (exit status $rc)" >&2
  fi
  ((rc == 0)) || status=1
  return $rc
}

say "machine"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv || warn "nvidia-smi failed"
  driver_cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)
else
  warn "nvidia-smi not found"
  driver_cuda=
fi
"$python" -c 'import torch' 2>/dev/null ||
  die "$python cannot import torch: install a CUDA PyTorch wheel (or set PYTHON)"
"$python" - <<'EOF' || die "no usable GPU for torch (see above)"
import sys
import torch
print(f"torch {torch.__version__}, built for CUDA {torch.version.cuda}")
if torch.version.cuda is None:
    sys.exit("this torch is CPU-only: install a CUDA wheel")
if not torch.cuda.is_available():
    sys.exit("torch.cuda.is_available() is False: no GPU, or its driver "
             "is too old for this wheel")
print(f"GPU: {torch.cuda.get_device_name()}, compute capability "
      f"{'.'.join(map(str, torch.cuda.get_device_capability()))}, "
      f"{torch.cuda.device_count()} device(s)")
EOF
command -v cmake >/dev/null || die "cmake not found"
cmake --version | head -1

nvcc=${CUDACXX:-$(command -v nvcc || true)}
for candidate in "${CUDA_HOME:-}/bin/nvcc" /usr/local/cuda/bin/nvcc; do
  [[ -z $nvcc && -x $candidate ]] && nvcc=$candidate
done
if [[ -n $nvcc ]]; then
  nvcc_version=$("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
  echo "nvcc: $nvcc ($nvcc_version); driver supports CUDA ${driver_cuda:-?}"
  if [[ -n $driver_cuda && ${nvcc_version%%.*} -gt ${driver_cuda%%.*} ]]; then
    warn "nvcc $nvcc_version is newer than this driver's CUDA $driver_cuda:" \
      "the kernels it builds will not load (set CUDACXX to an older toolkit)"
  fi
else
  warn "no nvcc (PATH, CUDA_HOME, /usr/local/cuda): LibTorch's CMake" \
    "config needs the CUDA toolkit, and the ops would have no CUDA kernels"
fi
capability=$("$python" -c 'import torch; print("%d%d" % torch.cuda.get_device_capability())')

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  say "configuring the runtime against the wheel's LibTorch in $build"
  torch_prefix=$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cuda_args=()
  if [[ -n $nvcc ]]; then
    toolkit=$(dirname "$(dirname "$nvcc")")
    cuda_args=(-DCMAKE_CUDA_COMPILER="$nvcc" -DCUDAToolkit_ROOT="$toolkit"
      -DCUDA_TOOLKIT_ROOT_DIR="$toolkit")
    # LibTorch's config otherwise probes the GPU for its architecture list.
    export TORCH_CUDA_ARCH_LIST="${capability:0:-1}.${capability: -1}"
  fi
  mkdir -p "$build"
  run configure 120 cmake -S "$root/runtime" -B "$build" ${generator[@]+"${generator[@]}"} \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$torch_prefix" \
    -DCOMPOSER_PYTHON="$(command -v "$python")" \
    -DCOMPOSER_CUDA_ARCHITECTURES="$capability" ${cuda_args[@]+"${cuda_args[@]}"} \
    >"$build/configure.log" 2>&1
  grep -E 'Fused-op CUDA|LibTorch has CUDA|CMake Error|Could NOT' \
    "$build/configure.log" || true
  if [[ ! -f $build/CMakeCache.txt ]] || grep -q 'CMake Error' "$build/configure.log"; then
    tail -30 "$build/configure.log"
    die "configuring the runtime failed (log: $build/configure.log)"
  fi

  say "building ComposerRuntime and the CUDA op tests ($jobs jobs)"
  targets=(ComposerRuntime)
  if cmake --build "$build" --target help 2>/dev/null | grep -q RuntimeOpsCudaTests; then
    targets+=(RuntimeOpsCudaTests)
  else
    warn "no RuntimeOpsCudaTests target (no CUDA LibTorch, GTest or CUDA kernels?)"
  fi
  if ! run build 300 cmake --build "$build" -j "$jobs" --target "${targets[@]}" \
    >"$build/build.log" 2>&1; then
    grep -E 'error|Error' "$build/build.log" | head -30
    tail -15 "$build/build.log"
    die "building the runtime failed (log: $build/build.log)"
  fi
  tail -1 "$build/build.log"
fi

lib=$build/lib/libComposerRuntime.so
[[ -f $lib ]] || die "no $lib"
if nm -DC "$lib" | grep -q 'composer::ops::cudaKernels()'; then
  echo "$lib has the CUDA kernels"
else
  warn "$lib was built without CUDA kernels: the ops run on CPU only" \
    "(see 'Fused-op CUDA' in $build/configure.log)"
  status=1
fi

say "CUDA op tests"
if [[ -x $build/bin/RuntimeOpsCudaTests ]]; then
  run tests 120 "$build/bin/RuntimeOpsCudaTests" --gtest_color=no 2>&1 |
    grep -vE '^\[ RUN|^\[       OK'
  ((PIPESTATUS[0] == 0)) || status=1
else
  warn "no $build/bin/RuntimeOpsCudaTests: tests not run"
  status=1
fi

say "CUDA against CPU and gradcheck, from Python (check_ops.py)"
run check_ops 90 "$python" "$here/check_ops.py" --lib "$lib"

say "fused ops against their aten compositions (bench_ops.py)"
run bench_ops 90 "$python" "$here/bench_ops.py" --lib "$lib"

say "ResNet-50 training throughput (bench_resnet50.py)"
[[ -d $here/models ]] ||
  warn "no $here/models: run bench/gpu/prepare.sh on the build machine"
run bench_resnet50 150 "$python" "$here/bench_resnet50.py" --lib "$lib" \
  --models "$here/models"

say "done: $( ((status == 0)) && echo 'all steps passed' || echo 'some steps failed')"
exit $status
