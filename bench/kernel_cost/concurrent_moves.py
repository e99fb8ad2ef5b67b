# SPDX-License-Identifier: Apache-2.0
"""CUPTI moved by a thread of its own while the job's threads are inside CUDA.

graph_moves.py showed, with every move made from the job's one thread while nothing
ran, that finalising from the quiet state (kinds disabled, then cuptiFinalize) makes
the next CUDA-graph replay fail, and finalising straight from traced (kinds still on)
did not. A monitor cannot wait for the job to stand still: this runs a job (two
threads: CUDA-graph replays of a batch-1 MLP, and eager ops with a host copy) while a
third thread makes the moves every 50-250 ms, at random moments, through ctypes
(which releases the GIL, so the moves really overlap the job's CUDA calls).
--pattern td: traced <-> finalised (the candidate); tqd: traced, quiet, finalised
(what the earlier detach did); attach: the mover only attaches (never finalises)
and then switches traced <-> quiet, as the shipped library's window thread does;
jobfin: the mover attaches, and the job's own thread finalises at its next
outermost API exit (ct_arm_finalize, the CUPTI guide's recipe), again and again.
Prints one JSON line: moves made, job iterations,
error, and whether the graph's output still matches eager at the end.
"""
import argparse
import json
import os
import random
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from common import graph_mlp, job_loops, open_toggle  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pattern", choices=["td", "tqd", "attach", "jobfin"], required=True)
    ap.add_argument("--toggle", required=True)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    ct = open_toggle(a.toggle)
    dev = torch.device("cuda")
    model, inp, g, out = graph_mlp(dev)
    stop = threading.Event()
    errors, counts = [], {"graph": 0, "eager": 0, "moves": 0}

    graph_loop, eager_loop = job_loops(g, dev, stop, errors, counts)

    def jobfin_mover():
        rng = random.Random(a.seed)
        while not stop.is_set():
            time.sleep(rng.uniform(0.05, 0.25))
            if ct.ct_goto(2) < 0 or ct.ct_arm_finalize() < 0:
                errors.append("toggle: " + ct.ct_error().decode())
                stop.set()
                return
            counts["moves"] += 1
            deadline = time.monotonic() + 5
            while ct.ct_state() != 0 and not stop.is_set():
                if time.monotonic() > deadline:
                    counts["unfinalised"] = counts.get("unfinalised", 0) + 1
                    return
                time.sleep(0.001)

    def mover():
        if a.pattern == "jobfin":
            return jobfin_mover()
        rng = random.Random(a.seed)
        seq = {"td": [2, 0], "tqd": [2, 1, 0], "attach": [2, 1]}[a.pattern]
        i = 0
        while not stop.is_set():
            time.sleep(rng.uniform(0.05, 0.25))
            if ct.ct_goto(seq[i % len(seq)]) < 0:
                errors.append("toggle: " + ct.ct_error().decode())
                stop.set()
                return
            counts["moves"] += 1
            i += 1

    threads = [threading.Thread(target=f) for f in (graph_loop, eager_loop, mover)]
    for t in threads:
        t.start()
    stop.wait(a.seconds)
    stop.set()
    for t in threads:
        t.join()
    same = None
    if not errors:
        try:
            counts["job_finalizes"] = ct.ct_job_finalizes()
            if ct.ct_state() == 2:  # from traced at once: the move graph_moves.py found safe
                ct.ct_goto(0)
            with torch.no_grad():
                ref = model(inp)
                g.replay()
            torch.cuda.synchronize()
            same = bool(torch.allclose(out.float(), ref.float(), atol=1e-2))
        except Exception as e:  # noqa: BLE001
            errors.append(f"end: {type(e).__name__}: {str(e).splitlines()[0]}")
    print(json.dumps({"pattern": a.pattern, "seed": a.seed, **counts, "graph_matches_eager": same,
                      "error": "; ".join(errors)}), flush=True)


if __name__ == "__main__":
    main()
