#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine, builds nothing (bench/kernels/pack.sh fills .devbin/):
#   1. probe: GPU, driver, torch, where libcupti is, what the binaries link
#   2. examples/train_gpt.py under `gpulens run --kernels`, good and starved
#   3. the same good run under torch.profiler, and the comparison (compare.py)
#   4. torch.profiler inside a `gpulens run --kernels` job: the job's profiler must
#      still see its kernels, and gpulens must say it stepped aside
#   5. a job without CUDA under --kernels: output and exit status unchanged
#   6. the cost harness (cost.py): in-process slots and process slots
#   7. NVTX ranges: train_gpt.py --nvtx, fed and starved, under --kernels
#   8. sampled: train_gpt.py --seconds 60 --nvtx, fed and starved, traced in the
#      default windows, and fed traced whole; compare_windows.py compares the two
#   9. windows: the cost of windowed tracing on the job's steps (cost_windows.py)
#  10. bare: issue 15's bare-binary run (bench/install/bare_run.sh, BIN=$BARE_BIN)
#  11. crash: a windowed job killed with SIGKILL keeps the windows it closed
# STAGES (default: train compare nested nocuda cost nvtx) picks stages, so a
# call fits the device tool's 10 minutes. Writes everything under $OUT (traces in
# kernels-raw.tgz) and prints a short table. A trace kept in tests/fixtures/kernels/
# is committed packed when over 300 KB (scripts/fixtures.sh pack).
set -uo pipefail
OUT=${OUT:-/tmp/gpulens-kernels}
mkdir -p "$OUT"
B=${GPULENS_DEVBIN:-$PWD/.devbin}
T0=$(date +%s)
step() { echo "== $* (t=$(($(date +%s) - T0)) s)" | tee -a "$OUT/steps.txt"; }
raw=$(mktemp -d)
STEPS=${KERNELS_STEPS:-40}
STAGES=" ${STAGES:-train compare nested nocuda cost nvtx} "
want() { [[ $STAGES == *" $1 "* ]]; }
# train_run NAME [GPULENS_OPTION...] -- TRAIN_GPT_OPTION...: examples/train_gpt.py under
# gpulens run --kernels; report NAME.txt and log NAME.log under $OUT, recording in $raw.
train_run() {
  local name=$1 gl=()
  shift
  while [[ $1 != -- ]]; do gl+=("$1"); shift; done
  shift
  "$B/gpulens" run --kernels "${gl[@]}" -o "$OUT/$name.txt" --trace "$raw/$name.trace.jsonl" \
    -- python3 examples/train_gpt.py "$@" >"$OUT/$name.log" 2>&1
  echo "exit $?" >>"$OUT/$name.log"
}

step probe
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  python3 - <<'PY'
import glob, os, site
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for p in glob.glob(os.path.join(d, "nvidia", "*", "lib", "libcupti*")):
        print("wheel cupti:", p)
PY
  ls -la /usr/local/cuda*/lib64/libcupti* /usr/local/cuda*/extras/CUPTI/lib64/libcupti* 2>/dev/null
  ldd "$B/gpulens"; ldd "$B/libgpulens_kernels.so"
  "$B/gpulens" --version
} >"$OUT/probe.txt" 2>&1
head -3 "$OUT/probe.txt"

if want train; then
# Traced whole, as torch.profiler traces it in the compare stage (a 40-step job
# ends before the default windows' first one would close).
step "train_gpt good, --kernels --kernels-every 0 ($STEPS steps)"
"$B/gpulens" run --kernels --kernels-every 0 -o "$OUT/train-good-kernels.html" --trace "$raw/train-good-kernels.trace.jsonl" \
  -- python3 examples/train_gpt.py --steps "$STEPS" >"$OUT/train-good-kernels.log" 2>&1
echo "exit $?" >>"$OUT/train-good-kernels.log"
step "train_gpt starved, --kernels"
"$B/gpulens" run --kernels -o "$OUT/train-starved-kernels.html" --trace "$raw/train-starved-kernels.trace.jsonl" \
  -- python3 examples/train_gpt.py --steps 16 --starve >"$OUT/train-starved-kernels.log" 2>&1
echo "exit $?" >>"$OUT/train-starved-kernels.log"
fi

if want compare; then
step "train_gpt good under torch.profiler"
python3 bench/kernels/profile_train.py "$OUT/profiler-good.json" examples/train_gpt.py --steps "$STEPS" \
  >"$OUT/profiler-good.log" 2>&1
python3 bench/kernels/compare.py "$raw/train-good-kernels.trace.jsonl" "$OUT/profiler-good.json" \
  >"$OUT/comparison.txt" 2>&1
fi

if want nested; then
step "torch.profiler inside gpulens run --kernels"
"$B/gpulens" run --kernels --trace "$raw/nested.trace.jsonl" -o "$OUT/nested.txt" \
  -- python3 bench/kernels/profile_train.py "$OUT/profiler-nested.json" examples/train_gpt.py --steps 20 \
  >"$OUT/nested.log" 2>&1
echo "exit $?" >>"$OUT/nested.log"
fi

if want nocuda; then
step "no CUDA under --kernels"
out=$("$B/gpulens" run --kernels -q -- sh -c 'echo plain-output; exit 3' 2>"$OUT/nocuda.err")
echo "stdout=[$out] exit=$?" >"$OUT/nocuda.txt"
fi

if want nvtx; then
for v in good starved; do
  step "train_gpt $v --nvtx, --kernels"
  extra=()
  [[ $v == starved ]] && extra=(--starve)
  train_run "nvtx-$v" -- --steps 16 --nvtx "${extra[@]}"
