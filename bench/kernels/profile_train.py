#!/usr/bin/env python3
"""Runs a Python script under torch.profiler (CUDA activities only, from before
the script touches CUDA to its end) and writes what the profiler saw as JSON:
per kernel name the count and total time, and the idle share of the GPU (no
kernel, copy or memset on any stream) between the first and the last GPU
activity -- the same quantities, over the same window, that compare.py takes
from a `gpulens run --kernels` recording.

    python3 profile_train.py OUT.json SCRIPT.py ARGS...
"""
import json
import os
import runpy
import sys
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def summarize_chrome(path):
    with open(path) as f:
        trace = json.load(f)
    kernels = {}
    intervals = []
    copies = 0
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X" or e.get("cat") not in GPU_CATS:
            continue
        ts, dur = float(e["ts"]), float(e.get("dur", 0))
        intervals.append((ts * 1000.0, (ts + dur) * 1000.0))  # ns
        if e["cat"] == "kernel":
            k = kernels.setdefault(e["name"][:1000], [0, 0.0])
            k[0] += 1
            k[1] += dur * 1000.0
        else:
            copies += 1
    return kernels, intervals, copies


def idle_stats(intervals):
    """Union of intervals; idle share and gap histogram over [first start, last end]."""
    if not intervals:
        return {}
    intervals.sort()
    busy = 0.0
    gaps = []
    cur_s, cur_e = intervals[0]
    for s, e in intervals[1:]:
        if s <= cur_e:
            cur_e = max(cur_e, e)
        else:
            busy += cur_e - cur_s
            gaps.append(s - cur_e)
            cur_s, cur_e = s, e
    busy += cur_e - cur_s
    window = cur_e - intervals[0][0]
    edges = [10e3, 100e3, 1e6, 10e6]  # ns
    hist = [0] * 5
    hist_ns = [0.0] * 5
    for g in gaps:
        i = sum(g >= x for x in edges)
        hist[i] += 1
        hist_ns[i] += g
    return {"window_ns": window, "busy_ns": busy, "idle_share": 1 - busy / window if window > 0 else 0,
            "gaps": len(gaps), "gap_hist_count": hist, "gap_hist_ns": hist_ns}


def main():
    out, script, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.argv = [script] + rest
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                raise
        torch.cuda.synchronize()
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(tmp)
    kernels, intervals, copies = summarize_chrome(tmp)
    os.unlink(tmp)
    result = {"source": "torch.profiler", "torch": torch.__version__,
              "kernel_launches": sum(v[0] for v in kernels.values()),
              "kernel_ns": sum(v[1] for v in kernels.values()), "copies_and_memsets": copies,
              "kernels": {k: {"count": v[0], "total_ns": v[1]} for k, v in kernels.items()},
              **idle_stats(intervals)}
    with open(out, "w") as f:
        json.dump(result, f)
    print(f"profile_train: torch.profiler saw {result['kernel_launches']} kernels, "
          f"{result['kernel_ns'] / 1e6:.1f} ms of kernel time, idle share "
          f"{result.get('idle_share', 0) * 100:.1f} %", file=sys.stderr)


if __name__ == "__main__":
    main()
