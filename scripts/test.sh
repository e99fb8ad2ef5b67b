#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quick start, command 2: install what is needed, build everything (warnings are
# errors) and run every test. No GPU is needed. CI runs exactly this (.ci/run).
#
#   scripts/test.sh              every step below, in order, each timed
#   scripts/test.sh step NAME    one step alone (after setup and the debug build)
#
# CI's machine has 2 cores and 90 minutes. The whole run must stay well inside
# that: each step prints its time, the run prints a table of them at the end, and
# a run that passes GPULENS_TEST_BUDGET_S (default 3600 s) is stopped in the step
# where it happens, with that step named, instead of running on into CI's limit.
# GPULENS_TEST_BUDGET_S=0 turns the budget off (a slower machine of your own).
set -euo pipefail
cd "$(dirname "$0")/.."

preset=${GPULENS_TEST_PRESET:-debug}

# The ctest names of the debug suite and of the ASan subset, sorted: a change
# that drops or renames a test shows here and fails the run, so a faster CI can
# never be bought by running less. GPULENS_UPDATE_TEST_NAMES=1 rewrites the file
# after a deliberate change (commit it with that change).
check_test_names() {
  local which=$1 list=tests/ctest-names.txt
  local now
  now=$(ctest --preset "$which" -N "${@:2}" | sed -n 's/^ *Test *#[0-9]*: //p' | LC_ALL=C sort |
    sed "s/^/$which /")
  if [[ "${GPULENS_UPDATE_TEST_NAMES:-}" == "1" ]]; then
    { grep -v "^$which " "$list" 2>/dev/null || true; echo "$now"; } | LC_ALL=C sort >"$list.tmp"
    mv "$list.tmp" "$list"
    echo "test.sh: $list rewritten for $which"
    return 0
  fi
  if ! diff -u <(grep "^$which " "$list") <(echo "$now") >&2; then
    echo "test.sh: the $which tests differ from $list (- gone, + new); if that is" \
      "meant, rerun with GPULENS_UPDATE_TEST_NAMES=1 and commit the list" >&2
    return 1
  fi
  echo "test.sh: $(echo "$now" | wc -l) $which tests, as listed in $list"
}

# ctest ARGS...: under CI (CI=true) a test that skipped itself (exit 77: a tool
# missing) fails the step. scripts/setup.sh installs every tool a test needs, so on
# CI a skip means a tool went missing, and it must not read as a pass.
ctest_no_skips() {
  local log rc
  log=$(mktemp)
  ctest "$@" | tee "$log"
  rc=${PIPESTATUS[0]}
  if [[ "${CI:-}" == true ]] && grep -q "tests did not run" "$log"; then
    echo "test.sh: tests skipped under CI (above): scripts/setup.sh should have installed their tools" >&2
    rc=1
  fi
  rm -f "$log"
  return "$rc"
}

