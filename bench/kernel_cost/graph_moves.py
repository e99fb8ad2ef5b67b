# SPDX-License-Identifier: Apache-2.0
"""Which CUPTI move breaks a process that replays CUDA graphs (torch_slots.py's graph
bench died with "unspecified launch failure" after a few moves).

One process per run: an 8-layer bf16 MLP at batch 1 captured in a CUDA graph (or, for
the eager control, run op by op), then a sequence of CUPTI moves (cupti_toggle.cpp,
made from this thread with nothing inside CUDA); after each move 50 replays and a
synchronise. Prints one JSON line: how many moves passed and the error, if any.
Sequences (--variant):
  tq        traced, quiet, traced, ... (windows without a detach: the shipped library)
  td        traced then finalised once, never re-attached
  tdt       traced, finalised, traced again, ... (detach and re-attach per window)
  attached  the graph captured while CUPTI is attached and tracing, then finalised
  eager     no graph: tdt with the model run op by op (the control)
  random    40 moves among detached, quiet and traced in a seeded random order
            (quiet entered through traced), every transition torch_slots.py makes
"""
import argparse
import json
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from common import open_toggle  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", required=True, choices=["tq", "td", "tdt", "attached", "eager", "random"])
    ap.add_argument("--toggle", required=True)
    ap.add_argument("--moves", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    ct = open_toggle(a.toggle)
    dev = torch.device("cuda")
    model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).to(dev, torch.bfloat16)
    inp = torch.randn(1, 1024, device=dev, dtype=torch.bfloat16)
    done, error = [], ""

    def go(state):
        torch.cuda.synchronize()
        if ct.ct_goto(state) < 0:
            raise RuntimeError("toggle: " + ct.ct_error().decode())
        done.append("dqt"[state])

    try:
        if a.variant == "attached":
            go(2)
        with torch.no_grad():
            if a.variant != "eager":
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    for _ in range(3):
                        model(inp)
                torch.cuda.current_stream().wait_stream(s)
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g):
                    out = model(inp)
                run = g.replay
            else:
                def run():
                    model(inp)
            seq = {"tq": [2, 1], "td": [2, 0], "tdt": [2, 0], "attached": [0, 2], "eager": [2, 0],
                   "random": [0, 1, 2]}[a.variant]
            rng = random.Random(a.seed)
            for i in range(a.moves * (2 if a.variant == "random" else 1)):
                if a.variant == "random":
                    state = rng.choice(seq)
                    if state == 1 and ct.ct_state() == 0:
                        go(2)
                        for _ in range(50):
                            run()
                elif a.variant == "td" and i >= 2:
                    state = 0
                else:
                    state = seq[i % 2]
                go(state)
                for _ in range(50):
                    run()
                torch.cuda.synchronize()
            if a.variant != "eager":
                ref = model(inp)
                g.replay()
                torch.cuda.synchronize()
                if not torch.allclose(out.float(), ref.float(), atol=1e-2):
                    error = "graph output differs from eager"
    except Exception as e:  # noqa: BLE001 - the point is to report any failure
        error = f"{type(e).__name__}: {str(e).splitlines()[0]}"
    print(json.dumps({"variant": a.variant, "moves_passed": len(done) - (1 if error else 0),
                      "sequence": "".join(done), "error": error}), flush=True)


if __name__ == "__main__":
    main()
