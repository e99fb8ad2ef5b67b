#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: records the calibration workloads with gpulens while
# nvidia-smi dmon prints the same GPM SM activity, then checks every phase.
# Expects the binaries in .devbin/ (gpulens, calibration_check) and
# calibration/build/gpulens-workload; writes everything under $OUT (or /tmp/calib).
# A recording copied into examples/ or tests/fixtures/ is committed packed when over
# 300 KB (scripts/fixtures.sh pack).
set -uo pipefail
out=${OUT:-/tmp/calib}
mkdir -p "$out"
export TZ=UTC
seconds=${CALIB_SECONDS:-10}
marks=/tmp/gpulens-calibration-marks.jsonl
rm -f "$marks"
nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
.devbin/gpulens record -q -o "$out/calibration.trace.jsonl" --interval 0.1 --marks "$marks" &
rec=$!
nvidia-smi dmon -d 1 --gpm-metrics 2 -o DT >"$out/dmon.txt" 2>&1 &
dmon=$!
sleep 2
calibration/build/gpulens-workload --marks "$marks" --seconds "$seconds" --gap 1 all 2>&1 | tail -n 20
sleep 1.5
kill -INT "$rec"
kill "$dmon"
wait "$rec" 2>/dev/null
head -n 4 "$out/dmon.txt"
.devbin/calibration_check "$out/calibration.trace.jsonl" --dmon "$out/dmon.txt" \
  ${DMON_COLUMN:+--dmon-column "$DMON_COLUMN"} | tee "$out/calibration-table.txt"
