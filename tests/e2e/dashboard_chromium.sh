#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End to end: headless Chromium loads the dashboard that `gpulens-serve --replay`
# serves, at a phone (390x844), a laptop (1400x1000) and a wall (2560x1440, ?wall).
# Fails when the page is wider than the viewport (it would scroll sideways), when
# a card is missing, or on any console message or uncaught error. Screenshots go
# to the output directory; GPULENS_UPDATE_SCREENSHOTS=1 also copies them to
# docs/images/dashboard-*.png (the committed ones).
#
#   tests/e2e/dashboard_chromium.sh [OUT_DIR]     (default: build/e2e-dashboard)
#   GPULENS_SERVE_BIN=build/release/gpulens-serve tests/e2e/dashboard_chromium.sh
#
# Exit 77 (ctest: skipped) only when Chromium is not installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/e2e/find_tools.sh

find_chromium
find_binary gpulens-serve GPULENS_SERVE_BIN

out=${1:-build/e2e-dashboard}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
server_pid=""
sender_pid=""
cleanup() {
  if [[ -n "$sender_pid" ]]; then kill "$sender_pid" 2>/dev/null || true; fi
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A job that sends the agent its kernels (tests/e2e/kernel_sender.py) once told
# to: the recording below lists its pid on GPU 0, so the agent takes its windows
# and Where the time went shows them.
python3 tests/e2e/kernel_sender.py "$work/kernels.sock" 7 "$work/go" >"$work/sender.log" 2>&1 &
sender_pid=$!

# A two-GPU recording whose process lists come every few samples: the cards,
# the processes table (held between reads) and two cards side by side on a wall.
# It is cut at 45 s, while the job still runs: its end is both GPUs idle with no
# process, which shows less. Samples come every 0.1 s, process lists every 1.1 s.
trace="$work/multi-gpu-45s.trace.jsonl"
python3 tests/e2e/trace_with_process.py tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl \
  "$trace" "$sender_pid" 45
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" --replay "$trace" --speed 100 --listen "127.0.0.1:$port" --history "$work/history.db" \
  --kernels-socket "$work/kernels.sock" \
  >"$work/serve.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$port"
# Waits for the replay to reach its end, so history and the last state are there.
for _ in $(seq 1 600); do
  if curl -fsS "$base/api/v1/health" 2>/dev/null | grep -q '"ended": *true'; then break; fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "dashboard_chromium: gpulens-serve exited:" >&2
    cat "$work/serve.log" >&2
    exit 1
  fi
  sleep 0.2
done
# The replay has ended with the sender on GPU 0: it may send now; all 7 windows
# must be taken (the agent's counters say so) before the page is loaded.
touch "$work/go"
if ! wait "$sender_pid"; then
  echo "dashboard_chromium: the kernel sender failed:" >&2
  cat "$work/sender.log" >&2
  exit 1
fi
accepted=0
for _ in $(seq 1 100); do
  accepted=$(curl -fsS "$base/api/v1/health" | python3 -c 'import json,sys; print(json.load(sys.stdin)["kernels"]["accepted"])')
  if [[ "$accepted" -ge 7 ]]; then break; fi
  sleep 0.1
done
if [[ "$accepted" -lt 7 ]]; then
  echo "dashboard_chromium: the agent took $accepted of 7 kernel windows:" >&2
  curl -fsS "$base/api/v1/health" >&2 || true
  exit 1
fi

failed=0
for spec in "390 844 " "1400 1000 " "2560 1440 wall"; do
  read -r w h mode <<<"$spec"
  shot="$out/dashboard-$w.png"
  # An exact viewport through the DevTools protocol (--window-size stops at 500 px).
  if python3 tests/e2e/dashboard_probe.py "$chrome" "$base/${mode:+?$mode}" "$w" "$h" "$shot" 2 $mode "kernels=0:$sender_pid"; then
    echo "dashboard_chromium: ${w}x$h${mode:+ ?$mode}: ok (screenshot $shot)"
    if [[ "${GPULENS_UPDATE_SCREENSHOTS:-}" == 1 ]]; then cp "$shot" "docs/images/dashboard-$w.png"; fi
  else
    echo "dashboard_chromium: ${w}x$h${mode:+ ?$mode}: FAILED" >&2
    failed=1
  fi
done
exit $failed
