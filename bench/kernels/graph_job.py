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
import sys
import threading
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=20)
    a = ap.parse_args()
    dev = torch.device("cuda")
    model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).to(dev, torch.bfloat16)
    inp = torch.randn(1, 1024, device=dev, dtype=torch.bfloat16)
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(inp)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = model(inp)
    stop = threading.Event()
    errors, counts = [], {"graph": 0, "eager": 0}

    def graph_loop():
        try:
            while not stop.is_set():
                g.replay()
                torch.cuda.synchronize()
                counts["graph"] += 1
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            errors.append(f"graph: {type(e).__name__}: {e}")
            stop.set()

    def eager_loop():
        try:
            x = torch.zeros(256, device=dev)
            while not stop.is_set():
                for _ in range(20):
                    x.add_(1)
                x.cpu()
                counts["eager"] += 1
        except Exception as e:  # noqa: BLE001
            errors.append(f"eager: {type(e).__name__}: {e}")
            stop.set()

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
