#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: lit (dialect,
# passes, importer, end-to-end on real models), gtest, and the C++ API
# example built against the installed package; then the compiler again under
# AddressSanitizer and UBSan, and the fuzz targets for a fixed number of
# inputs (scripts/sanitize.sh, docs/fuzzing.md; SKIP_SANITIZERS=1 skips).
#
# Usage: scripts/test.sh [--quick]
#   --quick  for iterating (under 5 minutes on 2 cores): builds what changed
#            in an existing build/ (setup.sh first only where there is none),
#            then lit over test/passes and test/Dialect, and the gtests; no
#            importer, end-to-end, example or sanitizer runs. Without the
#            flag, the full suite.
# Environment: JOBS (build jobs and tests side by side, 2).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
  esac
done

export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"

if [ "$quick" = 1 ]; then
  if [ -f build/build.ninja ]; then
    # Ninja reconfigures by itself when a CMake file changed.
    cmake --build build -j"${JOBS:-2}"
  else
    scripts/setup.sh
  fi
  python=$(sed -n 's/^COMPOSER_PYTHON:FILEPATH=//p' build/CMakeCache.txt)
  lit=$(llvm-config-19 --prefix 2>/dev/null || echo /usr/lib/llvm-19)
  lit=$lit/build/utils/lit/lit.py
  # lit's names are "composer :: <path under test/>".
  "${python:-python3}" "$lit" -sv -j"${JOBS:-2}" build/test \
    --filter ':: (passes|Dialect)/'
  # One thread a test: ctest runs tests side by side, one per core.
  (cd build && OMP_NUM_THREADS=1 ctest --output-on-failure -j"${JOBS:-2}" \
    -E '^lit$')
  exit 0
fi

scripts/setup.sh
# One thread a test: ctest and lit run tests side by side, one per core.
(cd build && OMP_NUM_THREADS=1 ctest --output-on-failure -j"${JOBS:-2}")
[ "${SKIP_SANITIZERS:-0}" = 1 ] || scripts/sanitize.sh
