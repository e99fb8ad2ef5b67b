#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: libgpulens_launches.so as `gpulens run` loads it (on by
# default), one call of about four minutes. Needs .devbin/gpulens and
# .devbin/libgpulens_launches.so beside it (carried; any build of gpulens).
#  1. counts: known_launches.py under `gpulens run -o report.json`: the whole job
#     profiled by torch.profiler, whose kernel launches by name the report's must equal;
#     CUDA-graph replays, whose count the report's graph launches must equal; the same
#     with --kernels too (CUPTI in the same processes); a job run as user nobody.
#  2. cost: bench/kernel_cost/launch_cost.cu's empty-kernel launches from 1 and 4
#     threads, in processes alternating, in a random order each round, between n (alone),
#     g (under libgpulens_launches.so, counting and writing its record every 10 s) and h
#     (under bench/kernel_cost/launch_hook.cpp counting: the same launch path, whose
#     cost was measured in paired slots in one process), $SLOTS slots of $SLOT_MS each.
#   OUT=/tmp/lc ROUNDS=8 bash bench/launch_count/device_run.sh; then tar $OUT
#  3. paired: launch_cost's paired slots in one process (mode p), with
#     libgpulens_launches.so first in LD_PRELOAD and the bench hook after it only to
#     hand the harness the driver's own cuLaunchKernel: slots of the driver called
#     directly (D) against slots through libgpulens_launches.so's cuLaunchKernel, which
#     counts (P, C and S alike: the bench hook's modes do not reach it), $CYCLES cycles.
# PHASES (default "counts cost paired") picks the parts.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lc}
ROUNDS=${ROUNDS:-8}
SLOTS=${SLOTS:-10}
SLOT_MS=${SLOT_MS:-200}
PHASES=${PHASES:-counts cost paired}
CYCLES=${CYCLES:-100}
mkdir -p "$OUT"
bin=$PWD/.devbin
here=bench/launch_count
cuda=${CUDA_HOME:-/usr/local/cuda}
inc=$(dirname "$(find "$cuda"/ -name cupti.h 2>/dev/null | head -1)")
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "$(nvcc --version | tail -1); $(nproc) cores"
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
} | tee "$OUT/machine.txt"

run_job() {  # NAME [gpulens run options] -- CMD...: the job under gpulens run
  local name=$1
  shift
  "$bin/gpulens" run -q -o "$OUT/$name.report.json" --trace "$OUT/$name.trace.jsonl" "$@" \
    >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
  echo "$name: exit $?" | tee -a "$OUT/exits.txt"
}
if [[ " $PHASES " == *" counts "* ]]; then
run_job profiled -- python3 $here/known_launches.py profiled 20000 50
run_job graphs -- python3 $here/known_launches.py graphs 5000
run_job kernels --kernels -- python3 $here/known_launches.py graphs 2000
if command -v setpriv >/dev/null; then
  chmod -R a+rwX "$OUT" "$bin"
  setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp \
    "$bin/gpulens" run -q -o "$OUT/nobody.report.json" -- python3 $here/known_launches.py graphs 100 \
    >"$OUT/nobody.stdout" 2>"$OUT/nobody.stderr"
  echo "nobody: exit $?" | tee -a "$OUT/exits.txt"
fi
fi
if [[ " $PHASES " != *" cost "* && " $PHASES " != *" paired "* ]]; then
  python3 $here/check.py "$OUT" | tee "$OUT/summary.txt"
  exit
fi

# 2. cost
nvcc -O2 -std=c++17 -cudart shared -I"$inc" -o "$OUT/launch_cost" bench/kernel_cost/launch_cost.cu -ldl || exit 1
CUDA_INCLUDE="$cuda/include" bash bench/kernel_cost/build_hook.sh "$OUT/liblaunch_hook.so" || exit 1
pin="taskset -c 2-7"
command -v taskset >/dev/null || pin=""
if [[ " $PHASES " == *" paired "* ]]; then
  mkdir -p "$OUT/records/paired"
  for threads in 1 4; do
    GPULENS_LAUNCHES_DIR="$OUT/records/paired" HOOK_PAIRED_SAMPLE=0 \
      LD_PRELOAD="$bin/libgpulens_launches.so:$OUT/liblaunch_hook.so" \
      $pin "$OUT/launch_cost" p "$threads" "$CYCLES" 200 >"$OUT/paired.$threads.jsonl"
  done
fi
[[ " $PHASES " == *" cost "* ]] || ROUNDS=0
for round in $(seq 1 "$ROUNDS"); do
  for threads in 1 4; do
    for kind in $(printf 'n\ng\nh\n' | shuf); do
      if [[ $kind == g ]]; then
        mkdir -p "$OUT/records/r$round.t$threads"
        GPULENS_LAUNCHES_DIR="$OUT/records/r$round.t$threads" LD_PRELOAD="$bin/libgpulens_launches.so" \
          $pin "$OUT/launch_cost" g "$threads" "$SLOTS" "$SLOT_MS" >>"$OUT/cost.$kind.$threads.jsonl"
      elif [[ $kind == h ]]; then
        LD_PRELOAD="$OUT/liblaunch_hook.so" LAUNCH_HOOK_SAMPLE=0 \
          $pin "$OUT/launch_cost" h "$threads" "$SLOTS" "$SLOT_MS" >>"$OUT/cost.$kind.$threads.jsonl"
      else
        $pin "$OUT/launch_cost" n "$threads" "$SLOTS" "$SLOT_MS" >>"$OUT/cost.$kind.$threads.jsonl"
      fi
    done
  done
done
python3 $here/check.py "$OUT" | tee "$OUT/summary.txt"