done
fi

if want sampled; then
for v in good starved; do
  step "train_gpt $v --seconds 60 --nvtx, --kernels in its default windows"
  extra=()
  [[ $v == starved ]] && extra=(--starve)
  train_run "sampled-$v" -- --seconds 60 --nvtx "${extra[@]}"
done
step "train_gpt good --seconds 30 --nvtx, --kernels --kernels-every 0 (whole job)"
train_run whole-good --kernels-every 0 -- --seconds 30 --nvtx
python3 bench/kernels/compare_windows.py "$B/gpulens" "$raw/sampled-good.trace.jsonl" "$raw/whole-good.trace.jsonl" \
  >"$OUT/sampled-vs-whole.txt" 2>&1
"$B/gpulens" report "$raw/sampled-starved.trace.jsonl" -o "$OUT/sampled-starved.html" >/dev/null 2>&1
# From another directory, as a user who copied the recording would.
(cd /tmp && "$B/gpulens" report "$raw/sampled-good.trace.jsonl" -o "$OUT/sampled-good-report.txt") \
  >/dev/null 2>&1
awk '/"x_kernels"/ { n++; if (length($0) > m) m = length($0) } END { print "kernel lines", n, "longest", m }' \
  "$raw/sampled-good.trace.jsonl" "$raw/whole-good.trace.jsonl" >"$OUT/kernel-lines.txt"
fi

if want crash; then
# Issue 27: a job killed mid-run keeps the windows it closed (version-4 records
# are written as each window closes), and the report says the process wrote no end.
step "train_gpt --seconds 90 in the default windows, killed with SIGKILL at 50 s"
"$B/gpulens" run --kernels -o "$OUT/crash.txt" --trace "$raw/crash.trace.jsonl" \
  -- bash -c 'python3 examples/train_gpt.py --seconds 90 & p=$!; sleep 50; kill -9 $p; wait $p' \
  >"$OUT/crash.log" 2>&1
echo "exit $?" >>"$OUT/crash.log"
"$B/gpulens" report "$raw/crash.trace.jsonl" --format json -o "$OUT/crash.json" >/dev/null 2>&1
fi

if want windows; then
step "cost of windowed tracing"
python3 bench/kernels/cost_windows.py --gpulens "$B/gpulens" --out "$OUT" --rounds "${COSTW_ROUNDS:-3}" \
  --seconds "${COSTW_SECONDS:-40}" --configs "${COSTW_CONFIGS:-alone,windowed}" \
  --first "${COSTW_FIRST:-28}" --workloads "${COSTW_WORKLOADS:-launch,batch1,train,train_gpt}" \
  --cpus "${COSTW_CPUS:-}" \
  >"$OUT/cost-windows.log" 2>&1
fi

if want bare; then
step "issue 15: the static binaries alone"
BIN=${BARE_BIN:-.devstatic} OUT="$OUT" bash bench/install/bare_run.sh >/dev/null 2>&1
fi

if want cost; then
step "cost harness"
# In-process slots: the device counters (record at 1 s and 100 ms) and dmon on
# GEMM throughput and batch-1 latency. Process slots: --kernels, only its kernel
# activity, and torch.profiler (the peer) on per-launch cost, batch-1 and training.
python3 bench/kernels/cost.py --gpulens "$B/gpulens" --out "$OUT" --rounds "${COST_ROUNDS:-6}" \
  --slot "${COST_SLOT:-2}" --workloads "${COST_WORKLOADS:-gemm,batch1}" \
  --process-rounds "${COST_PROCESS_ROUNDS:-5}" --process-slot "${COST_PROCESS_SLOT:-3}" \
  >"$OUT/cost.log" 2>&1
fi

step "done"
(cd "$raw" && tar czf "$OUT/kernels-raw.tgz" ./*.jsonl 2>/dev/null)
# The device tool brings back a few files: everything small goes in one archive too.
(cd "$OUT" && tar czf kernels-out.tgz --exclude=kernels-raw.tgz --exclude=kernels-out.tgz . 2>/dev/null)
echo
echo "--- torch.profiler vs gpulens --kernels (train_gpt.py --steps $STEPS) ---"
cat "$OUT/comparison.txt"
echo "--- torch.profiler inside --kernels ---"
tail -n 3 "$OUT/nested.log"
grep -o '"status": *"[a-z_]*"' "$raw/nested.trace.jsonl" | sort | uniq -c
cat "$OUT/nocuda.txt"
echo "--- nvtx ---"
for v in good starved; do grep -A12 -i 'nvtx' "$OUT/nvtx-$v.txt" 2>/dev/null | head -16; done
echo "--- sampled ---"
for v in good starved; do grep -A3 'Where the GPU time went' "$OUT/sampled-$v.txt" 2>/dev/null; grep -E '^exit|train_gpt:' "$OUT/sampled-$v.log" 2>/dev/null | tail -2; done
cat "$OUT/sampled-vs-whole.txt" 2>/dev/null
echo "--- windows cost ---"
cat "$OUT/cost-windows.txt" 2>/dev/null || cat "$OUT/cost-windows-partial.txt" 2>/dev/null || tail -n 20 "$OUT/cost-windows.log" 2>/dev/null
echo "--- bare ---"
cat "$OUT/bare-run.txt" 2>/dev/null | head -40
echo "--- cost ---"
cat "$OUT/cost.txt" 2>/dev/null || cat "$OUT"/cost-*-partial.txt 2>/dev/null || tail -n 20 "$OUT/cost.log"
echo "--- times ---"
cat "$OUT/steps.txt"
