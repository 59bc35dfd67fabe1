#!/usr/bin/env bash
# Installs what is missing (ci/setup.sh), configures with the `ci` preset
# (warnings are errors) and builds everything into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
cmake --preset ci
cmake --build --preset ci -j "$(nproc)"
