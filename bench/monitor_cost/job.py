# SPDX-License-Identifier: Apache-2.0
"""The job a monitor may slow down, for bench/monitor_cost/alternate.py.

Runs one workload back to back until SIGUSR1 (or --seconds) and then writes, for
every unit of work, its start and end on CLOCK_MONOTONIC in nanoseconds, as
little-endian int64 pairs, to --out. The controller logs its slots on the same
clock, so each unit can be put into the slot it ran in.

  batch1  a small transformer forward pass at batch 1 and a synchronisation (the
          model of bench/kernels/workloads.py, about 100 launches, ~1 ms): what a
          monitor costs a launch-bound, latency-bound service.
  batch1g the same forward pass captured once as a CUDA graph and replayed, as
          inference servers run their decode steps: one launch per request, so
          what is left of the latency is the GPU's and the driver's, not Python's.
  gemm    eight bf16 8192^3 matmuls and a synchronisation (~12 ms): what it costs
          a job that keeps the GPU's math pipes busy.
"""
import argparse
import array
import gc
import os
import signal
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels"))
from workloads import Batch1, Gemm  # noqa: E402


def unit_of(name):
    if name == "batch1":
        w = Batch1()
        x = w.x

        def unit():
            with torch.no_grad():
                w.model(x)
            torch.cuda.synchronize()
        return unit
    if name == "batch1g":
        w = Batch1()
        x = w.x
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.no_grad(), torch.cuda.stream(side):
            for _ in range(3):  # PyTorch's rule: warm up on a side stream before capture
                w.model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(graph):
            w.model(x)

        def unit():
            graph.replay()
            torch.cuda.synchronize()
        return unit
    w = Gemm()

    def unit():
        for _ in range(8):
            torch.mm(w.a, w.b)
        torch.cuda.synchronize()
    return unit


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", choices=["batch1", "batch1g", "gemm"], required=True)
    p.add_argument("--out", required=True, help="where the (start, end) pairs go")
    p.add_argument("--ready", required=True, help="file created once warmed up")
    p.add_argument("--seconds", type=float, default=1800, help="stop after this long at most")
    p.add_argument("--warmup", type=float, default=3)
    a = p.parse_args()

    stop = False

    def on_stop(*_):
        nonlocal stop
        stop = True
    signal.signal(signal.SIGUSR1, on_stop)
    signal.signal(signal.SIGTERM, on_stop)

    unit = unit_of(a.workload)
    t_end = time.monotonic() + a.warmup
    while time.monotonic() < t_end:
        unit()
    open(a.ready, "w").close()

    # Python's collector would pause the loop at moments unrelated to the monitor.
    gc.collect()
    gc.disable()
    now = time.monotonic_ns
    spans = array.array("q")
    deadline = now() + int(a.seconds * 1e9)
    while not stop:
        s = now()
        unit()
        e = now()
        spans.append(s)
        spans.append(e)
        if e > deadline:
            break
    if sys.byteorder != "little":
        spans.byteswap()
    with open(a.out, "wb") as f:
        spans.tofile(f)
    print(f"{a.workload}: {len(spans) // 2} units", file=sys.stderr)


if __name__ == "__main__":
    main()
