#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine (.devbin/gpulens and .devbin/libgpulens_kernels.so carried):
# bench/kernel_safety/run.py's jobs, bare and under `gpulens run --kernels`, several at
# once; the manifest and the table land in $OUT. One call; SAFETY_PER_KIND jobs of each
# kind (default 30; 10 kinds on one GPU, nccl added where there are two or more;
# SAFETY_KINDS=a,b for some of them).
#   OUT=... SAFETY_PER_KIND=30 SAFETY_PARALLEL=10 SAFETY_SECONDS=540 bash bench/kernel_safety/device_run.sh
# SAFETY_HOOK=N: the jobs under bench/kernel_cost/launch_hook.cpp (built here) timing
# 1 launch in N (0: counting only) instead of gpulens; nothing needs carrying then.
# SAFETY_LAUNCHES=1: under `gpulens run` as by default (launch counts, no --kernels;
# .devbin/libgpulens_launches.so carried beside .devbin/gpulens).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/kernel-safety}
mkdir -p "$OUT"
kinds=eager,graph,compile,threads,profiler,fork,exit_mid,cupy,exec,starved
(($(nvidia-smi -L | wc -l) >= 2)) && kinds+=,nccl
kinds=${SAFETY_KINDS:-$kinds}
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__)'
  echo "$(nproc) cores, uid $(id -u), kinds $kinds"
} | tee "$OUT/machine.txt"
# One compile first, bare, so that Inductor's cache serves the timed jobs.
python3 bench/kernel_safety/jobs.py compile 0 --steps 10 >"$OUT/warm.log" 2>&1 || tail -5 "$OUT/warm.log"
# The manifest grows job by job in $OUT, so a call cut short keeps what ran.
under=(--gpulens .devbin/gpulens)
if [[ -n ${SAFETY_LAUNCHES:-} ]]; then
  under=(--gpulens .devbin/gpulens --launches)
  echo "under gpulens run as by default: launch counts" | tee -a "$OUT/machine.txt"
elif [[ -n ${SAFETY_HOOK:-} ]]; then
  bash bench/kernel_cost/build_hook.sh /tmp/liblaunch_hook.so || exit 1
  under=(--hook /tmp/liblaunch_hook.so --hook-sample "$SAFETY_HOOK")
  echo "under the launch hook, 1 launch in $SAFETY_HOOK timed" | tee -a "$OUT/machine.txt"
fi
timeout "${SAFETY_SECONDS:-540}" python3 bench/kernel_safety/run.py "${under[@]}" \
  --out "$OUT" --runs /tmp/kernel-safety-runs --per-kind "${SAFETY_PER_KIND:-30}" \
  --parallel "${SAFETY_PARALLEL:-10}" --kinds "$kinds" | grep -v "jobs$" >"$OUT/progress.txt"
python3 bench/kernel_safety/run.py --summary "$OUT/manifest.jsonl" | tee "$OUT/table.txt"
cat "$OUT/progress.txt"
