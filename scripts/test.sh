#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: lit (dialect,
# passes, importer, end-to-end on real models), gtest, and the C++ API
# example built against the installed package; then the compiler again under
# AddressSanitizer and UBSan, and the fuzz targets for a fixed number of
# inputs (scripts/sanitize.sh, docs/fuzzing.md; SKIP_SANITIZERS=1 skips).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
# One thread a test: ctest and lit run tests side by side, one per core.
(cd build && OMP_NUM_THREADS=1 ctest --output-on-failure -j"${JOBS:-2}")
[ "${SKIP_SANITIZERS:-0}" = 1 ] || scripts/sanitize.sh
