#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
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
    # Kineto writes event times in microseconds from baseTimeNanoseconds (Unix
    # time) where it has that field; older versions wrote Unix microseconds.
    base_ns = float(trace.get("baseTimeNanoseconds", 0))
    for e in trace.get("traceEvents", []):
        if e.get("ph") != "X" or e.get("cat") not in GPU_CATS:
            continue
        ts, dur = float(e["ts"]), float(e.get("dur", 0))
        intervals.append((base_ns + ts * 1000.0, base_ns + (ts + dur) * 1000.0))  # Unix ns
        if e["cat"] == "kernel":
            k = kernels.setdefault(e["name"][:1000], [0, 0.0])
            k[0] += 1
            k[1] += dur * 1000.0
        else:
            copies += 1
    return kernels, intervals, copies


def idle_stats(intervals, window=None):
    """Union of intervals; idle share and gap histogram over [first start, last
    end], or over `window` = (lo_ns, hi_ns) with the intervals clipped to it (the
    marked steps: the same steps in two runs, whatever else each run did)."""
    if window:
        lo, hi = window
        intervals = [(max(s, lo), min(e, hi)) for s, e in intervals if e > lo and s < hi]
        intervals.append((lo, lo))  # the window's edges bound the first and last gap
        intervals.append((hi, hi))
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


def step_window(marks_path):
    """(first, last) step mark in Unix ns, as gpulens' kernel view takes it."""
    steps = []
    if os.path.exists(marks_path):
        with open(marks_path) as f:
            for line in f:
                m = json.loads(line)
                if m.get("mark") == "step":
                    steps.append(m["t"] * 1e9)
    return (min(steps), max(steps), len(steps) - 1) if len(steps) >= 2 else None


def main():
    out, script, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.argv = [script] + rest
    # The script's step marks, so that the idle share can be taken over the same
    # steps as in the gpulens run (contrib/gpulens_marks.py writes them).
    fd, marks = tempfile.mkstemp(suffix=".marks.jsonl")
    os.close(fd)
    os.environ["GPULENS_MARKS"] = marks
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
    window = step_window(marks)
    os.unlink(marks)
    steps = {}
    if window:
        st = idle_stats(list(intervals), window[:2])
        steps = {"steps": window[2], "steps_window_ns": st.get("window_ns", 0),
                 "steps_idle_share": st.get("idle_share", 0), "steps_gap_hist_count": st.get("gap_hist_count"),
                 "steps_gap_hist_ns": st.get("gap_hist_ns"),
                 "activity_covers_steps": bool(intervals) and min(i[0] for i in intervals) <= window[0]
                 and max(i[1] for i in intervals) >= window[1]}
    result = {"source": "torch.profiler", "torch": torch.__version__, **steps,
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
