# SPDX-License-Identifier: Apache-2.0
"""What CUPTI costs PyTorch work in each state, in alternating slots of one process.

The same design as launch_slots.cu (cupti_toggle.cpp moves CUPTI between detached,
quiet and traced from this thread while nothing else is inside CUDA); each cycle
visits the states in a new random order and gives one paired difference each.

Benches (one per process, --bench):
  eager  one-element add_ in batches of 100, the host's microseconds per op (the
         batch is timed without synchronising; a synchronisation follows, untimed)
  graph  a batch-1 inference server: an 8-layer bf16 MLP of width 1024 captured in a
         CUDA graph, one request = replay + synchronise; microseconds per request
  gemm   GPU-bound training-like work: bf16 8192x8192 matmuls; microseconds per
         matmul over the slot (synchronised at the slot's ends)
Prints one JSON line per measured slot.
"""
import argparse
import json
import os
import random
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import graph_mlp, open_toggle  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", choices=["eager", "graph", "gemm"], required=True)
    ap.add_argument("--toggle", required=True, help="path of libcupti_toggle.so")
    ap.add_argument("--cycles", type=int, default=30)
    ap.add_argument("--slot", type=float, default=0.2, help="seconds per measured slot")
    ap.add_argument("--states", default="dqt")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    dev = torch.device("cuda")
    if a.bench == "eager":
        x = torch.zeros(1, device=dev)

        def work(end):
            per = []
            while time.perf_counter() < end:
                t0 = time.perf_counter()
                for _ in range(100):
                    x.add_(1)
                per.append((time.perf_counter() - t0) * 1e6 / 100)
                torch.cuda.synchronize()
            return per
    elif a.bench == "graph":
        _, _, g, _ = graph_mlp(dev)

        def work(end):
            per = []
            while time.perf_counter() < end:
                t0 = time.perf_counter()
                g.replay()
                torch.cuda.synchronize()
                per.append((time.perf_counter() - t0) * 1e6)
            return per
    else:
        m = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)

        def work(end):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            n = 0
            while time.perf_counter() < end:
                for _ in range(4):
                    torch.matmul(m, m)
                n += 4
                torch.cuda.synchronize()
            return [(time.perf_counter() - t0) * 1e6 / max(n, 1)]

    torch.cuda.synchronize()
    ct = open_toggle(a.toggle)

    def go(state):
        torch.cuda.synchronize()
        print(f"move {ct.ct_state()}->{state}", file=sys.stderr, flush=True)
        us = ct.ct_goto(state)
        if us < 0:
            sys.exit("torch_slots: " + ct.ct_error().decode())
        return us

    def slot(seconds):
        per = work(time.perf_counter() + seconds)
        per.sort()
        return per[len(per) // 2]

    slot(1.0)  # warm
    rng = random.Random(a.seed)
    order = list(a.states)
    moves = {"finalize_us": [], "attach_us": []}
    for c in range(a.cycles):
        rng.shuffle(order)
        for st in order:
            before = ct.ct_state()
            if st == "d":
                us = go(0)
                if before != 0:
                    moves["finalize_us"].append(us)
            elif st == "t":
                us = go(2)
                if before == 0:
                    moves["attach_us"].append(us)
            elif st == "q" and before != 1:
                us = go(2)
                if before == 0:
                    moves["attach_us"].append(us)
                slot(0.05)
                go(1)
            slot(0.05)  # settle after the move, unmeasured
            print(json.dumps({"bench": a.bench, "threads": 1, "cycle": c, "state": st, "us": slot(a.slot)}), flush=True)
    go(0)
    print(json.dumps({"bench": a.bench + "_moves", "cupti": os.environ["GPULENS_CUPTI"],
                      "records": ct.ct_records(),
                      **{k: (sum(v) / len(v) if v else 0) for k, v in moves.items()}}), flush=True)


if __name__ == "__main__":
    main()
