#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: what each monitor costs a batch-1 inference job and a
# bf16 GEMM job, by pausing and resuming the monitors in alternating slots
# (alternate.py) while one job runs (job.py), then analyze.py's table.
# Needs .devbin from bench/multi_gpu/pack.sh. Settings (environment):
#   MC_WORKLOADS  "batch1 gemm"     which jobs, one after the other
#   MC_SECONDS    "180 120"         seconds of alternation for each job, in order
#   MC_SLOT       0.5               seconds per slot
#   MC_MONITORS   "none record-100ms record-1s serve top dmon"
#   MC_JOB_CPUS   2-5               CPUs the job is pinned to (monitors are not pinned)
#   MC_TAG        monitor-cost      name of the output files
# The table goes to $OUT/$MC_TAG-table.txt, the raw timings to $OUT/$MC_TAG-raw.tgz.
set -uo pipefail
cd "$(dirname "$0")/../.."
dest=${OUT:-/tmp/monitor-cost}
work=$(mktemp -d)
mkdir -p "$dest"
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
read -r -a workloads <<<"${MC_WORKLOADS:-batch1 gemm}"
read -r -a seconds <<<"${MC_SECONDS:-180 120}"
read -r -a wanted <<<"${MC_MONITORS:-none record-100ms record-1s serve top dmon}"
slot=${MC_SLOT:-0.5}
tag=${MC_TAG:-monitor-cost}
gl=$PWD/.devbin/gpulens

monitor_cmd() {  # name workload -> the monitor's shell command
  case $1 in
    none) echo "" ;;
    record-100ms) echo "exec $gl record -q -o $work/$2-record-100ms.jsonl --interval 0.1" ;;
    record-1s) echo "exec $gl record -q -o $work/$2-record-1s.jsonl --interval 1" ;;
    # The agent with its history, scraped every 15 s as Prometheus would (bash's
    # /dev/tcp: the GPU machine may have no curl). The scraper pauses with it.
    serve) echo "$PWD/.devbin/gpulens-serve --listen 127.0.0.1:9499 --history $work/$2-serve.db \
      2>$work/$2-serve.log & while sleep 15; do { exec 3<>/dev/tcp/127.0.0.1/9499 &&
      printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3 >/dev/null; exec 3<&-; } 2>/dev/null; done" ;;
    # The full-screen view on a pseudo-terminal of 160x50, as someone would leave it open.
    top) echo "sleep 100000 | script -qfec 'stty cols 160 rows 50; TERM=xterm-256color exec $gl top' /dev/null >/dev/null" ;;
    dmon) echo "exec nvidia-smi dmon -d 1 --gpm-metrics 1,2,3,5,10,20,21,60,61 >$work/$2-dmon.txt" ;;
    *) echo "unknown monitor $1" >&2; return 1 ;;
  esac
}

{
  echo "# bench/monitor_cost/device_run.sh on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(nproc) CPUs, $(date -u +%F)"
  echo "# slots of $slot s; job pinned to CPUs ${MC_JOB_CPUS:-2-5}; monitors: ${wanted[*]}"
} >"$dest/$tag-table.txt"
header=--header
for i in "${!workloads[@]}"; do
  wl=${workloads[$i]}
  args=()
  for m in "${wanted[@]}"; do args+=(--monitor "$m=$(monitor_cmd "$m" "$wl")") || exit 1; done
  python3 bench/monitor_cost/alternate.py --slot "$slot" --seconds "${seconds[$i]:-120}" \
    --slots "$work/$wl-slots.tsv" --cpu "$work/$wl-cpu.tsv" --job-ready "$work/$wl.ready" "${args[@]}" -- \
    taskset -c "${MC_JOB_CPUS:-2-5}" python3 bench/monitor_cost/job.py --workload "$wl" \
    --out "$work/$wl.bin" --ready "$work/$wl.ready" || { echo "alternate.py failed for $wl"; continue; }
  ticks=()
  for m in record-100ms record-1s; do
    [[ -f $work/$wl-$m.jsonl ]] && ticks+=(--ticks "$m=$(grep -c '"gpu_util"' "$work/$wl-$m.jsonl")")
  done
  [[ -f $work/$wl-dmon.txt ]] && ticks+=(--ticks "dmon=$(grep -vc '^#' "$work/$wl-dmon.txt")")
  python3 bench/monitor_cost/analyze.py $header --workload "$wl" --job "$work/$wl.bin" \
    --slots "$work/$wl-slots.tsv" "${ticks[@]}" | tee -a "$dest/$tag-table.txt"
  awk -v wl="$wl" '{ printf "%s: %s used %.2f s of CPU in its %.0f s resumed (%.1f %% of a core)\n", wl, $1, $2, $3, 100 * $2 / $3 }' \
    "$work/$wl-cpu.tsv" | tee -a "$dest/$tag-table.txt"
  header=
done
tail -n 3 "$work"/*-serve.log 2>/dev/null
rm -f "$work"/*.jsonl "$work"/*.db*
tar -C "$work" -czf "$dest/$tag-raw.tgz" .
