#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: issue 51's launch-hook experiment (launch_hook.cpp), one
# call, about six minutes.
#  1. paired: in one process under the hook, slots alternating the driver's
#     cuLaunchKernel called directly, the wrapper passing on, counting, and timing
#     1 in $HOOK_PAIRED_SAMPLE (launch_cost p; torch_launches.py --paired for eager ops and CUDA-graph
#     replays), $HOOK_CYCLES cycles.
#  2. cost: launch_cost (empty kernels, 1 and 4 threads) and torch_launches.py
#     (eager add_) in processes of four kinds, alternating in a random order each
#     round: n alone, c CUPTI callbacks on the launch calls only, h under the hook
#     counting, s under the hook timing 1 launch in $HOOK_SAMPLE.
#  3. attribution: hook_attrib.py, the hook's top kernels against torch.profiler's
#     trace of the same steps, from a process of their own (at each sampling rate)
#     and from one process (at the first rate).
#  4. safety: graph_job.py (graph replays and eager ops on two threads, output
#     checked) under the hook timing every launch and 1 in $HOOK_SAMPLE.
#   OUT=... HOOK_CYCLES=30 HOOK_ROUNDS=4 HOOK_SAMPLE=100 bash bench/kernel_cost/hook_run.sh
# Also: HOOK_PHASES (any of paired cost attrib safety), HOOK_PAIRED_SAMPLE (the paired
# S slots' rate, default 100), HOOK_ATTRIB_RATES (default "$HOOK_SAMPLE 20"), and
# HOOK_GATE=1 (launch_hook.cpp's gate on timed launches), which hangs jobs whose launch
# loads a kernel lazily (bench/results/launch-hook-h200-2026-11-29): only for gate_probe.sh.
# The device tool returns a limited number of files: give OUT outside its $OUT and tar
# it there.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/hook}
mkdir -p "$OUT"
here=bench/kernel_cost
cuda=${CUDA_HOME:-/usr/local/cuda}
inc=$(dirname "$(find "$cuda"/ -name cupti.h 2>/dev/null | head -1)")
cupti=$(find "$cuda"/ -name 'libcupti.so*' 2>/dev/null | sort | head -1)
rounds=${HOOK_ROUNDS:-4}
rate=${HOOK_SAMPLE:-100}
cycles=${HOOK_CYCLES:-30}
phases=${HOOK_PHASES:-paired cost attrib safety}
attrib_rates=${HOOK_ATTRIB_RATES:-$rate 20}
export LAUNCH_HOOK_GATE=${HOOK_GATE:-0} HOOK_PAIRED_SAMPLE=${HOOK_PAIRED_SAMPLE:-100}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "cupti.h in $inc; libcupti $cupti; $(nvcc --version | tail -1); $(nproc) cores; uid $(id -u)"
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
} | tee "$OUT/machine.txt"
bash $here/build_hook.sh "$OUT/liblaunch_hook.so" || exit 1
nvcc -O2 -std=c++17 -cudart shared -I"$inc" -o "$OUT/launch_cost" $here/launch_cost.cu -ldl || exit 1
objdump -d "$OUT/liblaunch_hook.so" --no-show-raw-insn | awk '/<dlsym>:/,/^$/' >"$OUT/dlsym.txt"
export LAUNCH_COST_CUPTI=$cupti
pin="taskset -c 2-7"
command -v taskset >/dev/null || pin=""
hook=$OUT/liblaunch_hook.so
run_as() {  # MODE CMD...: start CMD the way MODE says
  local m=$1; shift
  case $m in
    h) LD_PRELOAD=$hook LAUNCH_HOOK_SAMPLE=0 "$@" ;;
    s) LD_PRELOAD=$hook LAUNCH_HOOK_SAMPLE=$rate "$@" ;;
    *) "$@" ;;
  esac
}
has() { [[ " $phases " == *" $1 "* ]]; }
echo "gate $LAUNCH_HOOK_GATE, paired sample 1 in $HOOK_PAIRED_SAMPLE, phases: $phases" | tee -a "$OUT/machine.txt"
has paired && echo "== paired ($(date +%T))" >&2
has paired && for threads in 1 4; do
  LD_PRELOAD=$hook $pin "$OUT/launch_cost" p "$threads" "$cycles" 150 >>"$OUT/paired-$threads.jsonl" 2>>"$OUT/err.txt"
done
has paired && for b in eager graph; do
  LD_PRELOAD=$hook $pin python3 $here/torch_launches.py p --paired --bench $b --slots "$cycles" --slot 0.2 \
    >>"$OUT/paired-torch-$b.jsonl" 2>>"$OUT/err.txt"
done
has cost && echo "== cost ($(date +%T))" >&2
has cost && for r in $(seq "$rounds"); do
  for threads in 1 4; do
    for m in $(echo nchs | fold -w1 | shuf); do
      run_as "$m" $pin "$OUT/launch_cost" "$m" "$threads" 10 150 >>"$OUT/launch-$threads.jsonl" 2>>"$OUT/err.txt"
    done
  done
  for m in $(echo nhs | fold -w1 | shuf); do
    run_as "$m" $pin python3 $here/torch_launches.py "$m" >>"$OUT/torch-add.jsonl" 2>>"$OUT/err.txt"
  done
done
has attrib && echo "== attribution ($(date +%T))" >&2
has attrib && for scale in 1 16; do
  # The truth from a process of its own, so that CUPTI's launch hooks do not lengthen
  # the host's side of the hook's timed launches; then the same steps under the hook.
  python3 $here/hook_attrib.py "$OUT" --mode trace --steps 3000 --scale $scale --tag "trace-$scale" \
    2>>"$OUT/err.txt" || echo "trace at scale $scale failed" >&2
  for r in $attrib_rates; do
    LD_PRELOAD=$hook LAUNCH_HOOK_SAMPLE=$r python3 $here/hook_attrib.py "$OUT" --mode hook --steps 3000 \
      --scale $scale --tag "hook-$scale-$r" 2>>"$OUT/err.txt" || echo "hook at scale $scale 1/$r failed" >&2
    python3 $here/hook_attrib.py --compare "$OUT/trace-$scale-trace-kernels.json" "$OUT/hook-$scale-$r-hook.json" \
      --tag "apart-$scale-$r" >>"$OUT/attrib.jsonl" 2>>"$OUT/err.txt"
  done
  # And once in one process, under the trace, as the first runs did.
  r=${attrib_rates%% *}
  LD_PRELOAD=$hook LAUNCH_HOOK_SAMPLE=$r python3 $here/hook_attrib.py "$OUT" --mode both --steps 3000 \
    --scale $scale --tag "together-$scale-$r" >>"$OUT/attrib.jsonl" 2>>"$OUT/err.txt" ||
    echo "together at scale $scale 1/$r failed" >&2
done
has safety && echo "== safety ($(date +%T))" >&2
has safety && for r in 1 "$rate" 1 "$rate"; do
  LD_PRELOAD=$hook LAUNCH_HOOK_SAMPLE=$r LAUNCH_HOOK_OUT=$OUT/graph-$r-tally.json \
    python3 bench/kernels/graph_job.py --seconds 15 >>"$OUT/graph.txt" 2>&1
  echo "{\"sample\": $r, \"exit\": $?}" >>"$OUT/graph.jsonl"
done
python3 $here/hook_table.py "$OUT" | tee "$OUT/table.txt"
grep -v -i warn "$OUT/err.txt" | tail -5
rm -f "$OUT/launch_cost"
