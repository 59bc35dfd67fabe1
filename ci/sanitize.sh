#!/usr/bin/env bash
# Builds the project with AddressSanitizer and UndefinedBehaviorSanitizer (CMake
# preset `sanitize`, build-sanitize/) and runs a test tier under them: smoke by
# default, `bash ci/sanitize.sh sampled` for the next one. Any report fails
# the test that triggered it (-fno-sanitize-recover, halt_on_error). Only the
# tier's test programs are built (ULPGATE_BUILD_TEST_LABELS), with line
# tables for the reports' stacks but no other debug information (-g1): the
# sanitizers make every file several times slower to compile.
set -euo pipefail
cd "$(dirname "$0")/.."
tier="${1:-smoke}"
bash ci/setup.sh
cmake --preset sanitize -DULPGATE_BUILD_TEST_LABELS="$tier"
cmake --build --preset sanitize -j "$(nproc)"
ctest --preset sanitize -j "$(nproc)" -L "$tier"
