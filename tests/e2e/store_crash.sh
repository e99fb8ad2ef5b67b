#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End to end: kill -9 the agent while it writes history; the file reopens
# without corruption and holds every sample the agent had reported committed.
# Then a history directory that cannot be written: a clear error, and the agent
# keeps serving live data.
# Usage: GPULENS=path/to/gpulens tests/e2e/store_crash.sh
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl "Debian: apt-get install curl"
need python3 "Debian: apt-get install python3"

# A long recording: the calibration trace repeated with shifted times (~40 min).
long_recording "$REPO/examples/calibration-h100.trace.jsonl" "$E2E_TMP/long.jsonl" 32
db="$E2E_TMP/history/h.db"
start_agent "$E2E_TMP/agent.log" --replay "$E2E_TMP/long.jsonl" --speed 200 --history "$db"
health() { curl -sf "$AGENT_URL/api/v1/health"; }
committed() { health | python3 -c 'import json,sys; print(json.load(sys.stdin)["history"]["samples_written"])'; }
has_rows() { [[ $(committed) -gt 2000 ]]; }
wait_for 30 has_rows || fail "no history written"
before=$(committed)
kill -9 "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true

sql() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$db" "$1"; }
[[ $(sql 'PRAGMA integrity_check') == ok ]] || fail "integrity_check after kill -9"
rows=$(sql 'SELECT COUNT(*) FROM samples')
((rows >= before)) || fail "only $rows rows after kill -9, but $before were reported committed"
# The agent reopens the same file and goes on writing.
start_agent "$E2E_TMP/agent2.log" --replay "$REPO/examples/calibration-h100.trace.jsonl" --speed 0 --history "$db"
healthy() { health | python3 -c 'import json,sys; h=json.load(sys.stdin)["history"]; sys.exit(0 if h["healthy"] and h["samples_written"] > 0 else 1)'; }
wait_for 20 healthy || { cat "$E2E_TMP/agent2.log" >&2; fail "the agent did not reopen the history after kill -9"; }
kill -TERM "$AGENT_PID"
wait "$AGENT_PID" || fail "the agent did not stop cleanly on SIGTERM"
# SIGTERM flushed history: the last minute is rolled up too.
[[ $(sql 'SELECT MAX(minute) FROM rollup_1m') == $(sql 'SELECT MAX(t_ms) / 60000 * 60 FROM samples') ]] ||
  fail "SIGTERM did not roll up the last minute"

# History in a place that cannot be written: live data is still served.
start_agent "$E2E_TMP/agent3.log" --replay "$REPO/examples/calibration-h100.trace.jsonl" --speed 0 \
  --history /proc/gpulens-e2e/h.db
degraded() { curl -s "$AGENT_URL/api/v1/health" | grep -q '"status":"degraded"'; }
wait_for 20 degraded || fail "health does not say degraded"
curl -sf "$AGENT_URL/metrics" | grep -q '^gpulens_store_up 0' || fail "gpulens_store_up is not 0"
curl -sf "$AGENT_URL/api/v1/latest" | grep -q '"sm_active"' || fail "live data is not served"
grep -q "/proc/gpulens-e2e" "$E2E_TMP/agent3.log" || fail "the log does not name the path"
grep -q "live data is still served" "$E2E_TMP/agent3.log" || fail "the log does not say live data goes on"
echo "store e2e: $rows rows intact after kill -9 ($before reported committed), reopened; unwritable directory reported, live data served"
