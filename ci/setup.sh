#!/usr/bin/env bash
# Installs the Debian 12 packages ulpgate builds and tests with. Safe to run again:
# apt-get is only called when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libhwy-dev            # Highway 1.0.3: the SIMD kernels, one source per target
  libmpfr-dev libgmp-dev  # exact oracles and the binary32 emulation
  libboost-dev          # Boost.Multiprecision (mpfr_float) for formulas and Eigen
  libeigen3-dev         # Eigen 3.4: the linear-layer peer and exact matrix products
  nlohmann-json3-dev    # reports, goldens, budgets
  libgtest-dev libgmock-dev  # tests
  libbenchmark-dev      # benchmarks
  libcli11-dev          # the command line
  libfmt-dev            # text formatting
  libxtensor-dev libzip-dev  # NumPy .npy (xtensor) and .npz (libzip) files
  python3               # the independent rechecks of reports (tools/python)
  python3-venv          # build/peers-venv: the cast peers from PyPI (ci/setup_peers.sh)
  python3-numpy         # tools/python/elementwise_exact.py: the float32 models, step by step
  python3-mpmath        # tools/python/elementwise_exact.py: exact values of the elementwise ops
  python3-torch         # PyTorch 1.13 CPU: the elementwise peer (run with /usr/bin/python3)
  pybind11-dev python3-dev  # the Python package (import ulpgate); python3-dev's Python.h
                        # and build-essential's g++ are also what torch.compile's Inductor
                        # compiles its CPU kernels with (tools/python/compiled_peer.py)
  python3-pytest        # examples/python: PyTorch's ops tested with ulpgate.testing
  qemu-user             # qemu-x86_64 -cpu MODEL: ulpgate on emulated smaller CPUs (a test);
                        # qemu-aarch64: the ARM IUT (ctest label arm)
  g++-aarch64-linux-gnu # the IUT cross-built for aarch64 (preset aarch64)
  libhwy-dev:arm64 libfmt-dev:arm64  # its Highway and fmt, through multiarch (below)
  parallel              # GNU parallel: a sweep's shards at once (a test, docs/sweeps.md)
  chromium              # headless: renders the HTML report in a test (report_renders_in_chromium)
  libblas3              # the reference BLAS: examples/iut/blas_iut.c's test (ctest blas_iut)
  libopenblas0-pthread libblis4-pthread  # OpenBLAS and BLIS, measured through blas_iut (docs/iut.md)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "ci/setup.sh: all ${#packages[@]} packages present"
  exit 0
fi

echo "ci/setup.sh: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# The arm64 packages come through multiarch.
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $SUDO dpkg --add-architecture arm64
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
