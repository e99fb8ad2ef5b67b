# SPDX-License-Identifier: Apache-2.0
"""A job that replays a CUDA graph on one thread and runs eager ops on another,
for --seconds, then checks the graph's output against eager and exits 1 when they
differ or a CUDA call failed. Run under `gpulens run --kernels` with short windows
(bench/kernels/graph_run.sh), it shows whether the injection library's windows
(CUPTI attached by its own thread, kinds switched on and off while the job runs)
harm a graph-replaying job; bench/results/kernel-cost-h200-2026-11-29 has why that
is the one pattern of CUPTI moves that did not.
"""
import argparse
import os
import sys
import threading

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernel_cost"))
from common import graph_mlp, job_loops  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    a = ap.parse_args()
    dev = torch.device("cuda")
    model, inp, g, out = graph_mlp(dev)
    stop = threading.Event()
    errors, counts = [], {"graph": 0, "eager": 0}

    graph_loop, eager_loop = job_loops(g, dev, stop, errors, counts)

    threads = [threading.Thread(target=f) for f in (graph_loop, eager_loop)]
    for t in threads:
        t.start()
    stop.wait(a.seconds)
    stop.set()
    for t in threads:
        t.join()
    if not errors:
        with torch.no_grad():
            ref = model(inp)
            g.replay()
        torch.cuda.synchronize()
        if not torch.allclose(out.float(), ref.float(), atol=1e-2):
            errors.append("the graph's output differs from eager")
    print(f"graph_job: {counts['graph']} replays, {counts['eager']} eager rounds, "
          f"{'errors: ' + '; '.join(errors) if errors else 'no error'}", flush=True)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
