#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: records new workloads for the diagnosis acceptance tests
# (shapes and sizes the reference traces do not have) under `gpulens record`, one
# phase per kind of problem, with marks. Writes $OUT/diagnosis-h100.trace.jsonl;
# copied to tests/fixtures/traces/, it is committed packed (scripts/fixtures.sh pack).
#   starved          4096^3 matmuls, then 120 ms of CPU spin      -> host_bound
#   gemm_fp16_small  2048^3 fp16 matmul loop                      -> compute_bound
#   spin8            a kernel spinning on 8 SMs for 90 s          -> sm_underused + stalled alert
#   mem_growth       +256 MiB held every second, small matmuls    -> memory_growth alert
#   hold_memory      40 GiB allocated, no kernels                 -> idle_holding_memory
set -uo pipefail
out=${OUT:-/tmp/diag}
mkdir -p "$out"
marks=/tmp/gpulens-diagnosis-marks.jsonl
rm -f "$marks"
w=calibration/build/gpulens-workload
.devbin/gpulens record -q -o "$out/diagnosis-h100.trace.jsonl" --interval 0.1 --marks "$marks" &
rec=$!
sleep 2
"$w" --marks "$marks" --gap 2 --seconds 30 starved gemm_fp16_small 2>&1 | tail -n 3
"$w" --marks "$marks" --gap 2 --seconds 90 spin8 2>&1 | tail -n 2
"$w" --marks "$marks" --gap 2 --seconds 120 mem_growth 2>&1 | tail -n 2
"$w" --marks "$marks" --gap 2 --seconds 45 hold_memory 2>&1 | tail -n 2
sleep 1.5
kill -INT "$rec"
wait "$rec"
ls -la "$out"
