#!/usr/bin/env bash
# Runs `ulpgate run` on every tanh_bwd suite in every format and rechecks each report with the
# independent exact computation of tools/python/recheck_run.py (no MPFR).
# Usage: recheck_run_test.sh ULPGATE_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
ulpgate=$1 source_dir=$2 work=$3
mkdir -p "$work"
# Every format; in bf16 and f16 the suites are drawn in the format.
for dtype in f32 bf16 f16; do
  n=4000
  [ "$dtype" != f32 ] && n=2000
  for suite in random domain training adversarial; do
    "$ulpgate" run --kernel tanh_bwd --dtype "$dtype" --variant all --target all --suite "$suite" \
      --seed 17 --n "$n" --save-inputs "$work/$dtype-$suite.txt" --json "$work/$dtype-$suite.json" \
      --quiet > /dev/null
    python3 "$source_dir/tools/python/recheck_run.py" "$work/$dtype-$suite.txt" "$work/$dtype-$suite.json"
  done
done
