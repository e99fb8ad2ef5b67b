#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The multi-GPU calibration program of issue 16: one NCCL process per GPU, with
phase marks, run under `gpulens run --interval 0.1` by calibration/multi_gpu.sh.

    python3 calibration/multi_gpu/phases.py --gpus N --out DIR [--scale S]

Phases (the expected diagnosis of each, and why, is in expected.json, written
before this program ever ran on several GPUs):

  allreduce   a 256 MiB bf16 all-reduce in a loop: NVLink carries the traffic,
              SMs are mostly idle, tensor pipes at zero
  balanced    a data-parallel step: bf16 GEMMs then an all-reduce of 64 MiB of
              "gradients", the same work on every rank
  imbalanced  the same step, rank 0 does three times the GEMMs: the others sit
              in the all-reduce kernel waiting for it
  h2d_pinned  each rank copies 1 GiB from pinned host memory to its GPU in a
              loop: PCIe-bound, SMs idle
  hang        every rank but the last enters an all-reduce; the last rank
              sleeps on the host for the phase (a rank that never arrives) and
              joins at the end, so the job ends cleanly
  idle        every rank sleeps holding its memory

Each rank writes DIR/rank<R>.json with what it moved and when (Unix seconds),
so NVLink and PCIe figures can be checked against the program's own timing.
Rank 0 writes the phase marks ($GPULENS_MARKS, contrib/gpulens_marks.py).
NVLink multicast stays off (NCCL_NVLS_ENABLE=0 and the others), as the GPU
machines require: set here for every rank, whatever the caller's environment.
"""

import argparse
import datetime
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "contrib"))

MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                 "NVSHMEM_DISABLE_NVLS": "1"}
os.environ.update(MULTICAST_OFF)

import gpulens_marks as gm  # noqa: E402


def log(rank, msg):
    print(f"[multi rank {rank} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Phase:
    """Marks a phase (rank 0 only) after a barrier, so every rank starts together."""

    def __init__(self, rank, name, record, **fields):
        self.rank, self.name, self.record, self.fields = rank, name, record, fields

    def __enter__(self):
        import torch
        import torch.distributed as dist

        torch.cuda.synchronize()
        dist.barrier()
        self.start = time.time()
        if self.rank == 0:
            gm.mark(self.name + ":start", t=self.start, **self.fields)
        return self

    def __exit__(self, *exc):
        import torch

        torch.cuda.synchronize()
        self.end = time.time()
        if self.rank == 0:
            gm.mark(self.name + ":end", t=self.end)
        self.record[self.name] = dict(self.record.get(self.name, {}), start=self.start, end=self.end)
        return False


def join_group(rank, world):
    """This rank's GPU and NCCL group (multicast off, a long timeout: the hang
    phase keeps ranks waiting for minutes on purpose)."""
    import torch
    import torch.distributed as dist

    os.environ.update(MULTICAST_OFF)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=900),
                            device_id=torch.device("cuda", rank))
    return torch.device("cuda", rank)


def gemm_steps(rank, name, gemms, record, a, b, grads, seconds):
    """A data-parallel phase: `gemms(rank)` bf16 GEMMs then an all-reduce of the
    "gradients", step after step for `seconds`; rank 0 decides when all stop."""
    import torch
    import torch.distributed as dist

    with Phase(rank, name, record, gemms_rank0=gemms(0), gemms_other=gemms(1)):
        end = time.time() + seconds
        n = 0
        while True:
            for _ in range(gemms(rank)):
                a @ b
            dist.all_reduce(grads)
            n += 1
            stop = torch.tensor([1 if time.time() >= end else 0], device=a.device)
            dist.broadcast(stop, 0)
            if stop.item():
                break
    record[name]["steps"] = n
    log(rank, f"{name}: {n} steps of {gemms(rank)} GEMMs")
    time.sleep(2)


def rank_main(rank, world, out, scale):
    import torch
    import torch.distributed as dist

    dev = join_group(rank, world)
    secs = lambda s: max(2.0, s * scale)  # noqa: E731
    record = {"rank": rank, "world": world}

    # Warm-up outside any phase: NCCL communicators, cuBLAS handles.
    buf = torch.ones(128 * 1024 * 1024, dtype=torch.bfloat16, device=dev)  # 256 MiB
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=dev)
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device=dev)
    grads = torch.ones(32 * 1024 * 1024, dtype=torch.bfloat16, device=dev)  # 64 MiB
    for _ in range(3):
        dist.all_reduce(buf)
        dist.all_reduce(grads)
        a @ b
    torch.cuda.synchronize()
    time.sleep(3)

    # allreduce: count operations and time them on this rank.
    with Phase(rank, "allreduce", record, bytes_per_op=buf.numel() * buf.element_size()):
        end = time.time() + secs(30)
        ops = 0
        t0 = time.perf_counter()
        while True:
            dist.all_reduce(buf)
            ops += 1
            if ops % 8 == 0:
                torch.cuda.synchronize()
                # Every rank must run the same number of operations: rank 0 decides.
                stop = torch.tensor([1 if time.time() >= end else 0], device=dev)
                dist.broadcast(stop, 0)
                if stop.item():
                    break
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
    size = buf.numel() * buf.element_size()
    # A ring all-reduce sends 2(N-1)/N of the buffer from every GPU per operation.
    sent = ops * size * 2 * (world - 1) / world
    record["allreduce"].update(ops=ops, bytes_per_op=size, seconds=elapsed,
                               sent_bytes_per_s=sent / elapsed, ring_factor=2 * (world - 1) / world)
    log(rank, f"allreduce: {ops} x {size >> 20} MiB in {elapsed:.1f} s, {sent / elapsed / 1e9:.1f} GB/s sent")
    time.sleep(2)

    gemm_steps(rank, "balanced", lambda r: 8, record, a, b, grads, secs(30))
    gemm_steps(rank, "imbalanced", lambda r: 24 if r == 0 else 8, record, a, b, grads, secs(30))

    host = torch.empty(buf.numel(), dtype=torch.bfloat16).pin_memory()
    with Phase(rank, "h2d_pinned", record, bytes_per_copy=size):
        end = time.time() + secs(15)
        copies = 0
        t0 = time.perf_counter()
        while time.time() < end:
            buf.copy_(host, non_blocking=True)
            copies += 1
            if copies % 4 == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
    record["h2d_pinned"].update(copies=copies, seconds=elapsed, rx_bytes_per_s=copies * size / elapsed)
    log(rank, f"h2d_pinned: {copies * size / elapsed / 1e9:.1f} GB/s")
    time.sleep(2)

    # hang: the last rank never arrives for the phase's length; the others wait
    # inside the NCCL kernel. It joins at the end so the job finishes.
    late = world - 1
    with Phase(rank, "hang", record, late_rank=late):
        hang_s = secs(130)
        if rank == late:
            time.sleep(hang_s)
        dist.all_reduce(grads)
        torch.cuda.synchronize()
    record["hang"]["late_rank"] = late
    log(rank, "hang: released")
    time.sleep(2)

    with Phase(rank, "idle", record):
        time.sleep(secs(20))

    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(record, f, indent=1)


SPIN_KERNEL = r"""
extern "C" __global__ void spin(float* out, long long cycles) {
    float x = threadIdx.x;
    const long long start = clock64();
    while (clock64() - start < cycles) {
        for (int i = 0; i < 64; ++i) x = x * 1.000001f + 0.5f;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
"""


def spin_few_sms(rank, seconds, launch=True):
    """Launches an 8-block, ~5 ms FP32 kernel back to back for `seconds` (or
    sleeps that long when `launch` is false); returns the launch count."""
    import cupy

    end = time.time() + seconds
    if not launch:
        time.sleep(seconds)
        return 0
    with cupy.cuda.Device(rank):
        spin = cupy.RawKernel(SPIN_KERNEL, "spin")
        sink = cupy.zeros(8 * 128, dtype=cupy.float32)
        # ~5 ms at the H100/H200 boost clock (1980 MHz).
        cycles = cupy.int64(10_000_000)
        stream = cupy.cuda.Stream(non_blocking=True)
        launches = 0
        with stream:
            while time.time() < end:
                spin((8,), (128,), (sink, cycles))
                launches += 1
                if launches % 20 == 0:
                    stream.synchronize()
            stream.synchronize()
        return launches


def ddp_trainer(dev, rank, width, layers, batch):
    """A DDP model of `layers` bf16 Linear(width) layers on `batch` rows, warmed
    up; returns one training step (forward, backward with the gradient
    all-reduce, optimizer) that returns its loss."""
    import torch
    import torch.nn as nn
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = nn.Sequential(*[nn.Linear(width, width) for _ in range(layers)]).to(dev, torch.bfloat16)
    ddp = DDP(model, device_ids=[rank])
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-4)
    x = torch.randn(batch, width, device=dev, dtype=torch.bfloat16)

    def step():
        loss = ddp(x).float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    return step


def holdout_main(rank, world, out, scale):
    """The holdout plan (expected-holdout.json): a 4x imbalance, the same few-SM
    kernel on every rank, and a shorter hang."""
    import torch
    import torch.distributed as dist

    dev = join_group(rank, world)
    secs = lambda s: max(2.0, s * scale)  # noqa: E731
    record = {"rank": rank, "world": world, "plan": "holdout"}
    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=dev)
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device=dev)
    grads = torch.ones(32 * 1024 * 1024, dtype=torch.bfloat16, device=dev)
    for _ in range(3):
        dist.all_reduce(grads)
        a @ b
    torch.cuda.synchronize()
    time.sleep(3)

    gemm_steps(rank, "imbalanced4x", lambda r: 32 if r == 0 else 8, record, a, b, grads, secs(30))

    with Phase(rank, "underused_all", record, blocks=8, threads=128):
        launches = spin_few_sms(rank, secs(30))
    record["underused_all"]["launches"] = launches
    log(rank, f"underused_all: {launches} launches of 8 blocks")
    time.sleep(2)

    late = world - 1
    with Phase(rank, "hang", record, late_rank=late):
        if rank == late:
            time.sleep(secs(80))
        dist.all_reduce(grads)
        torch.cuda.synchronize()
    record["hang"]["late_rank"] = late
    log(rank, "hang: released")
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(record, f, indent=1)


def advice_main(rank, world, out, scale):
    """The advice plan (expected-advice.json, issue 28): a real DDP model whose
    rank 0 does 40 ms of host work every step (logging, evaluation), then an
    all-gather that the last rank joins only after the phase."""
    import torch
    import torch.distributed as dist

    dev = join_group(rank, world)
    secs = lambda s: max(2.0, s * scale)  # noqa: E731
    record = {"rank": rank, "world": world, "plan": "advice"}
    step = ddp_trainer(dev, rank, width=4096, layers=12, batch=4096)
    time.sleep(3)
    with Phase(rank, "ddp_slow_rank", record, slow_rank=0, host_ms=40):
        end = time.time() + secs(40)
        n = 0
        while True:
            loss = step()
            if rank == 0:
                loss.item()
                busy = time.perf_counter() + 0.040  # rank 0's logging and metrics
                while time.perf_counter() < busy:
                    pass
            n += 1
            stop = torch.tensor([1 if time.time() >= end else 0], device=dev)
            dist.broadcast(stop, 0)
            if stop.item():
                break
    record["ddp_slow_rank"]["steps"] = n
    log(rank, f"ddp_slow_rank: {n} steps")
    time.sleep(2)

    late = world - 1
    chunk = torch.ones(8 * 1024 * 1024, dtype=torch.bfloat16, device=dev)
    gathered = [torch.empty_like(chunk) for _ in range(world)]
    dist.all_gather(gathered, chunk)
    torch.cuda.synchronize()
    with Phase(rank, "hang_allgather", record, late_rank=late):
        if rank == late:
            time.sleep(secs(90))
        dist.all_gather(gathered, chunk)
        torch.cuda.synchronize()
    record["hang_allgather"]["late_rank"] = late
    log(rank, "hang_allgather: released")
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(record, f, indent=1)


def advice_holdout_main(rank, world, out, scale):
    """The advice holdout plan (expected-advice-holdout.json): the last rank
    sleeps 25 ms on its host every step of a DDP job (a slow rank that is not
    rank 0 and not spinning), then rank 0 alone runs a few-SM kernel while the
    other ranks sleep (a job using one of its GPUs: no one waits)."""
    import torch
    import torch.distributed as dist

    dev = join_group(rank, world)
    secs = lambda s: max(2.0, s * scale)  # noqa: E731
    record = {"rank": rank, "world": world, "plan": "advice_holdout"}
    step = ddp_trainer(dev, rank, width=8192, layers=6, batch=2048)
    time.sleep(3)
    slow = world - 1
    with Phase(rank, "ddp_sleepy_last", record, slow_rank=slow, host_ms=25):
        end = time.time() + secs(40)
        n = 0
        while True:
            step()
            if rank == slow:
                torch.cuda.synchronize()
                time.sleep(0.025)  # a blocking read, an RPC, a slow file system
            n += 1
            stop = torch.tensor([1 if time.time() >= end else 0], device=dev)
            dist.broadcast(stop, 0)
            if stop.item():
                break
    record["ddp_sleepy_last"]["steps"] = n
    log(rank, f"ddp_sleepy_last: {n} steps")
    time.sleep(2)

    with Phase(rank, "one_gpu_used", record, blocks=8):
        launches = spin_few_sms(rank, secs(30), launch=rank == 0)
    record["one_gpu_used"]["launches"] = launches
    log(rank, f"one_gpu_used: {launches} launches")
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(record, f, indent=1)


def advice_holdout2_main(rank, world, out, scale):
    """The second advice holdout (expected-advice-holdout2.json), for the slower-rank
    rule judged on the math pipes: rank 0 holds its CPU busy (a Python loop, a
    core at 100 %, not a sleep) for 20 ms every step of a DDP job of another model
    (12 bf16 Linear(4096) layers, batch 4096); then the same job with no slow rank."""
    import hashlib

    import torch
    import torch.distributed as dist

    dev = join_group(rank, world)
    secs = lambda s: max(2.0, s * scale)  # noqa: E731
    record = {"rank": rank, "world": world, "plan": "advice_holdout2"}
    step = ddp_trainer(dev, rank, width=4096, layers=12, batch=4096)
    time.sleep(3)

    def run_steps(name, busy_rank):
        end = time.time() + secs(40)
        n = 0
        while True:
            step()
            if rank == busy_rank:
                torch.cuda.synchronize()
                until = time.perf_counter() + 0.020
                h = b"gpulens"
                while time.perf_counter() < until:  # host work: tokenizing, decoding
                    h = hashlib.sha256(h).digest()
            n += 1
            stop = torch.tensor([1 if time.time() >= end else 0], device=dev)
            dist.broadcast(stop, 0)
            if stop.item():
                break
        # Inside the phase: Phase.__exit__ keeps this and adds start and end.
        record.setdefault(name, {})["steps"] = n
        log(rank, f"{name}: {n} steps")

    with Phase(rank, "ddp_cpu_busy_rank0", record, slow_rank=0, host_ms=20):
        run_steps("ddp_cpu_busy_rank0", 0)
    time.sleep(2)
    with Phase(rank, "ddp_balanced", record):
        run_steps("ddp_balanced", -1)
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(record, f, indent=1)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpus", type=int, default=0, help="ranks (default: every visible GPU)")
    parser.add_argument("--out", required=True, help="folder for rank<R>.json")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every phase's length")
    parser.add_argument("--plan", choices=["main", "holdout", "advice", "advice_holdout",
                                           "advice_holdout2"], default="main",
                        help="main: expected.json's phases; holdout: expected-holdout.json's; "
                             "advice: expected-advice.json's; advice_holdout: "
                             "expected-advice-holdout.json's; advice_holdout2: "
                             "expected-advice-holdout2.json's")
    args = parser.parse_args(argv)
    import torch
    import torch.multiprocessing as mp

    world = args.gpus or torch.cuda.device_count()
    if world < 2:
        print(f"phases.py needs at least 2 GPUs; {world} visible", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    target = {"main": rank_main, "holdout": holdout_main, "advice": advice_main,
              "advice_holdout": advice_holdout_main,
              "advice_holdout2": advice_holdout2_main}[args.plan]
    mp.spawn(target, args=(world, args.out, args.scale), nprocs=world, join=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
