#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Makes the recordings of a simulated fleet from the reference traces.

Each node gets an 8-GPU recording built from the two H200s of
multi-gpu-h200x2: GPU k replays source GPU k % 2 with its samples rotated by a
phase that depends on node and GPU (so that 1,000 GPUs do not move in step),
a new UUID, and a process whose pod UID names a pod of one of three namespaces
(every fourth GPU holds none: allocation below 1). Odd nodes are Slurm nodes
instead: their processes carry a Slurm job (`x_slurm`: one job per four GPUs,
of one of two accounts) and no pod, and Slurm's allocation (`x_allocation`, as the
prolog gives it) names the job on each of its GPUs; GPU 7 of an odd node is held
by a job that runs nothing on it (no process, no kernel). Even nodes carry the
kubelet's pod-resources allocation (`x_allocation`, scheduler kubernetes): each
pod's GPUs, and GPU 3, held by a notebook pod that runs nothing on it (GPU 7 stays
free). One extra node replays the
spin8 phase of diagnosis-h100 (a kernel that spins on 8 SMs: the signature of a
hung collective), which the agent reports as `stalled`.

Samples are kept at `--interval` (default 1 s, every tenth reference sample) so
that 125 agents replaying fit on a small machine; the diagnosis windows count
seconds, not samples.

