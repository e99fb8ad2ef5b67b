#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine (builds nothing; bench/top/pack.sh made .devtop/):
#  (a) screenshots of `gpulens top` in a tmux pane, 120x40, during a bf16 matmul
#      (torch) and during a kernel spinning on one SM (a CuPy RawKernel, 1 block);
#  (b) its own cost beside the tools people leave running: CPU per refresh and RSS
#      of `gpulens top` (tmux pane), `nvidia-smi -l 1`, `nvidia-smi dmon -d 1` and
#      `gpulens record --interval 1`, one at a time, alternating, ROUNDS rounds,
#      while the matmul runs. CPU is the sum of every thread's on-CPU time
#      (/proc/PID/task/*/schedstat, nanoseconds) over a window that starts WARM
#      seconds after launch, so start-up (NVML init) is left out for all alike.
# Writes under $OUT (default /tmp/devtop-out): top-*.txt (plain), top-*.ansi (with
# colours), top-*-once.txt, top-golden-80x24.txt (the CI golden, drawn here),
# cost-raw.tsv, cost-table.txt. About 190 s.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
# The replayed recording is committed as .xz; nothing here configured CMake to restore it.
scripts/fixtures.sh >/dev/null || exit 1
out=${OUT:-/tmp/devtop-out}
mkdir -p "$out"
dt=$PWD/.devtop
gl=$dt/gpulens
rounds=${ROUNDS:-3}
warm=${WARM:-1.5}
# 10 s: every window holds the same number of the sampler's periodic extra reads
# (per-process SM share every 5 s, ECC every 10 s), so they do not add noise.
window=${WINDOW:-10}
export TERMINFO=$dt/terminfo LANG=C.UTF-8 LC_ALL=C.UTF-8
export LD_LIBRARY_PATH=$dt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
log() { echo "[$(date +%T)] $*" >&2; }

# tmux: the carried Debian one, else the machine's, else none (--once only).
tmux_bin=""
for cand in "$dt/tmux" "$(command -v tmux || true)"; do
  if [[ -n $cand ]] && "$cand" -V >/dev/null 2>&1; then tmux_bin=$cand; break; fi
done
log "tmux: ${tmux_bin:-none} ($("${tmux_bin:-true}" -V 2>&1))"
sock=gpulens-devtop-$$
conf=$(mktemp)
# remain-on-exit: a gpulens that fails leaves its message on the screen to capture.
printf 'set -g default-terminal "tmux-256color"\nset -g remain-on-exit on\n' >"$conf"
t() { "$tmux_bin" -L "$sock" -f "$conf" "$@"; }
cleanup() {
  [[ -n $tmux_bin ]] && t kill-server >/dev/null 2>&1
  jobs -p | xargs -r kill 2>/dev/null
  rm -f "$conf"
}
trap cleanup EXIT

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$out/gpu.txt" 2>&1
log "GPU: $(cat "$out/gpu.txt")"

# The golden 80x24 screen, drawn here from the recording: the static ncurses and the
# carried terminfo give the same screen on this machine as in CI.
if [[ -n $tmux_bin ]]; then
  t new-session -d -s golden -x 80 -y 24 "env TZ=UTC $gl top --replay \
tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl --speed 0 --count 300"
  sleep 3
  t capture-pane -p -t golden >"$out/top-golden-80x24.txt"
  t kill-session -t golden
  if diff -q tests/golden/top-80x24.txt "$out/top-golden-80x24.txt" >/dev/null; then
    log "golden 80x24 screen: identical"
  else
    log "golden 80x24 screen: DIFFERS (see top-golden-80x24.txt)"
  fi
fi

