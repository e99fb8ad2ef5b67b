#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine (bench/kernels/pack.sh fills .devbin/): graph_job.py
# under `gpulens run --kernels` with 1-s windows every 3 s, RUNS times, and once
# without gpulens; one line per run (exit status, the job's own line, what the
# report says of kernels) in $OUT/graph-runs.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpulens-graph}
mkdir -p "$OUT"
B=${GPULENS_DEVBIN:-$PWD/.devbin}
{
  python3 bench/kernels/graph_job.py --seconds "${SECONDS_PER_RUN:-15}" >"$OUT/bare.log" 2>&1
  echo "bare: exit $? $(tail -1 "$OUT/bare.log")"
  for i in $(seq 1 "${RUNS:-4}"); do
    "$B/gpulens" run --kernels --kernels-window 1 --kernels-every 3 -o "$OUT/graph-$i.txt" \
      -- python3 bench/kernels/graph_job.py --seconds "${SECONDS_PER_RUN:-15}" >"$OUT/graph-$i.log" 2>&1
    rc=$?
    echo "gpulens run --kernels #$i: exit $rc $(grep graph_job: "$OUT/graph-$i.log" | tail -1)"
    grep -m2 -i "kernel" "$OUT/graph-$i.txt" | sed 's/^/    /'
  done
} | tee "$OUT/graph-runs.txt"