Writes DIR/node-NNN.trace.jsonl, DIR/stalled.trace.jsonl and DIR/kube/log/pods/
(the kubelet's pod log directories that name the pods: --kube-log-dir DIR/kube/log).
"""
import argparse
import json
import os
import uuid

NAMESPACES = ["ml-research", "inference", "batch"]
ACCOUNTS = ["physics", "chemistry"]


def read(path):
    with open(path) as f:
        header = json.loads(next(f))
        lines = [json.loads(line) for line in f]
    return header, lines


def pod_of(node, gpu):
    """(namespace, pod, uid) of the pod on a GPU, or None for a free GPU."""
    if gpu % 4 == 3:
        return None
    ns = NAMESPACES[(node + gpu // 4) % len(NAMESPACES)]
    name = f"job-{node:03d}-{gpu // 4}"
    uid = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{ns}.{name}"))
    return ns, name, uid


def slurm_of(node, gpu):
    """The Slurm job on a GPU of an odd node (x_slurm), or None."""
    if node % 2 == 0 or gpu % 4 == 3:
        return None
    return {"job": str(4000 + 2 * node + gpu // 4), "step": "0", "user": "alice",
            "account": ACCOUNTS[(node // 2 + gpu // 4) % len(ACCOUNTS)], "from": "environ"}


def notebook_of(node):
    """The pod that holds GPU 3 of an even node and runs nothing on it."""
    return NAMESPACES[node % len(NAMESPACES)], f"notebook-{node:03d}"


def allocation_of(node, gpu):
    """The allocation of a GPU (x_allocation): Slurm's on odd nodes, the kubelet's
    pod-resources answer on even ones."""
    if node % 2 == 0:
        if gpu == 3:
            ns, name = notebook_of(node)
            return [{"scheduler": "kubernetes", "namespace": ns, "pod": name, "container": "jupyter"}]
        pod = pod_of(node, gpu)
        if pod is None:
            return []
        return [{"scheduler": "kubernetes", "namespace": pod[0], "pod": pod[1], "container": "main"}]
    if gpu == 7:  # held by a job that runs nothing on it
        return [{"scheduler": "slurm", "job": str(4900 + node), "user": "bob",
                 "account": ACCOUNTS[node // 2 % len(ACCOUNTS)], "partition": "gpu"}]
    job = slurm_of(node, gpu)
    if job is None:
        return []
    return [{"scheduler": "slurm", "job": job["job"], "user": job["user"], "account": job["account"],
             "partition": "gpu"}]


def thin(samples, interval):
    out, last = [], {}
    for s in samples:
        g = s["gpu"]
        if g in last and s["t"] - last[g] < interval * 0.999:
            continue
        last[g] = s["t"]
        out.append(s)
    return out


def node_trace(src_header, src_samples, node, gpus, interval, pids=None):
    per_gpu = {}
    for s in thin(src_samples, interval):
        per_gpu.setdefault(s["gpu"], []).append(s)
    nsrc = len(per_gpu)
    n = min(len(v) for v in per_gpu.values())
    times = [s["t"] for s in per_gpu[0][:n]]
    header = dict(src_header)
    header["host"] = f"node-{node:03d}"
    header["devices"] = []
    for k in range(gpus):
        d = dict(src_header["devices"][k % nsrc])
        d["index"] = k
        d["uuid"] = "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, f"gpulens-fleet-{node}-{k}"))
        header["devices"].append(d)
    rows = []
    for i, t in enumerate(times):
        for k in range(gpus):
            src = per_gpu[k % nsrc][(i + 7 * (node * gpus + k)) % n]
            s = dict(src)
            s["t"] = t
            s["gpu"] = k
            pod, job = pod_of(node, k), slurm_of(node, k)
            used = s.get("mem_used_mib", 1000)
            # One process per pod or Slurm job on its GPUs; `pids` gives real ones
            # (the kernel summary senders of fleet_sim.py: the agent believes only those).
            pid = (pids or {}).get((node, k // 4), 1000 + k)
            s["procs"] = []
            held = allocation_of(node, k)
            if held is not None:
                s["x_allocation"] = held
                if held and job is None and pod is None:
                    # Held and idle: the GPU's own readings of doing nothing.
                    s = {"t": t, "gpu": k, "gpu_util": 0, "sm_active": 0, "tensor_active": 0,
                         "dram_active": 0, "mem_used_mib": 500, "power_w": 70, "temp_c": 33,
                         "procs": [], "x_allocation": held}
            if job is not None:
                s["procs"] = [{"pid": pid, "name": "python", "used_mib": used, "x_slurm": job}]
            elif pod is not None:
                s["procs"] = [{"pid": pid, "name": "python", "used_mib": used, "pod": pod[2]}]
            rows.append(s)
    return header, rows


def stalled_trace(path, interval):
    header, lines = read(path)
    start = next(l["t"] for l in lines if l.get("mark") == "spin8:start")
    end = next(l["t"] for l in lines if l.get("mark") == "spin8:end")
    header = dict(header)
    header["host"] = "node-stalled"
    ns, name = "ml-research", "allreduce-0"
    uid = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{ns}.{name}"))
    samples = [l for l in lines if "mark" not in l and start - 5 <= l["t"] <= end]
    rows = []
    for s in thin(samples, interval):
        s = dict(s)
        s["procs"] = [{"pid": 764, "name": "python", "used_mib": s.get("mem_used_mib", 1000), "pod": uid}]
        rows.append(s)
    marks = [l for l in lines if l.get("mark") == "spin8:start"]
    return header, sorted(rows + marks, key=lambda r: r["t"]), (ns, name, uid), start


def write(path, header, rows):
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n")
        for r in rows:
            f.write(json.dumps(r) + "\n")


def main_args(traces, out, nodes, gpus=8, interval=1.0, pids=None):
    os.makedirs(out, exist_ok=True)
    src_header, src_lines = read(os.path.join(traces, "multi-gpu-h200x2.trace.jsonl"))
    src_samples = [l for l in src_lines if "gpu" in l and "t" in l and "mark" not in l]
    pods = set()
    for node in range(nodes):
        h, rows = node_trace(src_header, src_samples, node, gpus, interval, pids)
        write(os.path.join(out, f"node-{node:03d}.trace.jsonl"), h, rows)
        pods |= {pod_of(node, k) for k in range(gpus) if pod_of(node, k) and not slurm_of(node, k)}
    h, rows, pod, start = stalled_trace(os.path.join(traces, "diagnosis-h100.trace.jsonl"), interval)
    write(os.path.join(out, "stalled.trace.jsonl"), h, rows)
    pods.add(pod)
    for ns, name, uid in pods:
        os.makedirs(os.path.join(out, "kube", "log", "pods", f"{ns}_{name}_{uid}"), exist_ok=True)
    with open(os.path.join(out, "facts.json"), "w") as f:
        json.dump({"stalled_start": start, "stalled_first": rows[0]["t"], "stalled_pod": pod[1]}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", required=True, help="tests/fixtures/traces")
    ap.add_argument("--out", required=True)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--interval", type=float, default=1.0)
    a = ap.parse_args()
    main_args(a.traces, a.out, a.nodes, a.gpus, a.interval)

if __name__ == "__main__":
    main()