# ---- workloads -------------------------------------------------------------
# `exec`: the background job's PID is then python's own, so `kill` ends the
# workload (a subshell's death leaves its python running on the GPU).
matmul() {  # seconds: bf16 8192^3 matmuls back to back; touches $1.ready when running
  exec python3 - "$1" "$2" <<'PY'
import sys, time, torch
dur, ready = float(sys.argv[1]), sys.argv[2]
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
(a @ b).sum().item()
open(ready, "w").close()
end = time.time() + dur
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
PY
}
one_sm() {  # seconds: one block of 32 threads spinning on clock64, launched back to back
  exec python3 - "$1" "$2" <<'PY'
import sys, time, cupy as cp
dur, ready = float(sys.argv[1]), sys.argv[2]
spin = cp.RawKernel(r'''
extern "C" __global__ void spin(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) { }
}''', "spin")
spin((1,), (32,), (cp.int64(1000),)); cp.cuda.Device().synchronize()
open(ready, "w").close()
end = time.time() + dur
while time.time() < end:
    spin((1,), (32,), (cp.int64(200_000_000),))   # ~0.1 s at 1.98 GHz
    cp.cuda.Device().synchronize()
PY
}
wait_ready() {  # file, pid
  for _ in $(seq 600); do
    [[ -e $1 ]] && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# ---- (a) screenshots ---------------------------------------------------------
screenshot() {  # name: top runs SHOT_S seconds beside the running workload
  local name=$1
  if [[ -n $tmux_bin ]]; then
    t new-session -d -s "$name" -x 120 -y 40 "exec $gl top --interval 1"
    sleep "${SHOT_S:-10}"
    t capture-pane -p -t "$name" >"$out/top-$name-120x40.txt"
    t capture-pane -p -e -t "$name" >"$out/top-$name-120x40.ansi"
    t resize-window -t "$name" -x 80 -y 24
    sleep 1.5
    t capture-pane -p -t "$name" >"$out/top-$name-80x24.txt"
    t send-keys -t "$name" q
    sleep 0.5
    t kill-session -t "$name" >/dev/null 2>&1
  fi
  "$gl" top --once --width 120 --count 3 >"$out/top-$name-once.txt" 2>&1
  log "screenshot $name: $(grep -m1 -o 'GPU 0 .*' "$out/top-$name-120x40.txt" 2>/dev/null)"
}

# TOP_ONE_SM_ONLY=1: only the one-SM screenshots (no matmul, no cost rounds).
if [[ ${TOP_ONE_SM_ONLY:-0} != 1 ]]; then
cost_s=$((rounds * 4 * (window + 2) + 10))
log "matmul for $((cost_s + 25)) s"
rm -f /tmp/mm.ready
matmul $((cost_s + 25)) /tmp/mm.ready >"$out/matmul.log" 2>&1 &
mm=$!
wait_ready /tmp/mm.ready "$mm" || log "matmul did not start: $(tail -3 "$out/matmul.log")"
sleep 2
screenshot matmul

# ---- (b) cost, alternating, during the matmul ----------------------------------
hz=$(getconf CLK_TCK)
cpu_ns() {  # every live thread's on-CPU time: schedstat (ns), else stat (clock ticks)
  local sum=0 v
  if [[ -r /proc/$1/schedstat ]]; then
    for f in /proc/"$1"/task/*/schedstat; do
      read -r v _ <"$f" 2>/dev/null && sum=$((sum + v))
    done
  else
    for f in /proc/"$1"/task/*/stat; do
      v=$(awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%d", ($12 + $13) * 1e9 / hz }' "$f")
      sum=$((sum + v))
    done
  fi
  echo "$sum"
}
rss_kib() { awk '/VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
measure() {  # tool round pid [tmux-server-pid]
  local tool=$1 round=$2 pid=$3 srv=${4:-}
  sleep "$warm"
  local c0 s0=0 c1 s1=0
  c0=$(cpu_ns "$pid")
  [[ -n $srv ]] && s0=$(cpu_ns "$srv")
  sleep "$window"
  c1=$(cpu_ns "$pid")
  [[ -n $srv ]] && s1=$(cpu_ns "$srv")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$round" "$window" "$((c1 - c0))" "$(rss_kib "$pid")" \
    "$((s1 - s0))" >>"$out/cost-raw.tsv"
}
printf 'tool\tround\twindow_s\tcpu_ns\trss_kib\ttmux_server_ns\n' >"$out/cost-raw.tsv"
for r in $(seq "$rounds"); do
  log "cost round $r"
  for tool in top record smi-l dmon; do
    case $tool in
      top)
        if [[ -z $tmux_bin ]]; then continue; fi
        t new-session -d -s cost -x 120 -y 40 "exec $gl top --interval 1"
        measure top "$r" "$(t display-message -p -t cost '#{pane_pid}')" \
          "$(t display-message -p -t cost '#{pid}')"
        t kill-session -t cost
        ;;
      record)
        "$gl" record -q -o /tmp/devtop-rec.jsonl --interval 1 &
        measure record "$r" $!
        kill $! && wait $! 2>/dev/null
        ;;
      smi-l)
        nvidia-smi -l 1 >/dev/null 2>&1 &
        measure smi-l "$r" $!
        kill $! && wait $! 2>/dev/null
        ;;
      dmon)
        nvidia-smi dmon -d 1 >/dev/null 2>&1 &
        measure dmon "$r" $!
        kill $! && wait $! 2>/dev/null
        ;;
    esac
  done
