#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: the agent keeps history while known workloads run, and
# `gpulens report --from/--to` over that history is set beside `gpulens report` on a
# recording of the same minutes taken at the same time by `gpulens record`.
#   idle 8 s, gemm_bf16 20 s, h2d_pcie 20 s (gaps of 2 s)
# Both verdicts should name the same phases; the funnel figures should agree within a
# point or two (history is sampled at 1 s, the recording at 1 s too, by another process).
# Expects .devbin/ (gpulens, gpulens-serve, lib/) and calibration/build/gpulens-workload;
# writes $OUT/history-report.txt (or /tmp/history-report).
set -uo pipefail
out=${OUT:-/tmp/history-report}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
db=/tmp/gpulens-history-check.db
rm -f "$db" "$db"-*
w=calibration/build/gpulens-workload
{
  .devbin/gpulens serve --listen 127.0.0.1:9477 --history "$db" --interval 1 --no-procs \
    --log-level warning &
  serve=$!
  .devbin/gpulens record -q -o /tmp/history-check.trace.jsonl --interval 1 --no-procs &
  rec=$!
  sleep 3
  from=$(date +%s)
  "$w" --gap 2 --seconds 8 idle 2>&1 | tail -n 1
  "$w" --gap 2 --seconds 20 gemm_bf16 h2d_pcie 2>&1 | tail -n 2
  echo "live /metrics during the run, a few series:"
  curl -s http://127.0.0.1:9477/metrics | grep -E '^gpulens_(sm_active|gpu_utilization)' | head -n 4
  to=$(date +%s)
  sleep 2
  kill -INT "$rec"
  kill -TERM "$serve"
  wait "$rec" "$serve" 2>/dev/null
  echo
  echo "== gpulens report --from $from --to $to --db $db"
  .devbin/gpulens report --from "$from" --to "$to" --db "$db"
  echo
  echo "== gpulens report on the recording of the same run"
  .devbin/gpulens report /tmp/history-check.trace.jsonl
} 2>&1 | tee "$out/history-report.txt"
