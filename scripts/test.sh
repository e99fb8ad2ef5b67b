#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
# The release preset builds too (-O3 warns where -O0 does not; warnings are errors),
# and its shipped binaries are checked as shipped: glibc floor and the package
# (lintian, install paths). The suite itself runs once, above, so the release build
# leaves out the test binaries (tests/all): they are built at -O1 there, which adds
# no -O3 warning of shipped code, and were a third of this step's compiling.
if [[ "${GPULENS_SKIP_RELEASE:-}" != "1" && "$preset" != "release" ]]; then
  cmake --preset release >/dev/null
  mapfile -t release_targets < <(ninja -C build/release -t query all |
    awk '/^  input:/ { on = 1; next } /^  outputs:/ { on = 0 } on { print $1 }' | grep -vx 'tests/all')
  ((${#release_targets[@]} > 0)) || { echo "test.sh: no release targets found" >&2; exit 1; }
  cmake --build --preset release -j "$(nproc)" --target "${release_targets[@]}"
  ctest --preset release -j "$(nproc)" --timeout 300 -R '^(static_binaries|install_package)$'
fi
# Bounded fuzzing of every reader of outside input (about 2 minutes with the
# build; scripts/fuzz.sh). GPULENS_SKIP_FUZZ=1 leaves it out of a local run.
if [[ "${GPULENS_SKIP_FUZZ:-}" != "1" ]]; then
  scripts/fuzz.sh
fi
# The sanitiser build runs the part of the suite that reads outside input and
# serves HTTP (README: "Hardening"): gpulens_input_tests, listed in
# tests/CMakeLists.txt. The full suite under ASan does not fit CI.
if [[ "${GPULENS_SKIP_ASAN:-}" != "1" && "$preset" != "asan" ]]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$(nproc)" --target gpulens_input_tests gpulens gpulens-serve
  # Leak checks off: detached threads (signal relay, stdout pumps) outlive main
  # by design; ASan's memory errors and UBSan stay fatal.
  # KernelsRunHardened loads the injection library into a job that is not built
  # with ASan, which an ASan build of the library cannot do.
  ASAN_OPTIONS=detect_leaks=0 ctest --preset asan -j "$(nproc)" --timeout 600 -L '^input$' \
    -E '^input:KernelsRunHardened\.'
fi