done
kill "$mm" 2>/dev/null
wait "$mm" 2>/dev/null

fi
# ---- (a) the one-SM kernel ----------------------------------------------------------
log "one-SM kernel"
rm -f /tmp/sm.ready
one_sm 25 /tmp/sm.ready >"$out/one_sm.log" 2>&1 &
sm=$!
wait_ready /tmp/sm.ready "$sm" || log "one-SM kernel did not start: $(tail -3 "$out/one_sm.log")"
screenshot one-sm
kill "$sm" 2>/dev/null
wait "$sm" 2>/dev/null

[[ ${TOP_ONE_SM_ONLY:-0} == 1 ]] && { log "done (one-SM screenshots only); files in $out"; exit 0; }
# ---- table ---------------------------------------------------------------------------
python3 - "$out/cost-raw.tsv" "$(cat "$out/gpu.txt")" <<'PY' | tee "$out/cost-table.txt"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
names = {"top": "gpulens top (tmux pane, 120x40)", "record": "gpulens record --interval 1",
         "smi-l": "nvidia-smi -l 1", "dmon": "nvidia-smi dmon -d 1"}
print(f"# bench/top/device_top.sh on {sys.argv[2]}; bf16 matmul running; 1 s refresh;")
print("# CPU = on-CPU time of every thread over the window / refreshes in it (1 per s)")
print(f"{'tool':34} {'rounds':>6} {'ms CPU/refresh':>15} {'min-max':>13} {'RSS MiB':>8}")
med = {}
for key, name in names.items():
    rs = [r for r in rows if r["tool"] == key and r["rss_kib"]]
    if not rs:
        continue
    per = [int(r["cpu_ns"]) / 1e6 / float(r["window_s"]) for r in rs]
    rss = statistics.median(int(r["rss_kib"]) / 1024 for r in rs)
    med[key] = statistics.median(per)
    print(f"{name:34} {len(per):>6} {med[key]:>15.3f} {min(per):>6.3f}-{max(per):<6.3f} {rss:>8.1f}")
    if key == "top":
        srv = [int(r["tmux_server_ns"]) / 1e6 / float(r["window_s"]) for r in rs]
        print(f"{'  + tmux server drawing the pane':34} {len(srv):>6} {statistics.median(srv):>15.3f}"
              f" {min(srv):>6.3f}-{max(srv):<6.3f}")
if "top" in med and "record" in med:
    print(f"top - record: {med['top'] - med['record']:+.3f} ms per refresh (target <= +0.2)")
if "top" in med and "smi-l" in med:
    print(f"nvidia-smi -l 1 / top: {med['smi-l'] / med['top']:.2f}x (target > 1)")
if "top" in med and "dmon" in med:
    print(f"nvidia-smi dmon -d 1 / top: {med['dmon'] / med['top']:.2f}x")
PY
log "done; files in $out"
