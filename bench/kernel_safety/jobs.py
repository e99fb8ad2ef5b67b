#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Short PyTorch jobs of the shapes a kernel view must never harm (issue 51, item 2),
each deterministic for its seed and ending with one line `checksum KIND SEED HEX`
over what it computed, so that a run under `gpulens run --kernels` can be held to the
same job run bare (bench/kernel_safety/run.py).

    jobs.py KIND SEED [--steps N]
KIND: eager, graph, compile, threads, profiler, fork, exit_mid, cupy, nccl, exec, starved.
"""
import argparse
import hashlib
import os
import sys
import threading

import torch

# Deterministic kernels, so that the checksum is the job's and not the library's choice.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
torch.use_deterministic_algorithms(True)
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def digest(tensors):
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def mlp(seed, dev):
    g = torch.Generator(device="cpu").manual_seed(seed)
    layers = [torch.nn.Linear(512, 512) for _ in range(4)]
    for layer in layers:
        with torch.no_grad():
            layer.weight.copy_(torch.randn(layer.weight.shape, generator=g) * 0.05)
            layer.bias.copy_(torch.randn(layer.bias.shape, generator=g) * 0.05)
    model = torch.nn.Sequential(*[m for l in layers for m in (l, torch.nn.GELU())]).to(dev)
    x = (torch.randn(64, 512, generator=g)).to(dev)
    return model, x


def eager(seed, steps, dev):
    model, x = mlp(seed, dev)
    y = x
    with torch.no_grad():
        for _ in range(steps):
            y = torch.tanh(model(y)) + 0.001 * x  # many small kernels: launch-bound
    return [y]


def graph(seed, steps, dev):
    model, x = mlp(seed, dev)
    static_in = x.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(s):
        for _ in range(3):
            static_out = torch.tanh(model(static_in))
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(g):
        static_out = torch.tanh(model(static_in))
    for _ in range(steps):
        g.replay()
        static_in.copy_(static_out + 0.001 * x)
    torch.cuda.synchronize()
    return [static_out]


def compiled(seed, steps, dev):
    model, x = mlp(seed, dev)
    # reduce-overhead: Inductor's kernels replayed as CUDA graphs.
    f = torch.compile(lambda t: torch.tanh(model(t)), mode="reduce-overhead")
    y = x
    with torch.no_grad():
        for _ in range(steps):
            y = f(y).clone() + 0.001 * x
    return [y]


def threads(seed, steps, dev):
    outs = [None] * 4
    errors = []

    def work(i):
        try:
            with torch.cuda.stream(torch.cuda.Stream()):
                outs[i] = eager(seed * 10 + i, steps // 2, dev)[0]
                torch.cuda.current_stream().synchronize()
        except Exception as e:  # a thread's failure fails the job, loudly
            errors.append(repr(e))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise RuntimeError("; ".join(errors))
    return outs


def profiler(seed, steps, dev):
    # The job profiles itself for a while: CUPTI is the job's then (docs/kernels.md).
    from torch.profiler import ProfilerActivity, profile
    first = eager(seed, steps // 2, dev)
    if os.environ.get("KS_SHOW_CUPTI"):  # which libcupti files the process has mapped
        with open("/proc/self/maps") as maps:
            print("cupti maps:", sorted({l.split()[-1] for l in maps if "cupti" in l}), file=sys.stderr)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        second = eager(seed + 1, steps // 4, dev)
        torch.cuda.synchronize()
    if not any(e.device_type.name == "CUDA" for e in prof.events()):
        print("profiler: saw no CUDA event", file=sys.stderr)
    third = eager(seed + 2, steps // 4, dev)
    return first + second + third


def forked(seed, steps, dev):
    # A child forked after CUDA started must not touch CUDA; it does CPU work and
    # exits, as DataLoader workers do. Then a spawned child that uses CUDA itself.
    first = eager(seed, steps // 2, dev)
    pid = os.fork()
    if pid == 0:
        sum(i * i for i in range(100000))
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise RuntimeError(f"forked child ended with {status}")
    import subprocess
    child = subprocess.run([sys.executable, __file__, "eager", str(seed + 7), "--steps", str(steps // 4)],
                           capture_output=True, text=True, check=True)
    line = [l for l in child.stdout.splitlines() if l.startswith("checksum")][-1]
    second = eager(seed + 1, steps // 2, dev)
    return first + second + [torch.tensor([int(line.split()[-1], 16) % 1000003], dtype=torch.float64)]


def cupy_too(seed, steps, dev):
    import cupy
    a = eager(seed, steps // 2, dev)[0]
    c = cupy.asarray(a)  # the same memory through a second CUDA library
    for _ in range(steps // 4):
        c = cupy.tanh(c @ c.T[:, :512] * 0.01)
    cupy.cuda.Device().synchronize()
    return [a, torch.as_tensor(c, device=dev)]


def nccl(seed, steps, dev):
    import torch.multiprocessing as mp
    world = torch.cuda.device_count()
    if world < 2:
        raise SystemExit("nccl: needs 2 GPUs or more")
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    procs = [ctx.Process(target=_nccl_rank, args=(r, world, seed, steps, q)) for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        raise RuntimeError(f"nccl ranks ended {[p.exitcode for p in procs]}")
    return [torch.tensor(sorted(q.get() for _ in range(world)), dtype=torch.float64)]


def _nccl_rank(rank, world, seed, steps, q):
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(29600 + seed % 300))
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    y = eager(seed + rank, steps // 4, torch.device("cuda", rank))[0]
    for _ in range(steps // 8):
        dist.all_reduce(y)
        y = torch.tanh(y / world)
    torch.cuda.synchronize()
    q.put(float(y.double().sum().item()))
    dist.destroy_process_group()


def exec_tail(seed, steps, dev, prior):
    # The image the job exec'd into: more CUDA work, then one checksum over both parts.
    return eager(seed + 3, steps // 2, dev) + [torch.tensor([int(prior, 16) % 1000003], dtype=torch.float64)]


def starved(seed, steps, dev):
    # The job pins itself, and with it every thread it starts later (the kernel
    # library's window thread, started at cuInit), to one core and keeps two
    # busy processes on that core: the window thread gets a third of it at best.
    cores = sorted(os.sched_getaffinity(0))
    core = cores[seed % len(cores)]  # jobs run side by side starve on cores of their own
    os.sched_setaffinity(0, {core})
    hogs = []
    for _ in range(2):
        pid = os.fork()
        if pid == 0:
            while True:
                pass
        hogs.append(pid)
    try:
        return eager(seed, steps // 2, dev)
    finally:
        import signal
        for pid in hogs:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


KINDS = {"eager": eager, "graph": graph, "compile": compiled, "threads": threads,
         "profiler": profiler, "fork": forked, "cupy": cupy_too, "nccl": nccl, "starved": starved}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=sorted(KINDS) + ["exit_mid", "exec", "exec_tail"])
    ap.add_argument("seed", type=int)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--prior", help="exec_tail: the checksum of the part before the exec")
    a = ap.parse_args()
    dev = torch.device("cuda")
    if a.kind == "exec":
        # CUDA work, then the process becomes another Python (os.execv: same pid, the
        # environment kept, so the kernel library loads again into the new image).
        first = digest(eager(a.seed, a.steps // 2, dev))
        sys.stdout.flush()
        os.execv(sys.executable, [sys.executable, __file__, "exec_tail", str(a.seed),
                                  "--steps", str(a.steps), "--prior", first])
    if a.kind == "exec_tail":
        out = exec_tail(a.seed, a.steps, dev, a.prior)
        print(f"checksum exec {a.seed} {digest(out)}", flush=True)
        return
    if a.kind == "exit_mid":
        # Ends with os._exit while kernels are still queued: no atexit, no teardown.
        out = eager(a.seed, a.steps, dev)
        print(f"checksum {a.kind} {a.seed} {digest(out)}", flush=True)
        for _ in range(200):
            out = [torch.tanh(out[0] @ out[0].T[:, :512])]
        os._exit(0)
    out = KINDS[a.kind](a.seed, a.steps, dev)
    print(f"checksum {a.kind} {a.seed} {digest(out)}", flush=True)


if __name__ == "__main__":
    main()
