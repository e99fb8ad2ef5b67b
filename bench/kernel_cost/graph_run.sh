#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: graph_moves.py, each variant REPS times (one process
# each); one JSON line per process in $OUT/graph-moves.jsonl.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/kernel-cost}
mkdir -p "$OUT"
cuda=${CUDA_HOME:-/usr/local/cuda}
inc=$(dirname "$(find "$cuda"/ -name cupti.h 2>/dev/null | head -1)")
g++ -O2 -shared -fPIC -std=c++17 -I"$inc" -o "$OUT/libcupti_toggle.so" bench/kernel_cost/cupti_toggle.cpp -ldl || exit 1
for rep in $(seq 1 "${REPS:-3}"); do
  for v in ${VARIANTS:-tq td tdt attached eager}; do
    timeout 120 python3 bench/kernel_cost/graph_moves.py --variant "$v" --toggle "$OUT/libcupti_toggle.so" \
      2>>"$OUT/graph-moves.stderr" | tee -a "$OUT/graph-moves.jsonl"
  done
done
