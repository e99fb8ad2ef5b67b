#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End to end, as a fleet runs it (docs/kernels-agent.md, "Launch counts"): a job
# started without `gpulens run`, with libgpulens_launches.so preloaded and
# GPULENS_LAUNCHES_AGENT naming the agent's socket, reaches /metrics of a running
# `gpulens-serve`. The job is the stand-in CUDA job (tests/fakes/launch_fake_job.cpp,
# which prints what it launched); a replayed recording lists its pid on GPU 0.
# gpulens_kernel_launches_total on GPU 0 must add up to every launch the job made,
# under its kernels' names, and GPU 1 must have none.
#
#   GPULENS_SERVE_BIN=... GPULENS_LAUNCHES_LIB=... GPULENS_LAUNCH_FAKE_JOB=... \
#     tests/e2e/launch_counts_agent.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/e2e/find_tools.sh

find_binary gpulens-serve GPULENS_SERVE_BIN
lib=${GPULENS_LAUNCHES_LIB:?the launch counter library}
job=${GPULENS_LAUNCH_FAKE_JOB:?the stand-in CUDA job}

work=$(mktemp -d)
server_pid=""
job_pid=""
cleanup() {
  if [[ -n "$job_pid" ]]; then kill "$job_pid" 2>/dev/null || true; fi
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "launch_counts_agent: $*" >&2
  cat "$work"/serve.log >&2 || true
  exit 1
}

# The job's pid must be in the recording before it launches: it waits for a file,
# then becomes the counted job by exec (the same pid). It sends at its exit only
# (GPULENS_LAUNCHES_EVERY_S=0), so that a slow machine cannot show /metrics a periodic
# send's part of the counts.
bash -c 'while [[ ! -e "$1/go" ]]; do sleep 0.05; done
exec env -u GPULENS_LAUNCHES_DIR GPULENS_LAUNCHES_EVERY_S=0 LD_PRELOAD="$2" \
  GPULENS_LAUNCHES_AGENT="$1/kernels.sock" \
  "$3" cudart 1000 >"$1/made.json"' _ "$work" "$lib" "$job" &
job_pid=$!
trace="$work/short.trace.jsonl"
python3 tests/e2e/trace_with_process.py tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl \
  "$trace" "$job_pid" 10

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" --replay "$trace" --speed 100 --listen "127.0.0.1:$port" \
  --kernels-socket "$work/kernels.sock" >"$work/serve.log" 2>&1 &
server_pid=$!
base="http://127.0.0.1:$port"
ended=""
for _ in $(seq 1 300); do
  if curl -fsS "$base/api/v1/health" 2>/dev/null | grep -q '"ended": *true'; then ended=1; break; fi
  kill -0 "$server_pid" 2>/dev/null || fail "gpulens-serve exited"
  sleep 0.2
done
[[ -n "$ended" ]] || fail "the replay did not end"

touch "$work/go"
wait "$job_pid" || fail "the job failed"
job_pid=""
# The job's last send is at its exit; the agent reads it on its own thread.
for _ in $(seq 1 100); do
  curl -fsS "$base/metrics" >"$work/metrics.txt"
  grep -q '^gpulens_kernel_launches_total{' "$work/metrics.txt" && break
  sleep 0.1
done
curl -fsS "$base/api/v1/health" >"$work/health.json"
python3 - "$work/made.json" "$work/metrics.txt" "$work/health.json" <<'PY' || fail "the counts differ"
import json, re, sys
made = json.load(open(sys.argv[1]))
health = json.load(open(sys.argv[3]))
by_gpu = {}
graphs = {}
for line in open(sys.argv[2]):
    m = re.match(r'(gpulens_kernel_launches_total|gpulens_graph_launches_total)\{(.*)\} (\S+)$', line)
    if not m:
        continue
    labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
    if m.group(1) == "gpulens_graph_launches_total":
        graphs[labels["gpu"]] = float(m.group(3))
    else:
        by_gpu.setdefault(labels["gpu"], {})[labels["kernel"]] = float(m.group(3))
want = {k: float(v) for k, v in made["made"].items()}
got = by_gpu.get("0", {})
named = {k: v for k, v in got.items() if k != "other"}
ok = True
if sum(got.values()) != sum(want.values()):
    print(f"GPU 0: {sum(got.values())} launches, the job made {sum(want.values())}", file=sys.stderr)
    ok = False
if named != {k: v for k, v in want.items() if k in named} or not named:
    print(f"GPU 0's kernels {named} are not the job's {want}", file=sys.stderr)
    ok = False
if graphs.get("0") != float(made["graphs"]):
    print(f"GPU 0: {graphs.get('0')} graph launches, the job made {made['graphs']}", file=sys.stderr)
    ok = False
if "1" in by_gpu:
    print(f"GPU 1 has launches it was not fed: {by_gpu['1']}", file=sys.stderr)
    ok = False
if health["kernels"]["launch_records"] != 1:
    print(f"health says not the one launch record: {health['kernels']}", file=sys.stderr)
    ok = False
print(f"GPU 0: {int(sum(got.values()))} launches of {len(named)} named kernels, "
      f"{int(graphs.get('0', 0))} graph launches, {health['kernels']['launch_records']} records")
sys.exit(0 if ok else 1)
PY
echo "launch_counts_agent: every launch of a job outside gpulens run reached /metrics"
