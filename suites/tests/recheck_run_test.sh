#!/usr/bin/env bash
# Runs `ulpgate run` on every tanh_bwd suite and rechecks each report with the
# independent exact computation of tools/python/recheck_run.py (no MPFR).
# Usage: recheck_run_test.sh ULPGATE_BINARY SOURCE_DIR WORK_DIR
set -euo pipefail
ulpgate=$1 source_dir=$2 work=$3
mkdir -p "$work"
for suite in random domain training adversarial; do
  "$ulpgate" run --kernel tanh_bwd --variant all --target all --suite "$suite" --seed 17 --n 4000 \
    --save-inputs "$work/$suite.txt" --json "$work/$suite.json" --quiet > /dev/null
  python3 "$source_dir/tools/python/recheck_run.py" "$work/$suite.txt" "$work/$suite.json"
done
