#!/usr/bin/env bash
# One run of ulpgate's GPU checks on a machine with an NVIDIA GPU (docs/gpu.md), in at most
# --budget seconds (default 540): every step under `timeout`, a failed or timed-out step
# recorded and the next one run, one table at the end, every report in one folder the
# repository can keep (suites/peer/device-<gpu>-<date>/: README.md with the table,
# info.json with versions, GPU, driver and every command, one report per step).
#
#   ci/device.sh [--out DIR] [--budget SECONDS]   on the GPU machine
#   ci/device.sh --bundle DIR                     on the build machine: ulpgate, its Python
#                                                 module and their shared libraries in DIR
#   ci/device.sh --dry-run [--out DIR]            print the steps and their commands, run none
#   ci/device.sh --table DIR                      the table of a results folder again
#
# What it needs there: bash, coreutils' timeout, nvidia-smi, nvcc with cuBLAS (or the
# cuBLAS of PyTorch's nvidia-cublas wheel), Python with torch (CUDA) and triton; ulpgate
# itself from build/bin (a build made there) or from a bundle carried in (build-device/,
# made here by --bundle: the machine has none of ulpgate's libraries and no package
# manager). Exit status: 0 every step passed, 1 a step failed or timed out, 2 bad usage,
# 77 no NVIDIA GPU here (nothing run).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD

OUT_DIR=""
BUDGET=540
MODE=run
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT_DIR=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --dry-run) MODE=dry; shift ;;
    --bundle) MODE=bundle; OUT_DIR=$2; shift 2 ;;
    --table) MODE=table; OUT_DIR=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "ci/device.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
# nvcc is often left off PATH.
[ -d /usr/local/cuda/bin ] && export PATH=$PATH:/usr/local/cuda/bin

if [ "$MODE" = table ]; then
  exec "$PY" "$ROOT/ci/device_table.py" "$OUT_DIR"
fi

