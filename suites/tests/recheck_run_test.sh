#!/usr/bin/env bash
# Runs `ulpgate run` on every suite of an op (tanh_bwd or sigmoid_bwd, whose models
# tools/python/recheck_run.py writes out) in every format and rechecks each report with
# that independent exact computation (no MPFR).
# Usage: recheck_run_test.sh ULPGATE_BINARY SOURCE_DIR WORK_DIR [OP]
set -euo pipefail
ulpgate=$1 source_dir=$2 work=$3 op=${4:-tanh_bwd}
mkdir -p "$work"
suites="random domain training adversarial"
[ "$op" != tanh_bwd ] && suites="random domain adversarial"
# Every format; in bf16 and f16 the suites are drawn in the format.
for dtype in f32 bf16 f16; do
  n=4000
  [ "$op" != tanh_bwd ] && n=1000  # the exact rationals cost about 30 s at tanh_bwd's sizes
  [ "$dtype" != f32 ] && n=$((n / 2))
  for suite in $suites; do
    "$ulpgate" run --kernel "$op" --dtype "$dtype" --variant all --target all --suite "$suite" \
      --seed 17 --n "$n" --save-inputs "$work/$op-$dtype-$suite.txt" \
      --json "$work/$op-$dtype-$suite.json" --quiet > /dev/null
    python3 "$source_dir/tools/python/recheck_run.py" "$work/$op-$dtype-$suite.txt" \
      "$work/$op-$dtype-$suite.json"
  done
done
