#!/usr/bin/env bash
# Installs every Debian package composer-opt needs (idempotent), then configures
# and builds into ./build.
# Usage: scripts/setup.sh [--no-build] [--sanitizers]
#   --sanitizers  also installs clang-19 and its sanitizer and libFuzzer
#                 runtimes (scripts/sanitize.sh, scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ git
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  libtorch-dev libgtest-dev zlib1g-dev libgloo-dev
  libzstd-dev libssl-dev libxxhash-dev nlohmann-json3-dev libcurl4-openssl-dev
  libjpeg62-turbo-dev libpng-dev
  libopenblas0-openmp
  pybind11-dev python3-dev python3-pytest
  python3-torch python3-torchvision python3-matplotlib
  dataset-fashion-mnist fortunes
)
build=1
for arg in "$@"; do
  case "$arg" in
    --no-build) build=0 ;;
    --sanitizers) packages+=(clang-19 libclang-rt-19-dev) ;;
    *) echo "usage: scripts/setup.sh [--no-build] [--sanitizers]" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian's default BLAS is the reference one, ~10x slower than OpenBLAS.
if command -v update-alternatives >/dev/null; then
  for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
    cand=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas | head -n1 || true)
    [ -z "$cand" ] || update-alternatives --set "$alt" "$cand" >/dev/null 2>&1 || true
  done
fi

[ "$build" = 1 ] || exit 0
# The fused ops' CUDA kernels are compiled wherever nvcc is (CI keeps them
# building); they run only with a CUDA LibTorch.
cuda_kernels=OFF
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda_kernels=ON
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCOMPOSER_BUILD_CUDA_KERNELS="$cuda_kernels"
cmake --build build -j"${JOBS:-2}"
