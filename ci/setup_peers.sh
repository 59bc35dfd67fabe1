#!/usr/bin/env bash
# Sets up build/peers-venv: a virtual environment of Debian's python3 with the
# peers of ci/requirements-peers.txt (ml_dtypes, PyTorch, torchao, ONNX Runtime,
# JAX), exactly those versions, from PyPI. Debian's python3 keeps its own
# packages. Run again, it does nothing while the requirements are unchanged
# (the stamp holds their hash). It never fails: without the network, a wheel
# or the disk, it writes build/peers-venv/UNAVAILABLE with the reason and
# exits 0, and the peer tests that need it skip, saying why.
set -uo pipefail
cd "$(dirname "$0")/.."
venv="${ULPGATE_PEERS_VENV:-build/peers-venv}"  # another place: tests of this script
req=ci/requirements-peers.txt
stamp="$venv/STAMP"
want="$(sha256sum "$req" | cut -d' ' -f1) $(/usr/bin/python3 -c 'import sys; print(sys.version.split()[0])' 2>/dev/null)"

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "ci/setup_peers.sh: $venv is up to date"
  exit 0
fi

unavailable() {
  mkdir -p "$venv"
  rm -f "$stamp"
  printf '%s\n' "$1" > "$venv/UNAVAILABLE"
  echo "ci/setup_peers.sh: the cast peers are unavailable: $1 (their tests skip)"
  exit 0
}

start=$SECONDS
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
log="$venv.log"
/usr/bin/python3 -m venv "$venv" > "$log" 2>&1 ||
  unavailable "python3 -m venv failed (python3-venv missing?): $(tail -n 1 "$log")"
# --no-deps: every package is in the file at its pinned version, and nothing
# else (the GPU-only packages torch's wheel names) is fetched. No cache: the
# wheels would be kept twice.
echo "ci/setup_peers.sh: installing $req into $venv"
"$venv/bin/python" -m pip install --no-deps --no-cache-dir --disable-pip-version-check \
  --progress-bar off -q -r "$req" >> "$log" 2>&1 ||
  unavailable "pip install -r $req failed: $(tail -n 1 "$log")"
"$venv/bin/python" -c 'import ml_dtypes, torch, torchao, onnx, onnxruntime' >> "$log" 2>&1 ||
  unavailable "the installed peers do not import: $(tail -n 1 "$log")"
# JAX is one summation peer among several: if it alone does not import, the others
# stay, and its tests skip with this reason.
rm -f "$venv/UNAVAILABLE" "$venv/JAX_UNAVAILABLE"
"$venv/bin/python" -c 'import jax; jax.numpy.ones(2).block_until_ready()' >> "$log" 2>&1 ||
  printf 'jax does not import: %s\n' "$(tail -n 1 "$log")" > "$venv/JAX_UNAVAILABLE"
printf '%s\n' "$want" > "$stamp"
echo "ci/setup_peers.sh: $venv ready in $((SECONDS - start)) s ($(du -sm "$venv" | cut -f1) MB)"
