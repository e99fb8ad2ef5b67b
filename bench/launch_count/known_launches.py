# SPDX-License-Identifier: Apache-2.0
"""A PyTorch job whose kernel launches are known, for libgpulens_launches.so's check on
a GPU (device_run.sh): run under `gpulens run`, it prints what it launched, and the
report's "Kernel launches" must say the same.

  profiled N STEPS   the whole job under torch.profiler (started before any CUDA work):
                     N one-element add_ launches, then STEPS steps of a small MLP's
                     training (cuBLAS, autograd, the optimiser); prints the profiler's
                     kernel launches by name
  graphs G           a captured two-kernel step replayed G times (graph launches: G),
                     then 1000 eager add_
  eager S            one-element add_ launched for S seconds, the host never waiting
                     but every 10,000 launches (a launch-bound loop: the kernel runs
                     for less time than its launch costs the host)
Prints one JSON line on stdout."""
import collections
import json
import sys

import torch


def mlp_steps(steps):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256, device="cuda")
    y = torch.randint(0, 10, (64,), device="cuda")
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return float(loss.item())


def profiled(n, steps):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        x = torch.zeros(1, device="cuda")
        for _ in range(n):
            x.add_(1.0)
        loss = mlp_steps(steps)
        torch.cuda.synchronize()
    by_name = collections.Counter()
    for e in prof.events():
        # Kernels only: not copies, memsets, or the GPU-side ranges of user annotations
        # ("Optimizer.step#SGD.step"), which the profiler lists on the device too.
        if e.device_type != torch.autograd.DeviceType.CUDA or getattr(e, "is_user_annotation", False):
            continue
        # An annotation's name has no spaces ("Optimizer.step#SGD.step"); a kernel
        # whose template holds a lambda has "#" too ("{lambda(float)#1}"), and spaces.
        if e.name.startswith(("Memcpy", "Memset")) or ("#" in e.name and " " not in e.name):
            continue
        by_name[e.name] += 1
    return {"mode": "profiled", "x": float(x.item()), "loss": loss,
            "kernels": dict(by_name), "kernel_launches": sum(by_name.values())}


def graphs(g_count):
    x = torch.zeros(1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.mul_(1.0).add_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        x.mul_(1.0).add_(1.0)
    for _ in range(g_count):
        g.replay()
    for _ in range(1000):
        x.add_(1.0)
    torch.cuda.synchronize()
    return {"mode": "graphs", "graph_launches": g_count, "x0": float(x[0].item())}


def eager(seconds):
    import time

    x = torch.zeros(1, device="cuda")
    launches = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(10000):
            x.add_(1.0)
        launches += 10000
        torch.cuda.synchronize()
    return {"mode": "eager", "kernel_launches": launches, "x": float(x.item())}


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "profiled":
        out = profiled(int(sys.argv[2]), int(sys.argv[3]))
    elif mode == "eager":
        out = eager(float(sys.argv[2]))
    else:
        out = graphs(int(sys.argv[2]))
    print(json.dumps(out))
