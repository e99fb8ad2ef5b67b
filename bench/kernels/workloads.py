# SPDX-License-Identifier: Apache-2.0
"""The three workloads of the cost harness (bench/kernels/cost.py), each measured
over a slot of wall time so that a monitor can be started or stopped between
slots of the same process:

  gemm   bf16 8192^3 matmuls back to back: throughput (TFLOP/s), the cost of
         anything that steals GPU time or memory bandwidth.
  batch1 a small transformer forward pass at batch 1 (about 100 kernels of a few
         microseconds each): per-step latency p50/p99, the cost of anything that
         lengthens a launch or a synchronisation.
  train  examples/train_gpt.py's model and step at a smaller size (batch 8 x 512,
         d 768, 6 layers): step time; launch-bound, the worst case for a tracer.
  train_gpt  examples/train_gpt.py's model, step and size as it runs by default
         (batch 16 x 1024, d 1024, 8 layers): step time.
  launch 1000 one-element adds then a synchronisation: microseconds per kernel
         launch, the per-launch cost of kernel tracing without a model around it.
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import train_gpt  # noqa: E402


class Gemm:
    name = "gemm"

    def __init__(self, n=8192):
        self.a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        self.b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        self.flops = 2 * n ** 3

    def slot(self, seconds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        done = 0
        while time.perf_counter() - t0 < seconds:
            for _ in range(8):
                torch.mm(self.a, self.b)
            torch.cuda.synchronize()
            done += 8
        dt = time.perf_counter() - t0
        return {"tflops": done * self.flops / dt / 1e12}


class Batch1:
    name = "batch1"

    def __init__(self):
        self.model = train_gpt.GPT(32768, 256, 512, 4, 8).cuda().to(torch.bfloat16).eval()
        self.x = torch.randint(0, 32768, (1, 128), device="cuda")

    @torch.no_grad()
    def slot(self, seconds):
        lat = []
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            s = time.perf_counter()
            self.model(self.x)
            torch.cuda.synchronize()
            lat.append(time.perf_counter() - s)
        lat.sort()
        return {"p50_ms": lat[len(lat) // 2] * 1e3, "p99_ms": lat[int(len(lat) * 0.99)] * 1e3,
                "steps": len(lat)}


class Train:
    name = "train"
    size = dict(seq=512, d_model=768, layers=6, heads=12, batch=8)

    def __init__(self):
        z = self.size
        self.model = train_gpt.GPT(32768, z["seq"], z["d_model"], z["layers"], z["heads"]).cuda()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4, fused=True)
        self.x = torch.randint(0, 32768, (z["batch"], z["seq"] + 1), device="cuda")

    def step(self):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = self.model(self.x[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, 32768), self.x[:, 1:].reshape(-1))
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)

    def slot(self, seconds):
        times = []
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            s = time.perf_counter()
            self.step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - s)
        times.sort()
        return {"step_ms": sum(times) / len(times) * 1e3, "p50_ms": times[len(times) // 2] * 1e3,
                "steps": len(times)}


class TrainGpt(Train):
    name = "train_gpt"
    size = dict(seq=1024, d_model=1024, layers=8, heads=16, batch=16)  # train_gpt.py's defaults


class Launch:
    name = "launch"

    def __init__(self):
        self.x = torch.zeros(1, device="cuda")

    def slot(self, seconds):
        per = []
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            s = time.perf_counter()
            for _ in range(1000):
                self.x.add_(1)
            torch.cuda.synchronize()
            per.append((time.perf_counter() - s) / 1000 * 1e6)
        per.sort()
        return {"us_per_launch": per[len(per) // 2], "batches": len(per)}


ALL = {"gemm": Gemm, "batch1": Batch1, "train": Train, "train_gpt": TrainGpt, "launch": Launch}
PRIMARY = {"gemm": "tflops", "batch1": "p50_ms", "train": "step_ms", "train_gpt": "step_ms",
           "launch": "us_per_launch"}


def one_step(w):
    """One step of a workload, finished on the GPU (the unit the windowed cost compares)."""
    if isinstance(w, Batch1):
        with torch.no_grad():
            w.model(w.x)
    elif isinstance(w, Train):
        w.step()
    elif isinstance(w, Launch):
        for _ in range(100):
            w.x.add_(1)
    else:
        raise ValueError(f"{w.name}: no single step")
    torch.cuda.synchronize()


def timed_steps(w, seconds):
    """(unix start, seconds) of every step for `seconds`: steps can then be told
    apart by whether a trace window was open (bench/kernels/cost_windows.py)."""
    out = []
    t_end = time.perf_counter() + seconds
    while True:
        u = time.time()
        s = time.perf_counter()
        one_step(w)
        e = time.perf_counter()
        out.append((u, e - s))
        if e >= t_end:
            return out
HIGHER_IS_BETTER = {"tflops"}


def make(names):
    out = []
    for n in names:
        w = ALL[n]()
        w.slot(0.5)  # warm-up: cuBLAS heuristics, allocator, clocks
        out.append(w)
    return out


if __name__ == "__main__":
    # One process slot (for --kernels, which must be present from the process's
    # start): every workload for `seconds`, one JSON line per workload on stdout.
    import argparse
    import json

    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--workloads", default="gemm,batch1,train")
    p.add_argument("--profiler", action="store_true",
                   help="measure under torch.profiler (CUDA activities, the peer of --kernels)")
    p.add_argument("--steps-out", help="write every step's (workload, unix start, seconds) here, "
                   "one JSON line per workload, instead of RESULT lines")
    p.add_argument("--cycle", type=float, default=0,
                   help="with --steps-out: run the workloads in turn, this many seconds each, for "
                   "--seconds in all (0: each for --seconds, one after the other)")
    a = p.parse_args()
    if a.steps_out:
        ws = make(a.workloads.split(","))
        steps = {w.name: [] for w in ws}
        if a.cycle > 0:
            # Round-robin slots of --cycle seconds until --seconds have passed, so
            # that every workload runs early and late in the process.
            end = time.perf_counter() + a.seconds
            while time.perf_counter() < end:
                for w in ws:
                    steps[w.name] += timed_steps(w, a.cycle)
        else:
            for w in ws:
                steps[w.name] = timed_steps(w, a.seconds)
        with open(a.steps_out, "w") as f:
            for name, st in steps.items():
                f.write(json.dumps({"workload": name, "steps": st}) + "\n")
        sys.exit(0)
    ctx = None
    if a.profiler:
        from torch.profiler import ProfilerActivity, profile
        ctx = profile(activities=[ProfilerActivity.CUDA])
        ctx.__enter__()
    results = []
    for w in make(a.workloads.split(",")):
        results.append({"workload": w.name, **w.slot(a.seconds)})
    if ctx is not None:
        ctx.__exit__(None, None, None)  # the trace's processing is not part of the slots
    for r in results:
        print("RESULT " + json.dumps(r), flush=True)
