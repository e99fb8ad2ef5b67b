#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The kubelet's pod-resources API, served by a real gRPC server (grpcio, from
# podresources_v1.proto compiled by protoc here) on a unix socket, and
# gpulens-serve on a fake libnvidia-ml.so.1 with two GPUs. Pods hold both GPUs:
# one by UUID with a process running, one by NVML index and idle, a shared
# replica, a pod without devices, a pod naming a GPU this node lacks. The agent
# must charge each GPU to its pods in /metrics and /api/v1/latest, say
# `pod-resources` in /api/v1/health, and, when the server turns slow, garbled,
# huge or failing, keep ticking, keep the last answer and say what went wrong.
# Started with the server failing, it must fall back to processes and say why.
#
# Never skips: a missing grpcio, protobuf or protoc fails with what to install.
set -euo pipefail
GPULENS=${1:?usage: kubelet_pod_resources.sh GPULENS FAKE_NVML_DIR}
fake_nvml_dir=${2:?}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
source "$here/lib.sh"

# Debian's grpcio is in Debian's Python, which a pyenv or venv python3 on PATH
# does not see: the server runs in whichever of the two has it.
py=
for candidate in python3 /usr/bin/python3; do
  if "$candidate" -c 'import grpc, google.protobuf' 2>/dev/null; then py=$candidate && break; fi
done
[[ -n $py ]] ||
  fail "python3-grpcio and python3-protobuf are needed (scripts/setup.sh --tests installs them)"
command -v protoc >/dev/null || fail "protoc is needed (Debian: protobuf-compiler; scripts/setup.sh --tests)"
command -v curl >/dev/null || fail "curl is needed"
# The agent asks only a socket of root's (the kubelet's) in a directory no one
# else can write (docs/kubernetes.md, "Permissions"): the test's server must be root's.
[[ $(id -u) -eq 0 ]] || fail "needs root: the agent trusts only root's pod-resources socket (CI runs the tests as root)"
protoc -I "$here" --python_out="$E2E_TMP" "$here/podresources_v1.proto"

sock=$E2E_TMP/kubelet.sock
pods=$E2E_TMP/pods.json
uuid0=GPU-fa4e0000-0000-0000-0000-000000000000  # the fake NVML's GPU 0
write_pods() {  # MODE [DELAY]
  python3 - "$pods" "$1" "${2:-0}" "$uuid0" <<'PY'
import json, os, sys
path, mode, delay, uuid0 = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
gpu = lambda *ids: {"resource": "nvidia.com/gpu", "ids": list(ids)}
spec = {"mode": mode, "delay_s": delay, "pods": [
    {"namespace": "ml", "name": "train-0", "containers": [{"name": "trainer", "devices": [gpu(uuid0)]}]},
    {"namespace": "ml", "name": "idle-1", "containers": [{"name": "notebook", "devices": [gpu("1")]}]},
    {"namespace": "dev", "name": "shared-a", "containers": [
        {"name": "nb", "devices": [{"resource": "nvidia.com/gpu.shared", "ids": [uuid0 + "::2"]}]}]},
    {"namespace": "web", "name": "cache", "containers": [{"name": "redis"}]},
    {"namespace": "dev", "name": "ghost", "containers": [{"name": "nb", "devices": [gpu("GPU-ffffffff")]}]},
]}
with open(path + ".tmp", "w") as f:
    json.dump(spec, f)
os.replace(path + ".tmp", path)
PY
}
calls() { cat "$pods.calls" 2>/dev/null || echo 0; }
calls_above() { (($(calls) > $1)); }
start_kubelet() {
  "$py" "$here/pod_resources_server.py" "$sock" "$pods" "$E2E_TMP" >"$E2E_TMP/kubelet.log" 2>&1 &
  KUBELET_PID=$!
  E2E_PIDS+=("$KUBELET_PID")
  wait_for 20 test -S "$sock" || { cat "$E2E_TMP/kubelet.log" >&2; fail "the gRPC server did not start"; }
}
health() { curl -fsS "$AGENT_URL/api/v1/health"; }
kube_health() {  # KEY: one field of source.kube_allocation
  health | python3 -c 'import json,sys; v=json.load(sys.stdin)["source"]["kube_allocation"]
for k in sys.argv[1].split("."): v = v[k]
print(v if not isinstance(v, (dict, list)) else json.dumps(v))' "$1"
}
ticks() { health | python3 -c 'import json,sys; print(json.load(sys.stdin)["source"]["ticks"])'; }

# The agent, with a process of its own on GPU 0 (the fake NVML lists it).
sleep 600 &
worker=$!
E2E_PIDS+=("$worker")
echo "0 $worker 1073741824" >"$E2E_TMP/gpu-processes"
export LD_LIBRARY_PATH=$fake_nvml_dir GPULENS_FAKE_NVML_GPUS=2 GPULENS_FAKE_NVML_PROCS=$E2E_TMP/gpu-processes

# 1. A kubelet failing from the start: no allocation is claimed, and health says why.
write_pods unavailable
start_kubelet
start_agent "$E2E_TMP/agent1.log" --interval 0.2 --pod-resources "$sock" --pod-resources-every 0.5 --slurm-allocations ''
wait_for 20 calls_above 0 || fail "the agent never called List"
wait_for 10 bash -c "curl -fsS $AGENT_URL/api/v1/health | grep -q UNAVAILABLE" ||
  fail "health does not say the kubelet failed: $(health)"
