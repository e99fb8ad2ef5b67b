#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: builds bench/kernels/cupti_states.cu with nvcc against the
# toolkit's CUPTI and measures what each CUPTI state costs a launch-bound process
# (cupti_states.py), the shipped injection library from .devbin/ among them.
#   OUT=... ROUNDS=5 SECONDS_PER_PHASE=1.5 bash bench/kernels/states_run.sh
set -uo pipefail
OUT=${OUT:-/tmp/gpulens-states}
mkdir -p "$OUT"
B=${GPULENS_DEVBIN:-$PWD/.devbin}
cuda=${CUDA_HOME:-/usr/local/cuda}
inc=$(dirname "$(find "$cuda"/ -name cupti.h 2>/dev/null | head -1)")
lib=$(find "$cuda"/ -name 'libcupti.so*' 2>/dev/null | sort | head -1)
echo "cupti.h in $inc; libcupti $lib" | tee "$OUT/probe.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$OUT/probe.txt"
nvcc -O2 -std=c++17 -I"$inc" -o "$OUT/cupti_states" bench/kernels/cupti_states.cu -ldl || exit 1
export GPULENS_CUPTI=$lib
python3 bench/kernels/cupti_states.py --bin "$OUT/cupti_states" --inject "$B/libgpulens_kernels.so" \
  --rounds "${ROUNDS:-5}" --seconds "${SECONDS_PER_PHASE:-1.5}" ${STATES:+--states "$STATES"} ${CPU:+--cpu "$CPU"} \
  --raw "$OUT/raw.jsonl" | tee "$OUT/table.txt"
