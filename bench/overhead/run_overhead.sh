#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: what gpulens costs while a matmul load runs, side by side
# in the same run with `nvidia-smi dmon` sampling the same GPM metrics at 1 Hz.
#   first:          each NVML call's own CPU cost in a tight loop (gpulens_nvml_probe),
#                   split into user and system time: the floor no caller can go under;
#                   the GPM pair on every GPU of GPUS at once (--gpm-fanout), the GPM
#                   floor per GPU at that GPU count;
#                   then the resident memory of a small NVML client, step by step
#   batch 1 (60 s): gpulens 1 s with GPM (with and without per-process queries),
#                   gpulens 1 s without GPM (with and without processes), nvidia-smi dmon 1 s;
#                   near its end, where each one's resident memory lies (/proc/PID/smaps)
#   batch 2 (60 s): gpulens 0.1 s with GPM, gpulens 0.1 s without GPM
# dmon reads no per-process data, so "gpm-noprocs-1s" is the like-for-like comparison.
# Each gpulens writes its own cost per GPU per tick (--stats); dmon's CPU time and
# peak RSS come from /proc. The table lands in $OUT (or /tmp/overhead) as
# overhead-table.txt, every raw file beside it in overhead-raw.tgz (the device tool
# brings back only a few files).
# GPUS=0,1 limits gpulens (--gpus) and dmon (-i) to those GPUs, so the cost per GPU
# can be read at 1, 2, 4... GPUs on one machine (bench/multi_gpu/cost_scaling.sh).
set -uo pipefail
dest=${OUT:-/tmp/overhead}
out=$(mktemp -d)
mkdir -p "$dest"
secs=${OVERHEAD_SECONDS:-60}
load=calibration/build/gpulens-workload
"$load" --seconds $((2 * secs + 30)) --gap 0 load >/dev/null 2>&1 &
load_pid=$!
sleep 5
.devbin/gpulens_nvml_probe --call-costs 200 >"$out/call-costs.jsonl" 2>&1
.devbin/gpulens_nvml_probe --memory-steps >"$out/memory-steps.jsonl" 2>&1
# The GPM pair on the GPUs gpulens will read, alone, in turn and at once (one
# thread each, as the sampler): the floor per GPU at this GPU count.
.devbin/gpulens_nvml_probe --gpm-fanout 30 ${GPUS:+--gpus "$GPUS"} >"$out/gpm-fanout.jsonl" 2>&1

proc_cpu_s() {  # utime + stime of a live process, in seconds
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}
proc_hwm_mib() { awk '/VmHWM/ { print $2 / 1024 }' "/proc/$1/status"; }

record() {  # name interval extra-args...
  local name=$1 interval=$2
  shift 2
  .devbin/gpulens record -q -o "/tmp/$name.jsonl" --interval "$interval" --duration "$secs" \
    --stats "$out/$name.json" ${GPUS:+--gpus "$GPUS"} "$@" &
  pids+=($!)
}

pids=()
record gpm-1s 1
record gpm-noprocs-1s 1 --no-procs
record nogpm-1s 1 --no-gpm
record nogpm-noprocs-1s 1 --no-gpm --no-procs
nvidia-smi dmon ${GPUS:+-i "$GPUS"} -d 1 --gpm-metrics 1,2,3,5,10,20,21,60,61 >"$out/dmon.txt" 2>&1 &
dmon=$!
sleep $((secs - 5))
# Resident memory by mapping (KiB), to tell NVML's share from gpulens' own.
for pid in "${pids[1]}" "$dmon"; do
  echo "== $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  awk '/^[0-9a-f]+-/ { name = ($6 == "" ? "[anon]" : $6) } /^Rss:/ { rss[name] += $2 }
       END { for (n in rss) if (rss[n] >= 256) print rss[n], n }' "/proc/$pid/smaps" | sort -rn
done >"$out/smaps.txt"
sleep 6
echo "{\"cpu_s\": $(proc_cpu_s $dmon), \"peak_rss_mib\": $(proc_hwm_mib $dmon), \"samples\": $(grep -vc '^#' "$out/dmon.txt")}" >"$out/dmon.json"
kill "$dmon"
wait "${pids[@]}" 2>/dev/null
pids=()

record gpm-100ms 0.1
record nogpm-100ms 0.1 --no-gpm
wait "${pids[@]}" 2>/dev/null
kill "$load_pid" 2>/dev/null
wait 2>/dev/null
python3 bench/overhead/summarize.py "$out" | tee "$out/overhead-table.txt"
cp "$out/overhead-table.txt" "$out"/*.json "$out/call-costs.jsonl" "$out/gpm-fanout.jsonl" "$dest/"
tar -C "$out" -czf "$dest/overhead-raw.tgz" .
