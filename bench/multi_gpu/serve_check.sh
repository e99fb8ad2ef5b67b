#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the multi-GPU machine: gpulens serve for a minute with a real Prometheus
# (carried from Debian's prometheus package in .devprom/) scraping it every 5 s,
# then asks Prometheus which GPUs it saw and how scrapes went. Also
# `gpulens top --once` where this build has it.
#   bench/multi_gpu/serve_check.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: serve_check.sh OUTDIR}
mkdir -p "$out"
bin=.devbin
port=9411
[[ -x .devprom/prometheus ]] || xz -dc .devprom/prometheus.xz >.devprom/prometheus && chmod +x .devprom/prometheus
"$bin/gpulens-serve" --listen "127.0.0.1:$port" >"$out/serve.log" 2>&1 &
serve=$!
cat >"$out/prometheus.yml" <<YML
global: {scrape_interval: 5s}
scrape_configs:
  - job_name: gpulens
    static_configs: [{targets: ["127.0.0.1:$port"]}]
YML
.devprom/prometheus --config.file="$out/prometheus.yml" --storage.tsdb.path="$out/tsdb" \
  --web.listen-address=127.0.0.1:9490 >"$out/prometheus.log" 2>&1 &
prom=$!
sleep 60
q() { curl -s --get "http://127.0.0.1:9490/api/v1/query" --data-urlencode "query=$1"; }
{
  echo "GPUs seen: $(q 'count(gpulens_gpu_utilization_ratio)')"
  echo "scrapes ok: $(q 'sum_over_time(up{job="gpulens"}[1m])')"
  echo "scrape seconds max: $(q 'max_over_time(scrape_duration_seconds{job="gpulens"}[1m])')"
  echo "series per scrape: $(q 'scrape_samples_scraped{job="gpulens"}')"
} | tee "$out/serve-check.txt"
curl -s "http://127.0.0.1:$port/metrics" >"$out/metrics.prom"
kill "$prom" "$serve" 2>/dev/null
wait 2>/dev/null
if "$bin/gpulens" top --help >/dev/null 2>&1; then
  "$bin/gpulens" top --once >"$out/top-once.txt" 2>&1
  head -n 40 "$out/top-once.txt"
else
  echo "gpulens top: not in this build" | tee "$out/top-once.txt"
fi
