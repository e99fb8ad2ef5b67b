#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the calibration set and the extra phases on a real GPU next to
# `nvidia-smi dmon` (GPM metrics), for comparing the counters with the
# expectations in README.md. Writes marks.jsonl, dmon.txt and log.txt to
# $1 (default: $OUT, else /tmp/gpulens-check).
# Usage: calibration/device_check.sh [OUTDIR] [SECONDS_PER_PHASE]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-${OUT:-/tmp/gpulens-check}}"
secs="${2:-4}"
bin="$here/build/gpulens-workload"
mkdir -p "$out"
# A binary built elsewhere may miss this machine's cuBLAS: rebuild here then.
if [ ! -x "$bin" ] || ldd "$bin" | grep -q 'not found'; then "$here/build.sh" || exit 1; fi
nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit --format=csv | tee "$out/log.txt"
echo "clock: $(date +%s) $(date +%T) tz $(date +%z)" >> "$out/log.txt"
marks="$out/marks.jsonl"; rm -f "$marks"
# 11 + 6 phases of $secs s, 1 s gaps, plus setup: dmon runs a little longer.
n=$(( (secs + 1) * 17 + 20 ))
nvidia-smi dmon -o T -s um --gpm-metrics 1,2,3,5,10,20,21 -c "$n" > "$out/dmon.txt" 2>&1 &
dmon=$!
sleep 2
"$bin" --marks "$marks" --seconds "$secs" --gap 1 all 2>&1 | tee -a "$out/log.txt"
GPULENS_MARKS="$marks" "$bin" --seconds "$secs" --gap 1 \
    spin8 mem_growth hold_memory gemm_fp16_small starved load 2>&1 | tee -a "$out/log.txt"
sleep 2
kill "$dmon" 2>/dev/null; wait "$dmon" 2>/dev/null
# SIGINT mid-phase: the phase must end with an :end mark and exit 130.
"$bin" --marks "$out/sigint.jsonl" --seconds 30 gemm_bf16 2>>"$out/log.txt" &
w=$!; sleep 4; kill -INT "$w"; wait "$w"; echo "sigint rc=$? (want 130)" | tee -a "$out/log.txt"
cat "$out/sigint.jsonl" | tee -a "$out/log.txt"
"$bin" --device 99 idle 2>&1 | tee -a "$out/log.txt"; echo "bad device rc=${PIPESTATUS[0]}" | tee -a "$out/log.txt"
