#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 53, item 2: `gpulens serve` on every GPU of the host, scraped every second by
# a real Prometheus (Debian's, carried xz-compressed in .devprom/ by
# bench/multi_gpu/pack.sh) while an NCCL job runs on all GPUs
# (bench/multi_gpu/nccl_load.py). Then Prometheus' own raw samples say how the
# scrapes went: their count against the seconds elapsed, the longest gap between
# two, scrape duration p50/p99/max, series per scrape and per GPU, and whether each
# GPU's NVLink traffic was seen (bench/multi_gpu/prom_summary.py).
#   OUT=DIR SECONDS_RUN=120 bench/multi_gpu/prom_scrape.sh
# JOB="CMD" replaces the NCCL job (a rehearsal without GPUs: JOB="sleep 30" beside
# the fake NVML of tests/, LD_LIBRARY_PATH=build/debug/fake-nvml).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?OUT must name the output folder}
secs=${SECONDS_RUN:-120}
work=/tmp/prom-scrape
rm -rf "$work" && mkdir -p "$work"
export LD_LIBRARY_PATH="$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
serve_bin=${GPULENS_SERVE:-.devbin/gpulens-serve}
job=${JOB:-python3 bench/multi_gpu/nccl_load.py --seconds $secs}
port=9411
prom_port=9490
prometheus=$(command -v prometheus || echo /tmp/prometheus)
[[ -x $prometheus ]] || { xz -dc .devprom/prometheus.xz >/tmp/prometheus && chmod +x /tmp/prometheus; }
"$serve_bin" --listen "127.0.0.1:$port" --history "$work/history.db" >"$work/serve.log" 2>&1 &
serve=$!
cat >"$work/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: gpulens
    static_configs: [{targets: ["127.0.0.1:$port"]}]
YML
"$prometheus" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
prom=$!
sleep 5
start=$(date +%s.%N)
$job >"$work/nccl.log" 2>&1 &
job_pid=$!
sleep $((secs / 2))
curl -s "http://127.0.0.1:$port/metrics" >"$work/metrics-during-nccl.prom"
wait "$job_pid"
echo "job exit $?" >>"$work/nccl.log"
end=$(date +%s.%N)
sleep 3
python3 bench/multi_gpu/prom_summary.py "http://127.0.0.1:$prom_port" "$start" "$end" \
  "$work/metrics-during-nccl.prom" | tee "$work/prom-summary.txt"
kill "$prom" "$serve" 2>/dev/null
wait 2>/dev/null
{ command -v nvidia-smi >/dev/null && nvidia-smi -L; } >"$work/gpus.txt"
rm -rf "$work/tsdb" "$work/history.db"*
cp "$work/prom-summary.txt" "$work/metrics-during-nccl.prom" "$out/" 2>/dev/null
tar -C "$work" -czf "$out/prom-scrape.tgz" .
