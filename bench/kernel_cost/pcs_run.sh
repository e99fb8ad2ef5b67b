#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: what CUPTI's PC sampling costs a kernel launch and what
# its samples attribute (pc_sampling.cu), in processes that alternate the modes
# n (no CUPTI), p (sampling on) and s (enabled, stopped) round by round, then
# pcs_table.py's table. About three minutes.
#   OUT=... PCS_ROUNDS=6 PCS_MODES=nps bash bench/kernel_cost/pcs_run.sh   (modes: pc_sampling.cu's)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/pcs}
mkdir -p "$OUT"
here=bench/kernel_cost
cuda=${CUDA_HOME:-/usr/local/cuda}
inc=$(dirname "$(find "$cuda"/ -name cupti_pcsampling.h 2>/dev/null | head -1)")
lib=$(dirname "$(find "$cuda"/ -name 'libcupti.so*' 2>/dev/null | sort | head -1)")
rounds=${PCS_ROUNDS:-6}
modes=${PCS_MODES:-nps}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "cupti headers $inc, libcupti in $lib, $(nvcc --version | tail -1), $(nproc) cores, uid $(id -u)"
} | tee "$OUT/machine.txt"
nvcc -O2 -std=c++17 -I"$inc" -o "$OUT/pc_sampling" $here/pc_sampling.cu -L"$lib" -lcupti -lcuda \
  -Xlinker -rpath,"$lib" || exit 1
pin="taskset -c 2-7"
command -v taskset >/dev/null || pin=""
for threads in 1 4; do
  for r in $(seq "$rounds"); do
    for m in $(echo "$modes" | fold -w1 | shuf); do
      $pin "$OUT/pc_sampling" "$m" "$threads" 10 150 20 >>"$OUT/pcs-$threads.jsonl" 2>>"$OUT/pcs.err"
    done
  done
done
# Attribution at a finer period too (2^16 cycles, ~33 us on an H200).
[[ $modes == *p* ]] && "$OUT/pc_sampling" p 1 1 50 16 >>"$OUT/pcs-1.jsonl" 2>>"$OUT/pcs.err"
python3 $here/pcs_table.py "$OUT"/pcs-*.jsonl | tee "$OUT/table.txt"
tail -5 "$OUT/pcs.err"
