#!/usr/bin/env bash
# Builds the compiler with AddressSanitizer and UndefinedBehaviorSanitizer
# into build-san (clang-19; the same build holds the libFuzzer targets),
# runs its gtest suite and the lit tests that need no model export, then
# each fuzz target over its seed corpus and a fixed number of new inputs.
#
# Usage: scripts/sanitize.sh [--runtime]
#   --runtime  also builds the training runtime and runs its gtest suites
#              (about 15 minutes more on 2 cores; CI runs without it).
# Environment: JOBS (build jobs, 2), FUZZ_RUNS (inputs per fuzz target).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-build --sanitizers

runtime=OFF
[ "${1:-}" = "--runtime" ] && runtime=ON
# -O1 keeps the instrumented build fast to compile and its reports readable.
flags="-O1 -gline-tables-only -DNDEBUG"
CC=clang-19 CXX=clang++-19 cmake -S . -B build-san -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="$flags" -DCMAKE_CXX_FLAGS_RELEASE="$flags" \
  -DCOMPOSER_SANITIZE=address,undefined -DCOMPOSER_BUILD_FUZZERS=ON \
  -DCOMPOSER_BUILD_RUNTIME="$runtime" -DCOMPOSER_BUILD_CUDA_KERNELS=OFF >/dev/null
# ComposerTestMethod: the test-only method plugin test/passes loads.
targets=(composer-opt ComposerUnitTests ComposerTestMethod
         composer-mlir-fuzzer composer-torchscript-fuzzer)
[ "$runtime" = ON ] && targets=(all)
cmake --build build-san -j"${JOBS:-2}" --target "${targets[@]}"

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
# LLVM's allocators poison what they hand out only where their inline code
# is instrumented; Debian's libMLIR is not, so user poisoning is off.
export ASAN_OPTIONS="allow_user_poisoning=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"

echo "== gtest (sanitized)"
for suite in build-san/bin/*Tests; do
  "$suite" --gtest_brief=1
done
# A fuzz target runs on one core; the lit tests take the other meanwhile.
echo "== lit, the tests without a model export (sanitized), beside the fuzz targets"
lit_log=build-san/lit-sanitized.log
/usr/bin/python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv -j1 \
  build-san/test/Dialect build-san/test/passes \
  build-san/test/tools/composer-opt/help.test >"$lit_log" 2>&1 &
lit_pid=$!
echo "== fuzz targets"
fuzz_status=0
scripts/fuzz.sh --runs="${FUZZ_RUNS:-3000}" || fuzz_status=$?
lit_status=0
wait "$lit_pid" || lit_status=$?
echo "== lit (sanitized)"
cat "$lit_log"
[ "$lit_status" = 0 ] && [ "$fuzz_status" = 0 ]
