#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: does detaching CUPTI between trace windows ever kill a
# PyTorch job? It did (bench/results/kernels-detach-crash-h100.txt,
# kernels-v4/detach-h100.txt), and the library no longer detaches: the
# GPULENS_KERNELS_DETACH it sets below reaches nothing in a library built after
# that (docs/kernels.md, "What it costs"). Kept to run against a build of the
# experiment from the history (src/inject/detach.hpp before it was removed), or
# as a crash test of the attached library.
# RUNS jobs (default 30), PAR at a time (default 3), each `gpulens run --kernels`
# with windows of 0.5 s every 1.5 s around bench/kernels/workloads.py cycling
# batch1, train (forward and backward: CUDA calls from two threads) and launch
# for SECS seconds (default 15). Prints each job's exit status and the detaches its
# record counts, then the crash rate.
set -uo pipefail
OUT=${OUT:-/tmp/gpulens-detach}
mkdir -p "$OUT"
B=${GPULENS_DEVBIN:-$PWD/.devbin}
RUNS=${RUNS:-30} PAR=${PAR:-3} SECS=${SECS:-15}
one() {
  local i=$1 d="$OUT/run$1"
  mkdir -p "$d"
  GPULENS_KERNELS_DETACH=${DETACH:-1} "$B/gpulens" run --kernels --kernels-window 0.5 --kernels-every 1.5 \
    -o "$d/report.txt" --trace "$d/trace.jsonl" -- \
    python3 -X faulthandler bench/kernels/workloads.py --seconds "$SECS" --cycle 0.5 \
    --workloads batch1,train,launch --steps-out "$d/steps.jsonl" >"$d/log.txt" 2>&1
  local rc=$?
  local det
  det=$(grep -o '"detaches":[0-9]*' "$d/trace.jsonl" 2>/dev/null | cut -d: -f2 | awk '{s += $1} END {print s + 0}')
  local note
  note=$(grep -o '"detach_note":"[^"]*"' "$d/trace.jsonl" 2>/dev/null | head -1)
  echo "run $i exit $rc detaches ${det:-0} ${note}"
}
for ((i = 1; i <= RUNS; i++)); do
  one "$i" &
  if ((i % PAR == 0)); then wait; fi
done | tee "$OUT/runs.txt"
wait
total=$(wc -l <"$OUT/runs.txt")
bad=$(grep -vc ' exit 0 ' "$OUT/runs.txt")
dets=$(awk '{s += $6} END {print s + 0}' "$OUT/runs.txt")
echo "detach crash test: $bad of $total jobs ended other than 0; $dets detaches in all" | tee -a "$OUT/runs.txt"
# A failed job's log from its first error line on; the others' files go (the
# device tool brings back a bounded number of files).
for d in "$OUT"/run*; do
  if grep -q " exit 0 " <(grep "^run ${d##*run} " "$OUT/runs.txt"); then
    rm -rf "$d"
  else
    echo "== $d"
    grep -n -m1 -E "Fatal|Error|error|Abort|terminate" "$d/log.txt" | head -1
    awk '/Fatal|Abort|terminate|what\(\)/ {p = 1} p' "$d/log.txt" | head -40
  fi
done
