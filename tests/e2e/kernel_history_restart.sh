#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End to end: the kernel windows a job sends `gpulens-serve` survive a restart of
# the agent (docs/kernels-agent.md). A sender (tests/e2e/kernel_sender.py) that a
# replayed recording lists on GPU 0 sends 5 windows; the agent is stopped
# (SIGTERM: the history writer flushes) and started again on the same history
# file; /api/v1/kernels must answer with the same 5 windows, names and totals,
# and /api/v1/health must say they were read back.
#
#   GPULENS_SERVE_BIN=build/debug/gpulens-serve tests/e2e/kernel_history_restart.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/e2e/find_tools.sh

find_binary gpulens-serve GPULENS_SERVE_BIN

work=$(mktemp -d)
server_pid=""
sender_pid=""
cleanup() {
  if [[ -n "$sender_pid" ]]; then kill "$sender_pid" 2>/dev/null || true; fi
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "kernel_history_restart: $*" >&2
  cat "$work"/serve*.log >&2 || true
  exit 1
}

python3 tests/e2e/kernel_sender.py "$work/kernels.sock" 5 "$work/go" >"$work/sender.log" 2>&1 &
sender_pid=$!
# The recording's first 10 s, with the sender's pid among GPU 0's processes.
trace="$work/short.trace.jsonl"
python3 tests/e2e/trace_with_process.py tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl \
  "$trace" "$sender_pid" 10

start_serve() {  # $1: log name; sets server_pid and base
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$bin" --replay "$trace" --speed 100 --listen "127.0.0.1:$port" --history "$work/history.db" \
    --kernels-socket "$work/kernels.sock" >"$work/$1.log" 2>&1 &
  server_pid=$!
  base="http://127.0.0.1:$port"
  for _ in $(seq 1 300); do
    if curl -fsS "$base/api/v1/health" 2>/dev/null | grep -q '"ended": *true'; then return 0; fi
    kill -0 "$server_pid" 2>/dev/null || fail "gpulens-serve exited"
    sleep 0.2
  done
  fail "the replay did not end"
}
health() {  # a path into /api/v1/health's JSON, e.g. kernels.accepted
  curl -fsS "$base/api/v1/health" | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."): v = v[k]
print(v)' "$1"
}
windows() {  # the windows of /api/v1/kernels, one compact line each
  curl -fsS "$base/api/v1/kernels?from=-2h" | python3 -c '
import json, sys
for w in json.load(sys.stdin)["windows"]:
    print(json.dumps(w, sort_keys=True))'
}

start_serve serve1
touch "$work/go"
wait "$sender_pid" || fail "the kernel sender failed: $(cat "$work/sender.log")"
sender_pid=""
for _ in $(seq 1 100); do
  [[ $(health kernels.history.written) -ge 5 ]] && break
  sleep 0.1
done
[[ $(health kernels.history.written) -eq 5 ]] || fail "5 windows not written: $(health kernels)"
windows >"$work/before.txt"
[[ $(wc -l <"$work/before.txt") -eq 5 ]] || fail "not 5 windows before the restart"
kill -TERM "$server_pid"
wait "$server_pid" || true
server_pid=""

start_serve serve2
[[ $(health kernels.history.loaded) -eq 5 ]] || fail "not 5 windows read back: $(health kernels)"
[[ $(health kernels.history.skipped) -eq 0 ]] || fail "rows skipped: $(health kernels)"
windows >"$work/after.txt"
if ! diff "$work/before.txt" "$work/after.txt" >&2; then fail "the windows changed across the restart"; fi
grep -q ampere_bf16_s16816gemm "$work/after.txt" || fail "a kernel name is missing"
echo "kernel_history_restart: 5 windows answered across a restart, every field the same"
