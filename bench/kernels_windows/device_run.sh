#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 50 on a GPU machine: does the kernel view of `gpulens run --kernels`
# represent the job it samples? Builds nothing; carries .devbin (bench/kernels/pack.sh:
# gpulens and libgpulens_kernels.so; libraries in .devbin/lib if any).
#   OUT=/tmp/out bash bench/kernels_windows/device_run.sh
# Jobs (bench/kernels_windows/phases_job.py, PyTorch), each under
# `gpulens run --kernels --interval 0.1` with the default windows:
#   short        10 s of solid GEMMs, then 10 s of short bursts with sleeps (the issue's job)
#   short-rev    the same phases the other way round
#   alternating  the two phases alternating for 2 minutes
#   short-fixed  `short` under the old fixed layout (first window 10 s in, every 20 s)
# then the suite's kernel recordings (tests/fixtures/kernels) reported again.
# Each job prints its own CUDA-event busy share; table.py sets it against the
# view's windows, the counters' job-wide figure and what the headline said.
# $OUT ends with table.txt, steps.txt, probe.txt and kernels-windows.tgz (the
# reports NAME.json/.txt, the jobs' output NAME.log/.err, the recordings). A recording
# kept in tests/fixtures/kernels/ is committed packed when over 300 KB
# (scripts/fixtures.sh pack).
# About 4 minutes. STAGES picks jobs (default: all of the above and fixtures).
set -uo pipefail
OUT=${OUT:-/tmp/gpulens-kernels-windows}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$(dirname "$0")/../.."
B=${GPULENS_DEVBIN:-$PWD/.devbin}
if [ -d "$B/lib" ]; then export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
for lib in "$B/libgpulens_kernels.so" "$B/lib/libgpulens_kernels.so"; do
  if [ -f "$lib" ]; then export GPULENS_KERNELS_LIB=$lib; break; fi
done
JOB=bench/kernels_windows/phases_job.py
STAGES=" ${STAGES:-short short-rev alternating short-fixed fixtures} "
want() { [[ $STAGES == *" $1 "* ]]; }
T0=$(date +%s)
step() { echo "== $* (t=$(($(date +%s) - T0)) s)" | tee -a "$OUT/steps.txt"; }

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  "$B/gpulens" --version
  echo "GPULENS_KERNELS_LIB=${GPULENS_KERNELS_LIB:-(beside gpulens)}"
} >"$OUT/probe.txt" 2>&1
head -4 "$OUT/probe.txt"

# run NAME TIMEOUT_S [env ...] -- JOB_ARGS...: the job under gpulens run --kernels;
# NAME.json (report), NAME.txt (the text report), NAME.log (the job's stdout),
# NAME.trace.jsonl (the recording) under $OUT.
run() {
  local name=$1 limit=$2 envs=() gl=(--kernels)
  shift 2
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  if [[ ${#envs[@]} -gt 0 && ${envs[0]} == fixed ]]; then
    # The old layout, passed through untouched with --kernels-every 0 (docs/kernels.md).
    envs=("GPULENS_KERNELS_SCHEDULE=$(date +%s%N):10:2:20")
    gl+=(--kernels-every 0)
  fi
  step "$name: $*"
  env "${envs[@]}" timeout -k 10 "$limit" "$B/gpulens" run "${gl[@]}" --interval 0.1 -q \
    -o "$OUT/$name.json" --trace "$OUT/$name.trace.jsonl" -- python3 "$JOB" "$@" \
    >"$OUT/$name.log" 2>"$OUT/$name.err"
  echo "exit $?" >>"$OUT/$name.err"
  timeout 120 "$B/gpulens" report "$OUT/$name.trace.jsonl" -o "$OUT/$name.txt" 2>>"$OUT/$name.err"
}

names=()
if want short; then run short 120 -- gemm:10 bursts:10; names+=(short); fi
if want short-rev; then run short-rev 120 -- bursts:10 gemm:10; names+=(short-rev); fi
if want alternating; then
  run alternating 240 -- --repeat 6 gemm:10 bursts:10
  names+=(alternating)
fi
if want short-fixed; then run short-fixed 120 fixed -- gemm:10 bursts:10; names+=(short-fixed); fi
if want fixtures; then
  step "the suite's kernel recordings"
  scripts/fixtures.sh >/dev/null  # committed as .xz; nothing here configured CMake to restore them
  for f in tests/fixtures/kernels/*.trace.jsonl; do
    n=fixture-$(basename "$f" .trace.jsonl)
    timeout 120 "$B/gpulens" report "$f" -o "$OUT/$n.json" 2>"$OUT/$n.err"
    timeout 120 "$B/gpulens" report "$f" -o "$OUT/$n.txt" 2>>"$OUT/$n.err"
    names+=("$n")
  done
fi
step table
python3 bench/kernels_windows/table.py "$OUT" "${names[@]}" | tee "$OUT/table.txt"
step done
# The device tool brings back at most 8 files: everything but the table, the
# steps and the probe goes in one archive (reports, logs, recordings).
(
  cd "$OUT" || exit
  files=$(ls | grep -vxE 'table\.txt|steps\.txt|probe\.txt|kernels-windows\.tgz')
  # shellcheck disable=SC2086
  [ -n "$files" ] && tar -czf kernels-windows.tgz $files && rm -f $files
)
ls -la "$OUT"
