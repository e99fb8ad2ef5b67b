#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine (.devbin from bench/kernels/pack.sh): one training job as
# long as a device call allows under `gpulens run --kernels` at the default trace
# windows, then `gpulens report` on its recording from another directory, timed.
# Prints the run's exit, the recording's size and longest line, the report's time
# and peak RSS, and the report's kernel view; keeps the reports and the recording
# (xz) under $OUT/job and $OUT/elsewhere.
#   OUT=DIR LONG_SECONDS=450 bash bench/kernels/long_job.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?OUT must name the output folder}
B=${GPULENS_DEVBIN:-$PWD/.devbin}
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
job=$out/job
trace=$(mktemp -d)/trace.jsonl
mkdir -p "$job" "$out/elsewhere"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
t0=$(date +%s)
"$B/gpulens" run --kernels -o "$job/report.txt" --trace "$trace" -- \
  python3 examples/train_gpt.py --seconds "${LONG_SECONDS:-450}" --nvtx >"$job/job.log" 2>&1
echo "gpulens run --kernels: exit $? after $(($(date +%s) - t0)) s"
echo "recording: $(stat -c %s "$trace") bytes, $(wc -l <"$trace") lines, longest line" \
  "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$trace") bytes"
cd "$out/elsewhere" || exit 1
/usr/bin/time -f "gpulens report: %e s, peak RSS %M KiB" \
  "$B/gpulens" report "$trace" -o report.txt 2>time.txt
echo "gpulens report: exit $?"
cat time.txt
sed -n '/Where the GPU time went/,+30p' report.txt
xz -T4 -c "$trace" >"$job/trace.jsonl.xz"
