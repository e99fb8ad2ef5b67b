#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `gpulens report` on the kernel records of long jobs, made without a GPU by
# gpulens_synth_kernels (the injection library's own ChunkBuilder and encoders):
#   day:  24 hours traced in the default windows (2 s every 20 s), 50,000 kernels/s
#   hour: 1 hour traced whole (--kernels-every 0), 50,000 kernels/s
# Each report (text and HTML) is timed ROUNDS times with /usr/bin/time: wall
# seconds and peak RSS. Usage: bench/kernels/report_scale.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
synth="$build/bench/gpulens_synth_kernels"
[[ -x "$synth" && -x "$build/gpulens" ]] || { echo "build $build first (gpulens, gpulens_synth_kernels)" >&2; exit 2; }
"$synth" --hours 24 --every 20 --window 2 --rate 50000 "$work/day.trace.jsonl"
"$synth" --hours 1 --every 0 --rate 50000 "$work/hour.trace.jsonl"
echo "machine: $(nproc) cores, $(uname -m); build: $build"
printf '%-6s %-5s %10s %8s %8s %10s\n' job format file_MiB lines wall_s peak_MiB
for job in day hour; do
  f="$work/$job.trace.jsonl"
  size=$(( $(stat -c %s "$f") / 1048576 ))
  lines=$(grep -c '"x_kernels"' "$f")
  for format in text html; do
    for ((r = 0; r < rounds; r++)); do
      /usr/bin/time -f '%e %M' -o "$work/time" "$build/gpulens" report "$f" --format "$format" \
        -o "$work/out.$format" 2>/dev/null
      read -r wall kib < "$work/time"
      printf '%-6s %-5s %10s %8s %8s %10s\n' "$job" "$format" "$size" "$lines" "$wall" $((kib / 1024))
    done
  done
done
grep -m1 -o 'The GPU was busy[^.]*' "$work/out.text" || true
