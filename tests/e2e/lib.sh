# SPDX-License-Identifier: Apache-2.0
# Shared helpers of the end-to-end tests: start the agent on a trace, wait for
# it with bounded loops, and stop everything this test started on exit.
# Exit code 77 means "skipped" (a tool is missing); the message says which.

E2E_PIDS=()
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-e2e.XXXXXX")

e2e_cleanup() {
  local pid
  for pid in "${E2E_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${E2E_PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$E2E_TMP"
}
trap e2e_cleanup EXIT

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed ($2)"; }

# trim_trace IN OUT MARK: the header and every line before MARK (a mark name),
# so that a replay ends on known values.
trim_trace() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
src, dst, stop = sys.argv[1:4]
with open(src) as f, open(dst, "w") as out:
    for i, line in enumerate(f):
        if i > 0 and json.loads(line).get("mark") == stop:
            break
        out.write(line)
PY
}

# last_values TRACE: {"<gpu>": {metric: value, ...}} of each GPU's last sample.
last_values() {
  python3 - "$1" <<'PY'
import json, sys
last = {}
with open(sys.argv[1]) as f:
    header = json.loads(next(f))
    for line in f:
        o = json.loads(line)
        if "gpu" in o and "t" in o:
            last[str(o["gpu"])] = o
print(json.dumps({"header": header, "last": last}))
PY
}

# start_agent LOG ARGS...: runs gpulens serve on an ephemeral port and sets
# AGENT_PID and AGENT_URL once it listens (at most 20 s).
start_agent() {
  local log=$1
  shift
  # Created here, not by the background job's redirection: under load the loop
  # below could read the log before the job has opened it (sed fails, set -e ends
  # the script with 2).
  : >"$log"
  "$GPULENS" serve --listen 127.0.0.1:0 "$@" >"$log" 2>&1 &
  AGENT_PID=$!
  E2E_PIDS+=("$AGENT_PID")
  AGENT_URL=""
  for _ in $(seq 200); do
    AGENT_URL=$(sed -n 's/.* on \(https\?:\/\/127\.0\.0\.1:[0-9]*\) (TLS.*/\1/p' "$log" | head -1)
    [[ -n "$AGENT_URL" ]] && return 0
    kill -0 "$AGENT_PID" 2>/dev/null || { cat "$log" >&2; fail "the agent exited"; }
    sleep 0.1
  done
  cat "$log" >&2
  fail "the agent did not start listening"
}

# wait_for SECONDS COMMAND...: retries COMMAND every 0.2 s until it succeeds.
wait_for() {
  local seconds=$1
  shift
  local tries=$((seconds * 5))
  for _ in $(seq "$tries"); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  return 1
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

: "${GPULENS:?set GPULENS to the gpulens binary}"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TRACES="$REPO/tests/fixtures/traces"

# long_recording SRC OUT REPEATS: SRC's samples and marks repeated with shifted
# times, for replays longer than the committed recordings.
long_recording() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
header, body = lines[0], [json.loads(l) for l in lines[1:]]
span = body[-1]["t"] - body[0]["t"] + 0.1
with open(sys.argv[2], "w") as out:
    out.write(header + "\n")
    for k in range(int(sys.argv[3])):
        for o in body:
            out.write(json.dumps(dict(o, t=round(o["t"] + k * span, 3))) + "\n")
PY
}
