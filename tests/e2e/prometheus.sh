#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End to end: a real Prometheus server (Debian's package) scrapes the agent
# replaying a reference trace; through Prometheus' HTTP API the series hold the
# trace's values. `prometheus.sh dcgm` does the same with --compat dcgm.
# Usage: GPULENS=path/to/gpulens tests/e2e/prometheus.sh [native|dcgm]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need prometheus "Debian: apt-get install prometheus"
need python3 "Debian: apt-get install python3"
need curl "Debian: apt-get install curl"
mode=${1:-native}

# Two H200s, cut at the end of the imbalanced phase: GPU 0 computes, GPU 1 waits.
trim_trace "$TRACES/multi-gpu-h200x2.trace.jsonl" "$E2E_TMP/trace.jsonl" "imbalanced_rank0_busy:end"
last_values "$E2E_TMP/trace.jsonl" >"$E2E_TMP/expected.json"
compat=()
[[ $mode == dcgm ]] && compat=(--compat dcgm)
start_agent "$E2E_TMP/agent.log" --replay "$E2E_TMP/trace.jsonl" --speed 0 --no-history "${compat[@]}"
replay_ended() {
  curl -sf "$AGENT_URL/api/v1/health" | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["source"]["ended"] else 1)'
}
wait_for 30 replay_ended || fail "the replay did not finish"

port=$(free_port)
cat >"$E2E_TMP/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpulens
    static_configs:
      - targets: ['${AGENT_URL#http://}']
YAML
prometheus --config.file="$E2E_TMP/prometheus.yml" --storage.tsdb.path="$E2E_TMP/tsdb" \
  --web.listen-address="127.0.0.1:$port" --log.level=warn >"$E2E_TMP/prometheus.log" 2>&1 &
E2E_PIDS+=("$!")
prom="http://127.0.0.1:$port"
wait_for 60 curl -sf "$prom/-/ready" || { cat "$E2E_TMP/prometheus.log" >&2; fail "Prometheus did not start"; }
scraped() {
  curl -sf "$prom/api/v1/query?query=up%7Bjob%3D%22gpulens%22%7D%3D%3D1" | grep -q '"value"'
}
wait_for 60 scraped || fail "Prometheus did not scrape the agent (see $E2E_TMP/prometheus.log)"
sleep 1.5  # one more scrape, so that every series has a sample
python3 "$(dirname "$0")/prometheus_check.py" "$prom" "$AGENT_URL" "$mode" "$E2E_TMP/expected.json"
