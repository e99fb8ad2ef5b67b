#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 51: do launch_hook.so's counts and sampled durations tell the same top
kernels as a full trace of the same steps? A training-like step (bf16 matmuls of
three sizes through cuBLAS, layer norm, GELU, softmax, elementwise work, and a
torch.compile'd function that Triton launches) runs STEPS times after a warm-up.

    hook_attrib.py OUT_DIR --mode both  [--steps N] [--scale 1|16] [--tag NAME]
        under LD_PRELOAD=launch_hook.so with LAUNCH_HOOK_SAMPLE set: the steps run
        under torch.profiler (CUDA activities) with the hook's tally reset at their
        start, and one JSON line compares them (below).
    hook_attrib.py OUT_DIR --mode trace ...   torch.profiler only: TAG-trace-kernels.json
    hook_attrib.py OUT_DIR --mode hook ...    the hook only (no CUPTI in the process,
        whose own launch hooks would lengthen the host's side): TAG-hook.json
    hook_attrib.py --compare TRACE_KERNELS.json HOOK.json [--tag NAME]

The comparison: each kernel's share of GPU time in the trace (sum of durations)
beside the hook's estimates, launches x mean timed duration, with three means: every
timed launch ("all"), those behind earlier work when there are any ("busy"), and the
start put on the host's clock ("mapped", launch_hook.cpp's reap).
"""
import argparse
import ctypes
import json
import os


def step_fn(dev, scale):
    """scale 1: GPU-bound (the GPU has work queued at most launches); scale 16:
    launch-bound, the same kernels on sizes a sixteenth as wide."""
    import torch  # not needed for --compare
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


def trace_kernels(path):
    """{kernel name: [summed duration in ns, launches]} from a Chrome trace."""
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    out = {}
    for e in ev:
        if e.get("cat") == "kernel" and "dur" in e:
            k = out.setdefault(e["name"], [0.0, 0])
            k[0] += float(e["dur"]) * 1000.0
            k[1] += 1
    return out


ESTIMATORS = ("all", "busy", "mapped")


def mean_ns(x, how):
    if how == "busy" and x["busy_samples"]:
        return x["busy_ns"] / x["busy_samples"]
    if how == "mapped":
        return x["mapped_ns"] / x["mapped_samples"] if x["mapped_samples"] else 0.0
    return x["sampled_ns"] / x["samples"] if x["samples"] else 0.0


def compare(truth_kernels, hook, tag, steps, scale):
    """One JSON-able dict: the trace's top kernels beside the hook's estimates."""
    norm = lambda s: "".join(s.split())  # the trace's demangler spaces templates its own way
    fields = ("launches", "samples", "sampled_ns", "busy_samples", "busy_ns", "mapped_samples", "mapped_ns")
    agg = {}
    for k in hook["kernels"]:
        a_ = agg.setdefault(norm(k["name"]), dict.fromkeys(fields, 0))
        for f in fields:
            a_[f] += k.get(f, 0)
    est = {how: {n: x["launches"] * mean_ns(x, how) for n, x in agg.items()} for how in ESTIMATORS}
    te = {how: sum(e.values()) for how, e in est.items()}
    truth = {}
    for name, (ns, count) in truth_kernels.items():
        t = truth.setdefault(norm(name), [0.0, 0])
        t[0] += ns
        t[1] += count
    tt = sum(v[0] for v in truth.values())
    rows = []
    for name, (ns, count) in sorted(truth.items(), key=lambda kv: -kv[1][0])[:8]:
        x = agg.get(name, dict.fromkeys(fields, 0))
        row = {"kernel": name[:90], "trace_share": 100 * ns / tt, "trace_launches": count,
               "trace_mean_us": ns / count / 1000, "hook_launches": x["launches"],
               "hook_samples": x["samples"], "hook_busy_samples": x["busy_samples"]}
        for how in ESTIMATORS:
            row["hook_share_" + how] = 100 * est[how].get(name, 0.0) / te[how] if te[how] else 0.0
            row["hook_mean_us_" + how] = mean_ns(x, how) / 1000
        rows.append(row)
    out = {"tag": tag, "steps": steps, "scale": scale, "sample_mean": hook["sample_mean"],
           "trace_kernels": len(truth), "hook_kernels": len(agg),
           "unmatched_trace_share": 100 * sum(v[0] for k, v in truth.items() if k not in agg) / tt,
           "unnamed_launches": agg.get("?", {}).get("launches", 0),
           "launches_trace": sum(v[1] for v in truth.values()),
           "launches_hook": sum(x["launches"] for x in agg.values()),
           "trace_total_ms": tt / 1e6, "captured": hook["captured"], "skipped": hook["skipped"], "rows": rows}
    for how in ESTIMATORS:
        out["max_top5_gap_points_" + how] = max(abs(r["trace_share"] - r["hook_share_" + how]) for r in rows[:5])
        out["hook_total_ms_" + how] = te[how] / 1e6
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=".")
    ap.add_argument("--mode", choices=["both", "trace", "hook"], default="both")
    ap.add_argument("--compare", nargs=2, metavar=("TRACE_KERNELS", "HOOK"))
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--tag", default="attrib")
    ap.add_argument("--scale", type=int, default=1)
    a = ap.parse_args()
    if a.compare:
        with open(a.compare[0]) as f:
            truth = json.load(f)
        with open(a.compare[1]) as f:
            hook = json.load(f)
        print(json.dumps(compare(truth["kernels"], hook, a.tag, truth["steps"], truth["scale"])))
        return
    import torch  # not needed for --compare
    lib = ctypes.CDLL(None)
    if a.mode != "trace":
        lib.launch_hook_dump.argtypes = [ctypes.c_char_p]
    step = step_fn("cuda", a.scale)
    for _ in range(20):
        step()
    torch.cuda.synchronize()
    hook_path = os.path.join(a.out, a.tag + "-hook.json")
    if a.mode == "hook":
        lib.launch_hook_reset()
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
        lib.launch_hook_dump(hook_path.encode())
        return
    trace = os.path.join(a.out, a.tag + "-trace.json")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        if a.mode == "both":
            lib.launch_hook_reset()
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
        if a.mode == "both":
            lib.launch_hook_dump(hook_path.encode())
    prof.export_chrome_trace(trace)
    truth = trace_kernels(trace)
    os.remove(trace)
    if a.mode == "trace":
        with open(os.path.join(a.out, a.tag + "-trace-kernels.json"), "w") as f:
            json.dump({"steps": a.steps, "scale": a.scale, "kernels": truth}, f)
        return
    with open(hook_path) as f:
        hook = json.load(f)
    print(json.dumps(compare(truth, hook, a.tag, a.steps, a.scale)))


if __name__ == "__main__":
    main()