run_step() {
  case $1 in
    setup) scripts/setup.sh --tests ;;
    build)
      cmake --preset "$preset" >/dev/null
      cmake --build --preset "$preset" -j "$(nproc)"
      ;;
    format) scripts/check-format.sh ;;
    suite)
      if [[ "$preset" == debug ]]; then check_test_names debug; fi
      ctest_no_skips --preset "$preset" -j "$(nproc)" --timeout 300
      ;;
    release)
      # The release preset builds too (-O3 warns where -O0 does not; warnings are
      # errors), and its shipped binaries are checked as shipped: glibc floor and
      # the package (lintian, install paths). The suite itself runs once, in the
      # build step, so this leaves out the test binaries (tests/all): built at -O1
      # here they add no -O3 warning of shipped code.
      # Tests and benchmarks on: scripts/run.sh configures this folder without them.
      cmake --preset release -DGPULENS_BUILD_TESTS=ON -DGPULENS_BUILD_BENCH=ON >/dev/null
      local targets
      mapfile -t targets < <(ninja -C build/release -t query all |
        awk '/^  input:/ { on = 1; next } /^  outputs:/ { on = 0 } on { print $1 }' | grep -vx 'tests/all')
      ((${#targets[@]} > 0)) || { echo "test.sh: no release targets found" >&2; return 1; }
      cmake --build --preset release -j "$(nproc)" --target "${targets[@]}"
      ctest_no_skips --preset release -j "$(nproc)" --timeout 300 -R '^(static_binaries|install_package)$'
      ;;
    fuzz)
      # Bounded fuzzing of every reader of outside input (scripts/fuzz.sh).
      scripts/fuzz.sh
      ;;
    asan)
      # The part of the suite that reads outside input or serves HTTP, under
      # ASan + UBSan (README: "Hardening"): gpulens_input_tests, listed in
      # tests/CMakeLists.txt. The full suite under ASan does not fit CI.
      cmake --preset asan >/dev/null
      cmake --build --preset asan -j "$(nproc)" --target gpulens_input_tests gpulens gpulens-serve
      check_test_names asan -L '^input$'
      # Leak checks off: detached threads (signal relay, stdout pumps) outlive main
      # by design; ASan's memory errors and UBSan stay fatal. KernelsRunHardened
      # loads the injection library into a job that is not built with ASan, which
      # an ASan build of the library cannot do.
      ASAN_OPTIONS=detect_leaks=0 ctest_no_skips --preset asan -j "$(nproc)" --timeout 600 -L '^input$' \
        -E '^input:KernelsRunHardened\.'
      ;;
    *)
      echo "test.sh: no step '$1' (setup build format suite release fuzz asan)" >&2
      return 2
      ;;
  esac
}

if [[ "${1:-}" == step ]]; then
  [[ $# -eq 2 ]] || { echo "usage: scripts/test.sh step NAME" >&2; exit 2; }
  run_step "$2"
  exit
fi
[[ $# -eq 0 ]] || { echo "usage: scripts/test.sh [step NAME]" >&2; exit 2; }

steps=(setup build format suite)
# GPULENS_SKIP_RELEASE, _FUZZ, _ASAN=1 leave a step out of a local run.
if [[ "${GPULENS_SKIP_RELEASE:-}" != "1" && "$preset" != "release" ]]; then steps+=(release); fi
if [[ "${GPULENS_SKIP_FUZZ:-}" != "1" ]]; then steps+=(fuzz); fi
if [[ "${GPULENS_SKIP_ASAN:-}" != "1" && "$preset" != "asan" ]]; then steps+=(asan); fi

budget=${GPULENS_TEST_BUDGET_S:-3600}
[[ $budget =~ ^[0-9]+$ ]] || { echo "test.sh: GPULENS_TEST_BUDGET_S must be whole seconds" >&2; exit 2; }
started=$SECONDS
table=()
print_table() {
  local row
  echo "test.sh: time per step (budget ${budget} s, 0 = none)"
  for row in "${table[@]}"; do echo "  $row"; done
  echo "  total  $((SECONDS - started)) s"
}
for step in "${steps[@]}"; do
  step_started=$SECONDS
  echo "== test.sh: $step (at $((SECONDS - started)) s)"
  status=0
  if ((budget > 0)); then
    # The step runs in its own process group, which timeout ends whole when the
    # budget runs out: no compiler or test outlives the run.
    timeout -k 30 "$((budget - (SECONDS - started)))" "$0" step "$step" || status=$?
  else
    "$0" step "$step" || status=$?
  fi
  table+=("$(printf '%-7s %5d s' "$step" $((SECONDS - step_started)))")
  if ((budget > 0 && SECONDS - started >= budget)); then
    print_table
    echo "test.sh: FAILED: over the time budget of ${budget} s in step '$step'; CI's limit" \
      "is 5400 s. Find what grew (the table above, README: \"Tests and CI time\")." >&2
    exit 1
  fi
  if ((status != 0)); then
    print_table
    echo "test.sh: FAILED in step '$step' (exit $status)" >&2
    exit "$status"
  fi
done
print_table
