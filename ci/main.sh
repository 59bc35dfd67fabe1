#!/usr/bin/env bash
# The main job: set up, build, and run every tanh_bwd variant on every target
# this machine supports over the standard suites, printing the tables and
# histograms; reports go to build/reports/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
mkdir -p build/reports
for suite in domain training adversarial random; do
  echo "=================================================================="
  ./build/bin/ulpgate run --kernel tanh_bwd --variant all --target all --suite "$suite" \
    --json "build/reports/tanh_bwd-$suite.json"
  echo
done
echo "reports: build/reports/"
