#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: what CUPTI costs a launch in each state, in alternating
# slots of one process (launch_slots.cu, torch_slots.py, cupti_toggle.cpp), then
# analyze.py's table. One call, about four minutes.
#   OUT=... KC_CYCLES=40 KC_SLOT_MS=150 bash bench/kernel_cost/device_run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/kernel-cost}
mkdir -p "$OUT"
here=bench/kernel_cost
cuda=${CUDA_HOME:-/usr/local/cuda}
inc=$(dirname "$(find "$cuda"/ -name cupti.h 2>/dev/null | head -1)")
toolkit_cupti=$(find "$cuda"/ -name 'libcupti.so*' 2>/dev/null | sort | head -1)
cycles=${KC_CYCLES:-40}
slot=${KC_SLOT_MS:-150}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "cupti.h in $inc; toolkit libcupti $toolkit_cupti; nvcc $(nvcc --version | tail -1)"
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
  nproc
} | tee "$OUT/machine.txt"
g++ -O2 -shared -fPIC -std=c++17 -I"$inc" -o "$OUT/libcupti_toggle.so" $here/cupti_toggle.cpp -ldl || exit 1
nvcc -O2 -std=c++17 -o "$OUT/launch_slots" $here/launch_slots.cu -L"$OUT" -lcupti_toggle \
  -Xlinker -rpath,"$OUT" || exit 1
pin="taskset -c 2-7"
command -v taskset >/dev/null || pin=""
export GPULENS_CUPTI=$toolkit_cupti
step() { echo "== $* ($(date +%T))" >&2; }
step "launch, 1 thread"
$pin "$OUT/launch_slots" 1 "$cycles" "$slot" dqt 1 >"$OUT/launch-1.jsonl"
step "launch, 4 threads"
$pin "$OUT/launch_slots" 4 "$cycles" "$slot" dqt 2 >"$OUT/launch-4.jsonl"
step "never vs finalised, 8 processes each"
for i in 1 2 3 4 5 6 7 8; do
  $pin "$OUT/launch_slots" 1 10 "$slot" n >"$OUT/proc-n-$i.jsonl"
  $pin "$OUT/launch_slots" 1 10 "$slot" f >"$OUT/proc-f-$i.jsonl"
done
unset GPULENS_CUPTI  # torch_slots uses the libcupti torch ships, if any
for b in eager graph gemm; do
  step "torch $b"
  c=30; s=0.2
  [ "$b" = gemm ] && { c=16; s=0.5; }
  $pin python3 $here/torch_slots.py --bench $b --toggle "$OUT/libcupti_toggle.so" --cycles $c --slot $s \
    >"$OUT/torch-$b.jsonl" || echo "torch $b failed" >&2
done
python3 $here/analyze.py "$OUT"/launch-*.jsonl "$OUT"/proc-*.jsonl "$OUT"/torch-*.jsonl | tee "$OUT/table.txt"
