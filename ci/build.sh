#!/usr/bin/env bash
# Installs what is missing (ci/setup.sh), configures with the `ci` preset
# (warnings are errors), builds everything into build/, then sets up the
# cast peers' virtual environment build/peers-venv (ci/setup_peers.sh: never
# fails; without it the peer tests skip).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/setup.sh
cmake --preset ci
cmake --build --preset ci -j "$(nproc)"
bash ci/setup_peers.sh
