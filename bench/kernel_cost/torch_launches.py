#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 51: what PyTorch work costs in this process, however it was started
(hook_run.sh starts it alone, under launch_hook.so counting, and under it sampling).

    torch_launches.py LABEL [--bench eager|graph] [--slots 8] [--slot 0.25]
    torch_launches.py p --paired [--bench eager|graph] [--slots 30] [--slot 0.2]

eager: one-element add_ in batches of 200, microseconds per op (host side).
graph: a batch-1 MLP replayed as a CUDA graph, each replay synchronised, microseconds
per request (common.graph_mlp).
Each slot's figure is the median batch; one JSON line per slot. With --paired the
process runs under launch_hook.so and each cycle holds a slot of each of its modes
(P pass launches on, C count, S count and time 1 in $HOOK_PAIRED_SAMPLE, default 100) in a random order; else a
last line gives the launches launch_hook.so counted, when it is there.
"""
import argparse
import ctypes
import json
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import graph_mlp  # noqa: E402


def bench_fn(kind):
    if kind == "eager":
        x = torch.zeros(1, device="cuda")

        def batch():
            for _ in range(200):
                x.add_(1.0)
            return 200
        return batch, x
    model, inp, g, out = graph_mlp(torch.device("cuda"))

    def batch():
        for _ in range(20):
            g.replay()
            torch.cuda.synchronize()
        return 20
    return batch, None


def slot(batch, seconds):
    per, made = [], 0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter_ns()
        n = batch()
        per.append((time.perf_counter_ns() - t0) / n / 1000)
        made += n
        torch.cuda.synchronize()
    per.sort()
    return per[len(per) // 2], made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("label")
    ap.add_argument("--bench", choices=["eager", "graph"], default="eager")
    ap.add_argument("--paired", action="store_true")
    ap.add_argument("--slots", type=int, default=8)
    ap.add_argument("--slot", type=float, default=0.25)
    a = ap.parse_args()
    batch, x = bench_fn(a.bench)
    for _ in range(10):
        batch()
    torch.cuda.synchronize()
    lib = ctypes.CDLL(None)
    hook = getattr(lib, "launch_hook_launches", None)
    if hook is not None:
        hook.restype = ctypes.c_ulonglong
    if a.paired:
        if hook is None:
            sys.exit("--paired needs LD_PRELOAD=liblaunch_hook.so")
        lib.launch_hook_set.argtypes = [ctypes.c_int, ctypes.c_long]
        rng = random.Random(7)
        for cycle in range(a.slots + 1):
            order = ["P", "C", "S"]
            rng.shuffle(order)
            for k in order:
                lib.launch_hook_set({"P": 0, "C": 1, "S": 2}[k], int(os.environ.get("HOOK_PAIRED_SAMPLE", "100")))
                us, _ = slot(batch, a.slot)
                if cycle:
                    print(json.dumps({"mode": "p", "kind": k, "bench": a.bench, "threads": 0,
                                      "cycle": cycle, "us_per_launch": us}))
        lib.launch_hook_set(1, 0)
        return
    before = hook() if hook else 0
    made = 0
    for s in range(a.slots + 1):  # the first slot warms up, unreported
        us, n = slot(batch, a.slot)
        made += n
        if s:
            print(json.dumps({"mode": a.label, "bench": a.bench, "threads": 0, "slot": s, "us_per_launch": us}))
    line = {"mode": a.label, "threads": 0, "launches_made": made,
            "launches_seen": (hook() - before) if hook else 0}
    if x is not None:
        line["value_ok"] = float(x.item()) == 2000.0 + made
    print(json.dumps(line))


if __name__ == "__main__":
    main()
