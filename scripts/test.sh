#!/usr/bin/env bash
# Quick start, command 2: install what is needed, build everything (warnings are
# errors) and run every test. No GPU is needed. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
preset=${GPULENS_TEST_PRESET:-debug}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
scripts/check-format.sh
ctest --preset "$preset" -j "$(nproc)" --timeout 300