[[ $(kube_health source) == processes ]] || fail "not fallen back to processes: $(health)"
[[ $(kube_health fallback) == *"14 (UNAVAILABLE): kubelet is restarting"* ]] ||
  fail "the fallback does not give gRPC's status: $(kube_health fallback)"
curl -fsS "$AGENT_URL/metrics" | grep -q '^gpulens_gpu_allocated' &&
  fail "/metrics claims an allocation the kubelet never gave"
kill "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true

# 2. The kubelet answers: every held GPU charged to its pods.
write_pods ok
start_agent "$E2E_TMP/agent2.log" --interval 0.2 --pod-resources "$sock" --pod-resources-every 0.5 --slurm-allocations '' \
  --history "$E2E_TMP/history.db"
wait_for 20 bash -c "curl -fsS $AGENT_URL/metrics | grep -q 'pod=\"idle-1\"'" ||
  fail "no allocation series for the idle pod: $(health)"
metrics=$(curl -fsS "$AGENT_URL/metrics")
info() { grep '^gpulens_gpu_allocation_info{' <<<"$metrics" | grep "gpu=\"$1\"" | grep -c "namespace=\"$2\",pod=\"$3\",container=\"$4\"" || true; }
[[ $(info 0 ml train-0 trainer) == 1 ]] || fail "GPU 0 not charged to ml/train-0: $(grep allocation <<<"$metrics")"
[[ $(info 0 dev shared-a nb) == 1 ]] || fail "GPU 0's shared replica not charged to dev/shared-a"
[[ $(info 1 ml idle-1 notebook) == 1 ]] || fail "GPU 1 (index id) not charged to ml/idle-1"
[[ $(grep -c '^gpulens_gpu_allocation_info{' <<<"$metrics") == 3 ]] ||
  fail "expected 3 allocation series: $(grep allocation_info <<<"$metrics")"
grep -q 'scheduler="kubernetes"' <<<"$metrics" || fail "no scheduler label"
grep '^gpulens_gpu_allocated{' <<<"$metrics" | grep -q 'gpu="1".* 1$' || fail "GPU 1 not allocated"
grep '^gpulens_gpu_allocated{' <<<"$metrics" | grep -q 'pod=' && fail "the 0/1 gauge carries pod labels"
curl -fsS "$AGENT_URL/api/v1/latest" | python3 -c '
import json, sys
latest = json.load(sys.stdin)
g1 = [g for g in latest["gpus"] if g["gpu"] == 1][0]
want = [{"scheduler": "kubernetes", "namespace": "ml", "pod": "idle-1", "container": "notebook"}]
assert g1["allocation"] == want, g1["allocation"]
assert g1["processes"] == [], g1["processes"]
g0 = [g for g in latest["gpus"] if g["gpu"] == 0][0]
assert [a["pod"] for a in g0["allocation"]] == ["train-0", "shared-a"], g0["allocation"]
' || fail "/api/v1/latest does not hold the allocation"
[[ $(kube_health source) == pod-resources ]] || fail "health: $(health)"
[[ $(kube_health pods) == 3 ]] || fail "health counts $(kube_health pods) pods holding GPUs, not 3"
[[ $(kube_health skipped.unknown_gpu) == 1 ]] || fail "the ghost pod's GPU was not counted unknown"
# The history keeps who held which GPU: the idle pod is listed with its span.
history_pods() {
  curl -fsS "$AGENT_URL/api/v1/kubernetes/pods?from=-1h" | python3 -c '
import json, sys
pods = {(p["namespace"], p["pod"], p["gpu"]): p for p in json.load(sys.stdin)["pods"]}
idle = pods[("ml", "idle-1", 1)]
assert idle["last"] >= idle["first"] and idle["held_s"] == idle["last"] - idle["first"], idle
assert ("ml", "train-0", 0) in pods and ("dev", "shared-a", 0) in pods, sorted(pods)
assert not any(p[1] == "ghost" for p in pods), sorted(pods)
'
}
wait_for 20 history_pods || fail "the history does not list the pods: $(curl -sS "$AGENT_URL/api/v1/kubernetes/pods?from=-1h")"

# 3. Misbehaviour: the last answer stays (30 s), the error is said, ticks go on.
expect_error() {  # MODE WORDS
  local before
  before=$(calls)
  write_pods "$1" 3
  wait_for 20 calls_above "$before" || fail "mode $1: no call"
  wait_for 15 bash -c "curl -fsS $AGENT_URL/api/v1/health | grep -qF '$2'" ||
    fail "mode $1: health does not say '$2': $(health)"
  [[ $(kube_health source) == pod-resources ]] || fail "mode $1: the last answer was dropped at once"
}
t0=$(ticks)
expect_error slow "gave no answer within 2.0 s"
t1=$(ticks)
# A 3-s call with a 2-s deadline happened between t0 and t1: the sampler's
# 0.2-s ticks went on. A stalled sampler would add none; 10 are due in the 2 s
# alone, and a loaded machine may skip slots, so at least 3.
((t1 - t0 >= 3)) || fail "the sampler stalled while the kubelet was slow: $t0 -> $t1 ticks"
expect_error garbage "not a ListPodResourcesResponse"
expect_error huge "answered more than 16777216 bytes"
expect_error unavailable "14 (UNAVAILABLE)"
kill "$KUBELET_PID"
wait "$KUBELET_PID" 2>/dev/null || true
wait_for 15 bash -c "curl -fsS $AGENT_URL/api/v1/health | grep -qE 'nothing listens|no socket|closed the connection'" ||
  fail "a kubelet gone is not said: $(health)"
echo "PASS: pods charged by the kubelet's answer; slow, garbled, huge, failing and gone kubelets said"
