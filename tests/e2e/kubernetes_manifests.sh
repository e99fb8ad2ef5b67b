#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/kubernetes: every object validates against the Kubernetes API schema and
# the prometheus-operator CRD schemas (npm: kubernetes-models, installed in
# deploy/check by scripts/setup.sh), the kustomization lists files that exist,
# the PrometheusRule is the current deploy/prometheus rules, and the DaemonSet keeps what docs/fleet.md promises (hostPID, read-only root,
# health probes, the agent_* relabelings). Exit 77 (skipped) without node or
# without the installed packages.
set -euo pipefail
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed" >&2; exit 77; }
repo="$(cd "$(dirname "$0")/../.." && pwd)"
command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed (Debian: nodejs)" >&2; exit 77; }
[[ -d "$repo/deploy/check/node_modules/kubernetes-models" ]] ||
  { echo "SKIP: deploy/check/node_modules missing (scripts/setup.sh runs npm ci there)" >&2; exit 77; }
k8s="$repo/deploy/kubernetes"
# The PrometheusRule is the rule files of deploy/prometheus, regenerated.
fresh=$(mktemp)
trap 'rm -f "$fresh"' EXIT
python3 "$k8s/make_prometheusrule.py" "$fresh"
cmp -s "$fresh" "$k8s/base/prometheusrule.yaml" ||
  { echo "FAIL: base/prometheusrule.yaml is stale: run deploy/kubernetes/make_prometheusrule.py" >&2; exit 1; }
# The kernels-socket component (a JSON 6902 patch) applied to the base DaemonSet, as
# kustomize applies it, must still be a valid DaemonSet that listens on the socket it
# mounts.
patched=$(mktemp --suffix=.yaml)
trap 'rm -f "$fresh" "$patched"' EXIT
python3 - "$k8s" "$patched" <<'PY'
import os, sys, yaml
k8s, out = sys.argv[1], sys.argv[2]
comp = os.path.join(k8s, "components", "kernels-socket")
kust = yaml.safe_load(open(os.path.join(comp, "kustomization.yaml")))
assert kust["kind"] == "Component", "kernels-socket is not a kustomize Component"
ds = yaml.safe_load(open(os.path.join(k8s, "base", "daemonset.yaml")))
for p in kust["patches"]:
    assert p["target"] == {"kind": "DaemonSet", "name": ds["metadata"]["name"]}, p["target"]
    for op in yaml.safe_load(open(os.path.join(comp, p["path"]))):
        assert op["op"] == "add" and op["path"].endswith("/-"), f"only appends are applied here: {op}"
        node = ds
        for key in op["path"].strip("/").split("/")[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node.append(op["value"])
spec = ds["spec"]["template"]["spec"]
c = spec["containers"][0]
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
volumes = {v["name"]: v for v in spec["volumes"]}
socket = next(a.split("=", 1)[1] for a in c["args"] if a.startswith("--kernels-socket="))
mount = mounts.get(os.path.dirname(socket))
assert mount and volumes[mount]["hostPath"]["path"] == os.path.dirname(socket), \
    f"the socket {socket} is not on a mounted host directory"
yaml.safe_dump(ds, open(out, "w"))
PY
node "$repo/deploy/check/check-kubernetes.mjs" "$k8s"/base/*.yaml "$k8s"/podmonitor.yaml "$patched"
python3 - "$k8s" <<'PY'
import os, sys, yaml
k8s = sys.argv[1]
base = os.path.join(k8s, "base")
kust = yaml.safe_load(open(os.path.join(base, "kustomization.yaml")))
problems = []
for r in kust["resources"]:
    if not os.path.exists(os.path.join(base, r)):
        problems.append(f"kustomization lists {r}, which does not exist")
listed = set(kust["resources"]) | {"kustomization.yaml"}
for f in os.listdir(base):
    if f.endswith(".yaml") and f not in listed:
        problems.append(f"{f} is in base/ but not in the kustomization")
docs = {}
for f in kust["resources"]:
    for d in yaml.safe_load_all(open(os.path.join(base, f))):
        docs[d["kind"]] = d
        if d["kind"] != "Namespace" and d["metadata"].get("namespace") != kust["namespace"]:
            problems.append(f"{d['kind']} is not in namespace {kust['namespace']}")
ds = docs["DaemonSet"]["spec"]["template"]["spec"]
c = ds["containers"][0]
port = c["ports"][0]
checks = {
    "hostPID": ds.get("hostPID") is True,
    "read-only root": c["securityContext"].get("readOnlyRootFilesystem") is True,
    "liveness on /api/v1/health": c["livenessProbe"]["httpGet"]["path"] == "/api/v1/health",
    "readiness on /api/v1/health": c["readinessProbe"]["httpGet"]["path"] == "/api/v1/health",
    "history on a hostPath": any(v["name"] == "history" and "hostPath" in v for v in ds["volumes"]),
    "GPU-node selector": bool(ds.get("nodeSelector")),
    "GPU taint tolerated": any(t.get("key") == "nvidia.com/gpu" for t in ds.get("tolerations", [])),
    "NVIDIA_VISIBLE_DEVICES": any(e["name"] == "NVIDIA_VISIBLE_DEVICES" for e in c["env"]),
    "every capability dropped": c["securityContext"].get("capabilities", {}).get("drop") == ["ALL"]
                                and c["securityContext"].get("allowPrivilegeEscalation") is False,
    "pod-resources socket mounted read-only": any(
        m["name"] == "pod-resources" and m.get("readOnly") is True
        and m["mountPath"] == "/var/lib/kubelet/pod-resources" for m in c["volumeMounts"])
        and any(v["name"] == "pod-resources" and v.get("hostPath", {}).get("path")
                == "/var/lib/kubelet/pod-resources" for v in ds["volumes"])
        and "--pod-resources=/var/lib/kubelet/pod-resources/kubelet.sock" in c["args"],
    "selector matches pod labels": all(docs["DaemonSet"]["spec"]["template"]["metadata"]["labels"].get(k) == v
                                       for k, v in docs["DaemonSet"]["spec"]["selector"]["matchLabels"].items()),
    "service selects the pods": all(docs["DaemonSet"]["spec"]["template"]["metadata"]["labels"].get(k) == v
                                    for k, v in docs["Service"]["spec"]["selector"].items()),
    "service port names the container port": docs["Service"]["spec"]["ports"][0]["targetPort"] == port["name"],
    "servicemonitor port is the service's": docs["ServiceMonitor"]["spec"]["endpoints"][0]["port"]
                                            == docs["Service"]["spec"]["ports"][0]["name"],
}
mon = yaml.safe_load(open(os.path.join(k8s, "podmonitor.yaml")))
for name, endpoints in (("ServiceMonitor", docs["ServiceMonitor"]["spec"]["endpoints"]),
                        ("PodMonitor", mon["spec"]["podMetricsEndpoints"])):
    rl = endpoints[0]["relabelings"]
    checks[f"{name} drops the target's pod labels"] = any(
        r.get("action") == "labeldrop" and r.get("regex") == "namespace|pod|container" for r in rl)
    checks[f"{name} keeps them as agent_*"] = {r.get("targetLabel") for r in rl} >= {
        "agent_namespace", "agent_pod", "agent_container"}
for name, ok in checks.items():
    if not ok:
        problems.append("DaemonSet/Service/monitors: " + name)
if problems:
    sys.exit("\n".join(problems))
print(f"kustomization and {len(checks)} structural checks pass")
PY
