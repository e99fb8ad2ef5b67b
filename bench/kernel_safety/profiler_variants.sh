#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 51: which part of `gpulens run --kernels` makes a job's own torch.profiler fail
# at its end ("inserted.second INTERNAL ASSERT FAILED", collection.cpp)? The profiler
# kind of jobs.py under variants that each take one part away, PER jobs each, all at
# once; one summary line per variant. Runs on the GPU machine with .devbin carried.
#   OUT=DIR PER=12 bash bench/kernel_safety/profiler_variants.sh [VARIANT...]
# Variants:
#   windows   as shipped: windows of 0.5 s every 1.5 s
#   late      the first window 900 s in: CUPTI's activity API never touched by us
#   no_nvtx   windows, but NVTX_INJECTION64_PATH names no library (no CUPTI NVTX hook)
#   kernels   windows with the kernel kind only (no copies, memsets, syncs, NVTX)
#   kinds=A,B windows with these kinds only (kernel, memcpy, memset, sync, nvtx)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
out=${OUT:?OUT must name the output folder}
per=${PER:-12}
variants=("$@")
((${#variants[@]})) || variants=(windows late no_nvtx kernels)
for v in "${variants[@]}"; do
  extra=() envs=()
  case $v in
    windows) ;;
    late) extra=(--every 0) envs=("GPULENS_KERNELS_SCHEDULE=$(date +%s%N):900:0.5:1.5") ;;
    no_nvtx) envs=(NVTX_INJECTION64_PATH=/nonexistent/libnone.so) ;;
    kernels) envs=(GPULENS_KERNELS_KINDS=kernel) ;;
    kinds=*) envs=("GPULENS_KERNELS_KINDS=${v#kinds=}") ;;
    *) echo "profiler_variants.sh: unknown variant $v" >&2; exit 2 ;;
  esac
  env "${envs[@]}" timeout "${VARIANT_SECONDS:-170}" python3 bench/kernel_safety/run.py \
    --gpulens .devbin/gpulens --out "$out/$v" --runs "/tmp/variant-runs-$v" --per-kind "$per" \
    --parallel "$per" --kinds profiler "${extra[@]}" >"$out/$v.log" 2>&1
  printf '%-8s ' "$v"
  python3 bench/kernel_safety/run.py --summary "$out/$v/manifest.jsonl" | tail -1
done
