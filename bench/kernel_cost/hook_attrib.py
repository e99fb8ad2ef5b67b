#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 51: do launch_hook.so's counts and sampled durations tell the same top
kernels as a full trace of the same steps? Run under LD_PRELOAD=launch_hook.so with
LAUNCH_HOOK_SAMPLE set. A training-like step (bf16 matmuls of three sizes through
cuBLAS, layer norm, GELU, softmax, elementwise work, and a torch.compile'd function
that Triton launches) runs STEPS times under torch.profiler (CUDA activities) with
the hook's tally reset at the start; then each kernel's share of GPU time from the
trace (sum of durations) beside the hook's estimate (launches x mean sampled time),
one JSON line.

    hook_attrib.py OUT_DIR [--steps 400] [--scale 1|16] [--tag NAME]
"""
import argparse
import ctypes
import json
import os

import torch


def step_fn(dev, scale):
    """scale 1: GPU-bound (the GPU has work queued at most launches); scale 16:
    launch-bound, the same kernels on sizes a sixteenth as wide."""
    n = lambda x: max(16, x // scale)
    a = torch.randn(n(4096), n(4096), device=dev, dtype=torch.bfloat16)
    b = torch.randn(n(4096), n(4096), device=dev, dtype=torch.bfloat16)
    c = torch.randn(n(1024), n(1024), device=dev, dtype=torch.bfloat16)
    d = torch.randn(n(256), n(8192), device=dev, dtype=torch.bfloat16)
    w = torch.randn(n(8192), n(2048), device=dev, dtype=torch.bfloat16)
    ln = torch.nn.LayerNorm(n(2048), device=dev, dtype=torch.bfloat16)

    @torch.compile
    def fused(t):
        return torch.sigmoid(t) * t + 0.5 * torch.tanh(t)

    def step():
        y = a @ b
        for _ in range(8):
            z = c @ c
        h = ln(d @ w)
        h = torch.nn.functional.gelu(h)
        s = torch.softmax(h.float(), dim=-1)
        for _ in range(6):
            s = s * 1.0001 + 0.001
        f = fused(y)
        return y.sum() + z.sum() + s.sum() + f.sum()

    return step


def trace_shares(path):
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    tot, n = {}, {}
    for e in ev:
        if e.get("cat") == "kernel" and "dur" in e:
            tot[e["name"]] = tot.get(e["name"], 0.0) + float(e["dur"]) * 1000.0
            n[e["name"]] = n.get(e["name"], 0) + 1
    return tot, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--tag", default="attrib")
    ap.add_argument("--scale", type=int, default=1)
    a = ap.parse_args()
    lib = ctypes.CDLL(None)
    lib.launch_hook_dump.argtypes = [ctypes.c_char_p]
    step = step_fn("cuda", a.scale)
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    trace = os.path.join(a.out, a.tag + "-trace.json")
    hook_path = os.path.join(a.out, a.tag + "-hook.json")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        lib.launch_hook_reset()
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
        lib.launch_hook_dump(hook_path.encode())
    prof.export_chrome_trace(trace)
    truth, truth_launches = trace_shares(trace)
    os.remove(trace)
    with open(hook_path) as f:
        hook = json.load(f)
    norm = lambda s: "".join(s.split())  # the trace's demangler spaces templates its own way
    agg = {}
    for k in hook["kernels"]:
        a_ = agg.setdefault(norm(k["name"]), {"launches": 0, "samples": 0, "ns": 0, "busy_samples": 0, "busy_ns": 0})
        for f, key in (("launches", "launches"), ("samples", "samples"), ("ns", "sampled_ns"),
                       ("busy_samples", "busy_samples"), ("busy_ns", "busy_ns")):
            a_[f] += k[key]

    def mean_ns(x, busy_first):
        if busy_first and x["busy_samples"]:
            return x["busy_ns"] / x["busy_samples"]
        return x["ns"] / x["samples"] if x["samples"] else 0.0

    # Ratio estimators per kernel: launches x mean sampled time, from every sample
    # ("all") or from the samples taken behind earlier work when there are any ("busy").
    est = {m: {n: x["launches"] * mean_ns(x, m == "busy") for n, x in agg.items()} for m in ("all", "busy")}
    truth_n = {norm(k): v for k, v in truth.items()}
    truth_count = {norm(k): v for k, v in truth_launches.items()}
    tt = sum(truth_n.values())
    te = {m: sum(e.values()) for m, e in est.items()}
    rows = []
    for name, v in sorted(truth_n.items(), key=lambda kv: -kv[1])[:8]:
        x = agg.get(name, {"launches": 0, "samples": 0, "ns": 0, "busy_samples": 0, "busy_ns": 0})
        rows.append({"kernel": name[:90], "trace_share": 100 * v / tt,
                     "hook_share": 100 * est["all"].get(name, 0.0) / te["all"] if te["all"] else 0.0,
                     "hook_share_busy": 100 * est["busy"].get(name, 0.0) / te["busy"] if te["busy"] else 0.0,
                     "trace_launches": truth_count[name], "trace_mean_us": v / truth_count[name] / 1000,
                     "hook_launches": x["launches"], "hook_samples": x["samples"],
                     "hook_busy_samples": x["busy_samples"],
                     "hook_mean_us": mean_ns(x, False) / 1000, "hook_busy_mean_us": mean_ns(x, True) / 1000})
    top5 = rows[:5]
    print(json.dumps({"tag": a.tag, "steps": a.steps, "scale": a.scale, "sample_mean": hook["sample_mean"],
                      "trace_kernels": len(truth_n), "hook_kernels": len(agg),
                      "unmatched_trace_share": 100 * sum(v for k, v in truth_n.items() if k not in agg) / tt,
                      "unnamed_launches": agg.get("?", {}).get("launches", 0),
                      "launches_trace": sum(truth_count.values()),
                      "launches_hook": sum(x["launches"] for x in agg.values()),
                      "max_top5_gap_points": max(abs(r["trace_share"] - r["hook_share"]) for r in top5),
                      "max_top5_gap_points_busy": max(abs(r["trace_share"] - r["hook_share_busy"]) for r in top5),
                      "hook_total_ms": te["all"] / 1e6, "hook_total_ms_busy": te["busy"] / 1e6,
                      "trace_total_ms": tt / 1e6,
                      "captured": hook["captured"], "skipped": hook["skipped"], "rows": rows}))

if __name__ == "__main__":
    main()