# ---- the bundle: ulpgate and the libraries it loads, for a machine without them --------
if [ "$MODE" = bundle ]; then
  B=$OUT_DIR
  [ -x build/bin/ulpgate ] || { echo "ci/device.sh --bundle: build build/bin/ulpgate first" >&2; exit 2; }
  rm -rf "$B" && mkdir -p "$B/bin" "$B/lib" "$B/glibc"
  cp build/bin/ulpgate "$B/bin/ulpgate.real"
  [ -d build/python/ulpgate ] && mkdir -p "$B/python" && cp -r build/python/ulpgate "$B/python/"
  # Every shared library it loads: lib/, and the C library's own in glibc/ (the wrapper
  # below starts ulpgate with the bundled loader).
  for f in build/bin/ulpgate build/python/ulpgate/*.so; do
    [ -e "$f" ] || continue
    ldd "$f" | awk '/=> \// {print $3} /ld-linux/ && !/=>/ {print $1}'
  done | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) cp -L "$lib" "$B/glibc/" ;;
      *) cp -L "$lib" "$B/lib/" ;;
    esac
  done
  glibc=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
  cat > "$B/bin/ulpgate" <<'WRAPPER'
#!/bin/sh
# ulpgate from ci/device.sh --bundle, started by the bundled loader with the bundled
# libraries (C library included), so that it runs whatever the machine's glibc is; its
# children (the IUTs: PyTorch's Python, the CUDA IUT) get no library path of ours.
here=$(cd "$(dirname "$0")/.." && pwd)
exec "$here/glibc/ld-linux-x86-64.so.2" --library-path "$here/lib:$here/glibc" "$here/bin/ulpgate.real" "$@"
WRAPPER
  chmod +x "$B/bin/ulpgate"
  printf 'glibc %s\nbuilt %s\n' "$glibc" "$(date -u +%F)" > "$B/BUNDLE"
  du -sh "$B"
  exit 0
fi

# ---- the GPU --------------------------------------------------------------------------
SMI=${NVIDIA_SMI:-nvidia-smi}
GPU_NAME=""
if [ "$MODE" = run ]; then
  if ! GPU_LIST=$($SMI -L 2>&1) || [ -z "$GPU_LIST" ]; then
    echo "ci/device.sh: no NVIDIA GPU here ($SMI -L: ${GPU_LIST:-nothing}); nothing run (exit 77)"
    exit 77
  fi
  GPU_NAME=$($SMI --query-gpu=name --format=csv,noheader | head -1)
fi
GPU_SLUG=$(echo "${GPU_NAME:-gpu}" | tr 'A-Z' 'a-z' | sed 's/nvidia//; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
[ -n "$OUT_DIR" ] || OUT_DIR=suites/peer/device-${GPU_SLUG}-$(date -u +%F)
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
STEPS=$OUT_DIR/steps.tsv
[ "$MODE" = run ] && : > "$STEPS"
START=$(date +%s)

# step NAME LIMIT COMMAND...: runs COMMAND under timeout into NAME.txt and records a row
# (name, status, exit status, seconds, command). A step past the budget is skipped.
step() {
  local name=$1 limit=$2
  shift 2
  local cmd
  cmd=$(printf '%q ' "$@")
  if [ "$MODE" = dry ]; then
    printf '%-24s %4ss  %s\n' "$name" "$limit" "$cmd"
    return 0
  fi
  local left=$((BUDGET - ($(date +%s) - START)))
  if [ "$left" -lt 15 ]; then
    printf '%s\tSKIP\t-\t0\t%s\n' "$name" "$cmd" >> "$STEPS"
    echo "out of the time budget ($BUDGET s): not run" > "$OUT_DIR/$name.txt"
    return 0
  fi
  [ "$limit" -gt $((left - 5)) ] && limit=$((left - 5))
  echo "== $name (at most $limit s)"
  local t0 rc status
  t0=$(date +%s.%N)
  timeout --kill-after=10 "$limit" "$@" > "$OUT_DIR/$name.txt" 2>&1
  rc=$?
  case $rc in
    0) status=PASS ;;
    124|137) status=TIMEOUT ;;
    77) status=SKIP ;;
    *) status=FAIL ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" \
    "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" "$cmd" >> "$STEPS"
  tail -n 3 "$OUT_DIR/$name.txt" | sed 's/^/   /'
}

# ---- build: the CUDA IUT with nvcc here, ulpgate from build/ or the carried bundle -------
BIN=$ROOT/build-device
[ "$MODE" = run ] && mkdir -p "$BIN"
IUT=$BIN/ulpgate-iut-cuda
build_iut() {
  local extra=()
  # cuBLAS from the toolkit, else from PyTorch's nvidia-cublas wheel.
  if ! [ -e "$(dirname "$(command -v nvcc)")/../include/cublas_v2.h" ]; then
    local wheel
    wheel=$("$PY" -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__))' 2>/dev/null)
    [ -n "$wheel" ] && extra=(-I"$wheel/include" -L"$wheel/lib" -Xlinker -rpath="$wheel/lib"
      -l:"$(basename "$(ls "$wheel"/lib/libcublas.so.* | head -1)")")
  fi
  # For the GPU present (-arch=native), else sm_90 (SASS and PTX).
  local arch
  for arch in native sm_90; do
    echo "nvcc -arch=$arch ($(nvcc --version | tail -1))"
    nvcc -std=c++17 -O2 --fmad=false -Xcompiler -ffp-contract=off -arch=$arch \
      "$ROOT/tools/iut/cuda/iut_cuda.cu" -o "$IUT" "${extra[@]}" -lcublas &&
      { echo "built $IUT for -arch=$arch"; return 0; }
  done
  return 1
}
find_ulpgate() {
  for u in "$ROOT/build/bin/ulpgate" "$ROOT/build-device/bin/ulpgate"; do
    # A bundle's bin/ulpgate (ci/device.sh --bundle) is a wrapper that finds its libraries.
    if [ -x "$u" ] && "$u" --version > /dev/null 2>&1; then
      echo "$u"
      return 0
    fi
  done
  return 1
}
build_ulpgate() {
  if U=$(find_ulpgate); then
    echo "ulpgate: $U ($("$U" --version))"
    return 0
  fi
  echo "no ulpgate that runs here (build/bin, build-device/bin); building it:"
  cmake --preset ci && cmake --build build -j"$(nproc)" --target ulpgate
}
export -f build_iut find_ulpgate build_ulpgate
export ROOT BIN IUT PY

step build_iut 120 bash -c build_iut
step build_ulpgate 300 bash -c build_ulpgate
U=$(find_ulpgate || echo "$ROOT/build/bin/ulpgate")
# No LD_LIBRARY_PATH for the rest: the bundle's libstdc++ must not stand in for the one
# PyTorch's Python loads.
[ -d "$(dirname "$U")/../python/ulpgate" ] && export PYTHONPATH="$(dirname "$U")/../python:${PYTHONPATH:-}"
[ -d "$ROOT/build/python/ulpgate" ] && export PYTHONPATH="$ROOT/build/python:${PYTHONPATH:-}"

OPS="tanh_bwd sigmoid_bwd silu_bwd gelu_bwd gelu_tanh_bwd"
# 2^22 bf16 pairs an op: the first 64 grads against every t (or x), every kernel.
RANGE=0:0x400000
TORCH="$PY $ROOT/tools/python/torch_iut.py --device cuda"

# Every CUDA kernel and cast against its host twin, bit for bit where it claims a model
# (needs nothing but the IUT: the one step that runs where the bundle does not).
step selftest_cuda 60 "$IUT" --selftest 65536
# golden/cuda through the CUDA IUT: the kernels run, against the claimed models' goldens.
step golden_cuda 90 "$U" golden check --dir golden/cuda --iut "$IUT --claimed-only"
# A bf16 sweep of every op: the CUDA IUT's kernels (every variant) and PyTorch's aten ops.
for op in $OPS; do
  step "sweep_cuda_$op" 40 "$U" sweep --op "$op" --dtype bf16 --variant none --range $RANGE \
    --iut "$IUT" --json "$OUT_DIR/sweep_cuda_$op.json"
done
# cuBLAS's GEMM in each precision: its summation tree.
for v in cublas_f32 cublas_tf32 cublas_bf16 cublas_f16; do
  step "reveal_$v" 40 "$U" reveal --iut "$IUT" --door "$v" --k 64 --tree --json "$OUT_DIR/reveal_$v.json"
done
for op in $OPS; do
  step "sweep_torch_$op" 60 "$U" sweep --op "$op" --dtype bf16 --variant none --range $RANGE --threads 4 \
    --kernel-timeout 60 --iut "$TORCH --ops $op --dtypes bf16" --json "$OUT_DIR/sweep_torch_$op.json"
done
# Compiled against eager: torch.compile of each aten op beside the eager op, one run each
# in bf16 (the models each follows, side by side).
for op in $OPS; do
  step "compiled_eager_$op" 90 "$U" run --op "$op" --dtype bf16 --variant none --n 4000 --threads 2 \
    --kernel-timeout 120 --iut "$TORCH --ops $op --dtypes bf16" --iut "$TORCH --ops $op --dtypes bf16 --compile" \
    --json "$OUT_DIR/compiled_eager_$op.json"
done
# Triton's tl.dot: through the Python door where ulpgate's module imports, and through the
# CLI with a Triton IUT (needs nothing of ulpgate's in this Python).
step reveal_triton_python 90 "$PY" "$ROOT/tools/python/triton_dot_reveal.py" \
  --json "$OUT_DIR/reveal_triton_python.json"
for v in tl_dot_ieee tl_dot_tf32 tl_dot_bf16; do
  step "reveal_triton_$v" 60 "$U" reveal --iut "$PY $ROOT/tools/python/triton_iut.py" --door "$v" --k 32 \
    --tree --json "$OUT_DIR/reveal_triton_$v.json"
done

[ "$MODE" = dry ] && exit 0

# ---- provenance and the table --------------------------------------------------------
"$PY" - "$OUT_DIR" "$U" "$IUT" "$BUDGET" <<'EOF' > "$OUT_DIR/info.json"
import json, platform, subprocess, sys
out, u, iut, budget = sys.argv[1:]
def sh(*cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e:  # noqa: BLE001
        return f"unavailable: {e}"
info = {"date_utc": sh("date", "-u", "+%FT%TZ"), "host": platform.node(), "python": sys.version.split()[0],
        "gpu": sh("nvidia-smi", "--query-gpu=name,driver_version,compute_cap,memory.total", "--format=csv,noheader"),
        "nvcc": (sh("nvcc", "--version").splitlines() or [""])[-1], "ulpgate": sh(u, "--version"),
        "git": sh("git", "rev-parse", "HEAD"), "budget_s": int(budget), "cuda_iut": iut}
for mod in ("torch", "triton", "jax", "numpy"):
    try:
        info[mod] = __import__(mod).__version__
    except Exception as e:  # noqa: BLE001
        info[mod] = f"not importable: {type(e).__name__}"
try:
    import torch
    info["torch_cuda"] = torch.version.cuda
except Exception:  # noqa: BLE001
    pass
info["steps"] = [dict(zip(["name", "status", "exit", "seconds", "command"], l.rstrip("\n").split("\t")))
                 for l in open(f"{out}/steps.tsv")]
json.dump(info, sys.stdout, indent=1)
EOF
"$PY" "$ROOT/ci/device_table.py" "$OUT_DIR"
rc=$?
# The run tool brings back what is under $OUT: a copy of the folder.
if [ -n "${OUT:-}" ] && [ -d "$OUT" ] && [ "$OUT" != "$OUT_DIR" ]; then
  cp -r "$OUT_DIR" "$OUT/"
fi
exit $rc
