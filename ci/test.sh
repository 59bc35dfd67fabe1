#!/usr/bin/env bash
# The test command: set up, build, and run every default test tier with ctest
# (smoke, sampled, ...; the exhaustive, fuzz and arm tiers are left out of the default run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/build.sh
ctest --preset ci -j "$(nproc)" --label-exclude 'exhaustive|fuzz|arm'
