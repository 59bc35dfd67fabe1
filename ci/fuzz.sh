#!/usr/bin/env bash
# Builds the libFuzzer targets (CMake preset `fuzz`: clang, ASan+UBSan) and
# runs each for SECONDS (default 600) from its committed corpus and
# dictionary (suites/fuzz/), then merges what it found into a minimized corpus
# in place. Findings (crash-*, leak-*, timeout-* files) are left in
# build-fuzz/findings/<target>/ and fail the script. Usage:
#   bash ci/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(input_file budgets golden drift_config model_file); fi
bash ci/setup.sh
dpkg-query -W -f='${Status}' clang 2>/dev/null | grep -q 'install ok installed' || {
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -qq --no-install-recommends clang
}
cmake --preset fuzz
cmake --build --preset fuzz -j "$(nproc)"
status=0
for t in "${targets[@]}"; do
  corpus="suites/fuzz/corpus/$t"
  findings="build-fuzz/findings/$t"
  fresh="build-fuzz/corpus/$t"
  mkdir -p "$findings" "$fresh"
  echo "=== fuzz_$t for $seconds s"
  if ! ./build-fuzz/bin/fuzz_$t "$fresh" "$corpus" -dict="suites/fuzz/$t.dict" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=16384 \
      -artifact_prefix="$findings/" -print_final_stats=1; then
    status=1
  fi
  # Keep the corpus small: only the inputs that add coverage.
  merged="build-fuzz/merged/$t"
  rm -rf "$merged" && mkdir -p "$merged"
  ./build-fuzz/bin/fuzz_$t -merge=1 "$merged" "$corpus" "$fresh" > /dev/null 2>&1
  rm -rf "$corpus" && mv "$merged" "$corpus"
done
exit $status
