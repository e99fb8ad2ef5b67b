#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Slurm job over two nodes gets one verdict: two agents (gpulens-serve replaying
# each node's recording into a history of its own, on loopback) serve their part
# of job 77 at /api/v1/slurm/job; both nodes' epilogs run at once, as slurmd runs
# them when a job ends; the first node of the job's node list writes one summary
# naming both nodes and all four GPUs, the second writes nothing, and a node whose
# agent does not answer is named as missing. A fake scontrol expands the node list.
set -euo pipefail
gpulens=${1:?usage: slurm_multinode.sh GPULENS GPULENS_SERVE EPILOG}
serve=${2:?}
epilog=${3:?}
epilog=$(cd "$(dirname "$epilog")" && pwd)/$(basename "$epilog")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-multinode.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for log in "$tmp"/*.log "$tmp"/*.err; do
    [[ -s $log ]] && { echo "---- $(basename "$log")" >&2; tail -n 20 "$log" >&2; }
  done
  exit 1
}
until_ok() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# Each node's recording: 30 s of two GPUs, a process of job 77 (step 0) on each;
# node-a's GPUs work (SMs 80 %), node-b's wait (SMs 5 %): one job, uneven nodes.
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
for node, sm in (("node-a", 80), ("node-b", 5)):
    with open(f"{tmp}/{node}.jsonl", "w") as f:
        devices = [{"index": g, "uuid": f"GPU-{node}-{g}", "name": "NVIDIA H100 80GB HBM3",
                    "sm_count": 132, "mem_total_mib": 81559} for g in range(2)]
        f.write(json.dumps({"format": "gpu-trace", "version": 1, "host": node,
                            "interval_s": 1, "devices": devices}) + "\n")
        for i in range(30):
            for g in range(2):
                proc = {"pid": 1000 + g, "name": "python", "used_mib": 40000,
                        "x_slurm": {"job": "77", "step": "0", "user": "alice",
                                    "account": "physics", "from": "cgroup"}}
                f.write(json.dumps({"t": 1795200000 + i, "gpu": g, "gpu_util": 100,
                                    "sm_active": sm, "tensor_active": sm / 2,
                                    "mem_used_mib": 40000, "power_w": 300,
                                    "procs": [proc]}) + "\n")
PY

# The two agents, each with its own history, listening on ports the kernel picks.
for node in node-a node-b; do
  "$serve" --replay "$tmp/$node.jsonl" --speed 0 --history "$tmp/$node.db" --hostname "$node" \
    --listen 127.0.0.1:0 --log-level info >"$tmp/$node.log" 2>&1 &
  pids+=($!)
done
port_of() { grep -oE 'on http://127\.0\.0\.1:[0-9]+' "$tmp/$1.log" | head -n 1 | cut -d: -f3; }
declare -A url
for node in node-a node-b; do
  until_ok 20 port_of "$node" || fail "the agent of $node did not start listening within 20 s"
  url[$node]=http://127.0.0.1:$(port_of "$node")
  # The replay is over and the history holds the job once the part answers.
  until_ok 30 curl -fsS -o "$tmp/$node.part" "${url[$node]}/api/v1/slurm/job?id=77" ||
    fail "the agent of $node did not serve its part of job 77 within 30 s"
done
head -n 1 "$tmp/node-a.part" | grep -q '"x_slurm_job"' || fail "node-a's part has no x_slurm_job header"
code=$(curl -s -o /dev/null -w '%{http_code}' "${url[node-a]}/api/v1/slurm/job?id=78")
[[ $code == 404 ]] || fail "a job node-a never saw answered HTTP $code, not 404"
code=$(curl -s -o /dev/null -w '%{http_code}' "${url[node-a]}/api/v1/slurm/job?id=12abc")
[[ $code == 400 ]] || fail "a malformed job id answered HTTP $code, not 400"

# slurmd's epilogs, with a fake scontrol for the node list, a shared summary
# directory, and no settling time (the histories are complete).
mkdir -p "$tmp/bin" "$tmp/jobs" "$tmp/alloc"
cat >"$tmp/bin/scontrol" <<'FAKE'
#!/bin/sh
[ "$1 $2" = "show hostnames" ] && printf 'node-a\nnode-b\n'
FAKE
chmod 755 "$tmp/bin/scontrol"
epilog_on() {
  env -i PATH="$tmp/bin:/usr/bin:/bin" SLURM_JOB_ID=77 SLURM_JOB_USER=alice \
    SLURM_JOB_NODELIST='node-[a-b]' SLURMD_NODENAME="$1" GPULENS_EPILOG_CONF=/nonexistent \
    GPULENS_BIN="$gpulens" GPULENS_SLURM_DIR="$tmp/jobs" GPULENS_SLURM_SETTLE=0 \
    GPULENS_ALLOC_DIR="$tmp/alloc" GPULENS_SLURM_AGENTS="$2" \
    sh "$epilog" 2>"$tmp/epilog-$1.err"
}
agents="node-a=${url[node-a]} node-b=${url[node-b]}"
epilog_on node-a "$agents" &
a=$!
epilog_on node-b "$agents" &
b=$!
wait "$a" || fail "node-a's epilog exited non-zero"
wait "$b" || fail "node-b's epilog exited non-zero"
[[ -s $tmp/jobs/77.txt ]] || fail "no summary of job 77"
grep -q "^  nodes    node-a GPUs 0, 1; node-b GPUs 2, 3 (its 0, 1)$" "$tmp/jobs/77.txt" ||
  fail "the summary does not name both nodes and their GPUs: $(head -n 8 "$tmp/jobs/77.txt")"
grep -q "^gpulens: Slurm job 77 on node-a, node-b, " "$tmp/jobs/77.txt" ||
  fail "the summary's first line does not name the job on both nodes: $(head -n 1 "$tmp/jobs/77.txt")"
python3 - "$tmp/jobs/77.json" <<'PY' || fail "77.json: see above"
import json, sys
v = json.load(open(sys.argv[1]))
if len(v["gpus"]) != 4:
    sys.exit(f"FAIL: the verdict covers {len(v['gpus'])} GPUs, expected 4 (two nodes of two)")
nodes = v["source"]["slurm"]["nodes"]
if len(nodes) != 2:
    sys.exit(f"FAIL: source.slurm.nodes is {nodes}")
sm = v["funnel"]["sm_active"]
if not 0.40 < sm < 0.45:  # (0.80 + 0.80 + 0.05 + 0.05) / 4 = 0.425
    sys.exit(f"FAIL: SM-active {sm}, expected the four GPUs' mean 0.425")
PY
grep -q "node node-a writes the job's summary" "$tmp/epilog-node-b.err" ||
  fail "node-b's epilog did not leave the summary to node-a: $(cat "$tmp/epilog-node-b.err")"
ls "$tmp/jobs" | grep -qv '^77\.\(txt\|json\)$' && fail "files other than 77.txt and 77.json: $(ls "$tmp/jobs")"

# node-b's agent gone: node-a's summary still comes, naming node-b as missing.
rm -f "$tmp/jobs/77.txt" "$tmp/jobs/77.json"
epilog_on node-a "node-a=${url[node-a]} node-b=http://127.0.0.1:1" ||
  fail "node-a's epilog exited non-zero with node-b's agent gone"
grep -q "^  missing  nodes node-b: their agents did not answer" "$tmp/jobs/77.txt" ||
  fail "the summary does not name node-b as missing: $(head -n 6 "$tmp/jobs/77.txt")"
grep -q "^  nodes    node-a GPUs 0, 1$" "$tmp/jobs/77.txt" ||
  fail "the summary should hold node-a's GPUs alone: $(head -n 8 "$tmp/jobs/77.txt")"
echo "slurm_multinode: one summary of job 77 over node-a and node-b; a missing node named"
