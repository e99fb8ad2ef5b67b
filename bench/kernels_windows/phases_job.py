#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A job of two unlike phases, for issue 50 (does the kernel view represent the
job it samples?). Runs PHASES in order, each NAME:SECONDS:

  gemm    solid GEMMs back to back: the GPU never waits
  bursts  a few short GEMMs, then a sleep: the GPU waits most of the time

and measures its own GPU busy time with CUDA events: each unit of work (a batch
of GEMMs, or one burst) is bracketed by two events on the one stream, and the
units never overlap, so the sum of their elapsed times is the time the GPU had
the job's work. Wall time runs from the first launch to the last event's end.
Prints one JSON line: {"job_busy_share", "busy_s", "wall_s", "phases": [...]}.
Under `gpulens run` each phase is marked NAME:start / NAME:end ($GPULENS_MARKS),
so the report reconciles each phase too.

  python3 phases_job.py gemm:10 bursts:10
  python3 phases_job.py --repeat 6 gemm:10 bursts:10     # a 2-minute job
"""
import argparse
import json
import os
import sys
import time

import torch


def mark(name):
    path = os.environ.get("GPULENS_MARKS")
    if not path:
        return
    line = json.dumps({"t": time.time(), "mark": name}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


class Meter:
    """Event-timed GPU busy time of units of work that do not overlap."""

    def __init__(self):
        self.pending = []  # (start, end) events not yet read
        self.busy_s = 0.0

    def unit(self, work):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        work()
        end.record()
        self.pending.append((start, end))
        # Keep at most two units in flight: the queue stays short (a window's
        # close sees what it launched) and the GPU never starves in `gemm`.
        while len(self.pending) > 2:
            self.read_one()

    def read_one(self):
        s, e = self.pending.pop(0)
        e.synchronize()
        self.busy_s += s.elapsed_time(e) / 1e3

    def drain(self):
        while self.pending:
            self.read_one()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("phases", nargs="+", help="NAME:SECONDS, NAME gemm or bursts")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--size", type=int, default=8192, help="gemm phase: matrix side")
    ap.add_argument("--burst-size", type=int, default=2048)
    ap.add_argument("--burst-gemms", type=int, default=8)
    ap.add_argument("--sleep-ms", type=float, default=30.0)
    a = ap.parse_args()
    plan = []
    for _ in range(a.repeat):
        for p in a.phases:
            name, seconds = p.split(":")
            if name not in ("gemm", "bursts"):
                sys.exit(f"unknown phase {name}")
            plan.append((name, float(seconds)))

    dev = torch.device("cuda")
    big = torch.randn(a.size, a.size, device=dev, dtype=torch.bfloat16)
    small = torch.randn(a.burst_size, a.burst_size, device=dev, dtype=torch.bfloat16)
    out_big = torch.empty_like(big)
    out_small = torch.empty_like(small)
    torch.cuda.synchronize()

    def gemms():
        for _ in range(4):
            torch.matmul(big, big, out=out_big)

    def burst():
        for _ in range(a.burst_gemms):
            torch.matmul(small, small, out=out_small)

    meter = Meter()
    t0 = time.perf_counter()
    rows = []
    for i, (name, seconds) in enumerate(plan):
        label = f"{name}{i}" if a.repeat > 1 or len(plan) > 2 else name
        mark(f"{label}:start")
        start = time.perf_counter()
        busy_before = meter.busy_s
        while time.perf_counter() - start < seconds:
            if name == "gemm":
                meter.unit(gemms)
            else:
                meter.unit(burst)
                meter.drain()
                time.sleep(a.sleep_ms / 1e3)
        meter.drain()
        end = time.perf_counter()
        mark(f"{label}:end")
        busy = meter.busy_s - busy_before
        rows.append({"name": label, "from_s": round(start - t0, 3), "to_s": round(end - t0, 3),
                     "busy_s": round(busy, 4), "busy_share": round(busy / (end - start), 4)})
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    print(json.dumps({"job_busy_share": round(meter.busy_s / wall, 4),
                      "busy_s": round(meter.busy_s, 3), "wall_s": round(wall, 3),
                      "phases": rows}), flush=True)


if __name__ == "__main__":
    main()
