#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Records workloads of the labelled corpus (calibration/corpus/expected.json) on a
# GPU machine: each one runs as a job under `gpulens run --interval 0.1`, which
# keeps the recording (with the job's start and end marks: exit code or signal)
# and writes its JSON verdict.
#
#   calibration/corpus/record.sh OUTDIR WORKLOAD...      (corpus.py --list names them)
#
# Environment: GPULENS (default .devbin/gpulens), SCALE (phase length factor,
# default 1), LIMIT_S (seconds a workload may take before it is ended, default 400).
# Prints one line per workload: name, exit status, seconds, recording size.
set -uo pipefail
cd "$(dirname "$0")/../.."
if (($# < 2)); then
  echo "usage: $0 OUTDIR WORKLOAD..." >&2
  exit 2
fi
out=$1
shift
gpulens=${GPULENS:-.devbin/gpulens}
scale=${SCALE:-1}
limit=${LIMIT_S:-400}
mkdir -p "$out/traces"
for w in "$@"; do
  t0=$(date +%s%N)
  # --trace keeps the recording; -q keeps the verdict out of the log (the JSON has it).
  "$gpulens" run -q --interval 0.1 --trace "$out/traces/$w.trace.jsonl" -o "$out/$w.verdict.json" -- \
    timeout -s INT "$limit" python3 calibration/corpus/corpus.py --scale "$scale" "$w" \
    >"$out/$w.log" 2>&1
  rc=$?
  t1=$(date +%s%N)
  size=$(stat -c %s "$out/traces/$w.trace.jsonl" 2>/dev/null || echo 0)
  printf '%-20s exit %-3s %5s s  %8s bytes\n' "$w" "$rc" "$(((t1 - t0) / 1000000000))" "$size"
  tail -n 3 "$out/$w.log" | sed 's/^/    /'
done
