#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (fuzz/) with clang + ASan/UBSan and runs each for
# a bounded time on its committed seed corpus and dictionary. A crash, leak or
# hang (> 10 s on one input) fails the script and leaves the input under
# build/fuzz/artifacts/: turn it into a regression test.
#   GPULENS_FUZZ_BUDGET   seconds for all targets together (default 90), shared evenly
#   GPULENS_FUZZ_SECONDS  seconds per target instead (overrides the share)
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(trace marks kernels config web_config http_head procfs pod_resources)
budget=${GPULENS_FUZZ_BUDGET:-90}
seconds=${GPULENS_FUZZ_SECONDS:-$((budget / ${#targets[@]}))}
build=build/fuzz
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build" -j "$(nproc)"
mkdir -p "$build/artifacts"
status=0
for target in "${targets[@]}"; do
  work="$build/corpus/$target"  # new inputs go here; the committed seeds stay as they are
  mkdir -p "$work"
  dict=()
  [[ -f fuzz/dict/$target.dict ]] && dict=(-dict="fuzz/dict/$target.dict")
  log="$build/$target.log"
  if "$build/fuzz_$target" "$work" "fuzz/corpus/$target" "${dict[@]}" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz $target: ok, $runs runs in ${seconds}s"
  else
    echo "fuzz $target: FAILED (see $log)"
    tail -30 "$log"
    status=1
  fi
done
exit $status
