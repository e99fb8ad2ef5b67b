#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# node_exporter-style golden of /metrics: the real gpulens-serve replays a
# committed recording to its end, its /metrics is linted by `promtool check
# metrics` and compared with tests/golden/serve-<name>.prom. Values that belong
# to this process and not to the recording (start time, CPU, memory, scrape
# duration, version) are masked in the golden, not dropped, so the golden still
# shows every family and series the agent writes; only the request counters'
# series go (which requests the wait made is not the recording's business).
# GPULENS_UPDATE_GOLDEN=1 rewrites the goldens on purpose.
# Usage: serve_metrics_golden.sh GPULENS_SERVE_BINARY
set -euo pipefail
SERVE=${1:?usage: serve_metrics_golden.sh path/to/gpulens-serve}
GPULENS=$SERVE
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
need promtool "scripts/setup.sh installs prometheus"
need curl "scripts/setup.sh installs curl"

# mask: the process's own numbers become VALUE, the version VERSION, the
# request counters go.
mask() {
  sed -E \
    -e 's/^(gpulens_agent_start_time_seconds|gpulens_scrape_duration_seconds|process_[a-z_]+)( .*)? [^ ]+$/\1\2 VALUE/' \
    -e '/^gpulens_http_requests_total\{/d' \
    -e 's/^(gpulens_build_info\{version=)"[^"]*"/\1"VERSION"/'
}

# check NAME RECORDING ARGS...: one replay, one golden.
check() {
  local name=$1 recording=$2
  shift 2
  local log="$E2E_TMP/$name.log" url=""
  # Created before the agent starts: the loop below may read it before the
  # background job has opened it (sed on a missing file ends the script under
  # set -e; seen under load).
  : >"$log"
  "$SERVE" --replay "$recording" --speed 0 --listen 127.0.0.1:0 --no-history \
    --hostname node-1 "$@" >"$log" 2>&1 &
  local pid=$!
  E2E_PIDS+=("$pid")
  for _ in $(seq 200); do
    url=$(sed -n 's/.* on \(http:\/\/127\.0\.0\.1:[0-9]*\) (TLS.*/\1/p' "$log" | head -1)
    [[ -n "$url" ]] && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "$name: gpulens-serve exited"; }
    sleep 0.1
  done
  [[ -n "$url" ]] || fail "$name: gpulens-serve did not start listening"
  # The replay's end, not a clock, says when the values are final.
  wait_for 60 bash -c "curl -sf '$url/api/v1/health' | grep -q '\"ended\":true'" ||
    fail "$name: the replay did not end"
  local raw="$E2E_TMP/$name.prom"
  curl -sf "$url/metrics" >"$raw" || fail "$name: GET /metrics failed"
  # Asked for gzip, the same text compressed (issue 48); asked for OpenMetrics as
  # Prometheus asks, the OpenMetrics text (a real Prometheus parses it in
  # prometheus.sh): its content type, '# EOF' last, and the same samples.
  local headers="$E2E_TMP/$name.headers" unzipped="$E2E_TMP/$name.gunzipped.prom"
  curl -sf -D "$headers" -H 'Accept-Encoding: gzip' "$url/metrics" -o "$raw.gz" ||
    fail "$name: GET /metrics with gzip failed"
  grep -qix 'Content-Encoding: gzip.' "$headers" || fail "$name: no gzip when asked: $(cat "$headers")"
  gzip -dc <"$raw.gz" >"$unzipped" || fail "$name: the gzip answer does not decompress"
  promtool check metrics <"$unzipped" || fail "$name: promtool check metrics found problems (gzip)"
  diff -u <(mask <"$raw") <(mask <"$unzipped") >&2 || fail "$name: the gzip answer differs"
  local om="$E2E_TMP/$name.om"
  curl -sf -D "$headers" --compressed -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
    "$url/metrics" -o "$om" || fail "$name: GET /metrics as OpenMetrics failed"
  grep -qix 'Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8.' "$headers" ||
    fail "$name: no OpenMetrics content type: $(cat "$headers")"
  [[ $(tail -n 1 "$om") == '# EOF' ]] || fail "$name: the OpenMetrics text does not end in # EOF"
  diff -u <(grep -v '^#' "$raw" | mask) <(grep -v '^#' "$om" | mask) >&2 ||
    fail "$name: the OpenMetrics samples differ from the text format's"
  kill "$pid"
  promtool check metrics <"$raw" || fail "$name: promtool check metrics found problems"
  local golden="$REPO/tests/golden/serve-$name.prom"
  if [[ ${GPULENS_UPDATE_GOLDEN:-0} == 1 ]]; then
    mask <"$raw" >"$golden"
    echo "rewrote $golden"
    return
  fi
  [[ -s "$golden" ]] || fail "missing $golden (GPULENS_UPDATE_GOLDEN=1 creates it)"
  if ! diff -u "$golden" <(mask <"$raw"); then
    fail "$name: /metrics differs from $golden (GPULENS_UPDATE_GOLDEN=1 rewrites it on purpose)"
  fi
  echo "ok: serve-$name.prom ($(grep -vc '^#' "$raw") samples, promtool clean)"
}

check calibration-h100 "$REPO/examples/calibration-h100.trace.jsonl" --kube-log-dir ''
# Not --compat dcgm: its families copy dcgm-exporter's names and camelCase labels
# (UUID, Hostname) on purpose, which promtool's lint flags; the unit golden
# tests/golden/metrics-dcgm.prom holds them.
check multi-gpu-h200x2 "$TRACES/multi-gpu-h200x2.trace.jsonl" --kube-log-dir '' --process-metrics
