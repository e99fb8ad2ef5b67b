#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End to end: headless Chromium loads the dashboard from the agent replaying a
# reference trace; the cards show the trace's values and the state text, the
# history charts and timeline draw, and the console stays free of errors.
# Usage: GPULENS=path/to/gpulens tests/e2e/dashboard.sh [SCREENSHOT.png]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need chromium "Debian: apt-get install chromium"
need python3 "Debian: apt-get install python3"
shot=${1:-${TMPDIR:-/tmp}/gpulens-dashboard.png}

# Two H200s at the end of the imbalanced phase, with history from the replay.
trim_trace "$TRACES/multi-gpu-h200x2.trace.jsonl" "$E2E_TMP/trace.jsonl" "imbalanced_rank0_busy:end"
last_values "$E2E_TMP/trace.jsonl" >"$E2E_TMP/expected.json"
start_agent "$E2E_TMP/agent.log" --replay "$E2E_TMP/trace.jsonl" --speed 0 --history "$E2E_TMP/h.db"
replay_done() {
  curl -sf "$AGENT_URL/api/v1/health" |
    python3 -c 'import json,sys; h=json.load(sys.stdin); sys.exit(0 if h["source"]["ended"] and h["history"]["backlog"]==0 and h["history"]["samples_written"]>0 else 1)'
}
wait_for 30 replay_done || fail "the replay did not finish"
sleep 1.2  # the writer's last commit
python3 "$(dirname "$0")/dashboard_check.py" "$AGENT_URL/" "$E2E_TMP/expected.json" "$shot"
