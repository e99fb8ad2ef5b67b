#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Workloads of the labelled diagnosis corpus (calibration/corpus/expected.json).

Each workload runs one or more phases, each bracketed by NAME:start / NAME:end
marks written to $GPULENS_MARKS (contrib/gpulens_marks.py), so a recording made
with `gpulens run` says where every phase begins and ends:

    gpulens run --interval 0.1 --trace infer_b1.trace.jsonl -- \
        python3 calibration/corpus/corpus.py infer_b1

Setup (model building, allocation, warm-up, compilation of raw kernels) happens
before a phase's start mark and clean-up after its end mark, so a marked window
holds only the steady state. The expected diagnosis of every phase, and the
physical reason for it, were written in expected.json before any of these ran.

PyTorch for framework workloads; CuPy raw kernels for the hangs and the steady
small kernels, whose SM footprint must be exact. --scale shortens every phase
(0.1 for a quick smoke run); the hang and steady phases keep their >= 2 minutes
only at scale 1.
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "contrib"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import gpulens_marks as gm  # noqa: E402
import advice  # noqa: E402  (calibration/corpus/advice.py)
import evidence  # noqa: E402  (calibration/corpus/evidence.py)

SCALE = 1.0


def seconds(s):
    return max(1.0, s * SCALE)


def log(msg):
    print(f"[corpus {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run_for(duration, body, sync_every=1):
    """Calls body() until `duration` seconds have passed; returns the call count.
    Synchronises every `sync_every` calls so the queue never runs far ahead."""
    import torch

    end = time.perf_counter() + duration
    n = 0
    while time.perf_counter() < end:
        body()
        n += 1
        if n % sync_every == 0:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return n


# ---------------------------------------------------------------- models


def small_transformer(d, heads, layers, dtype):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.out = nn.Linear(4 * d, d)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            shape = (b, s, heads, d // heads)
            q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    model = nn.Sequential(*[Block() for _ in range(layers)])
    return model.to(device="cuda", dtype=dtype).eval()


# ---------------------------------------------------------------- workloads


def infer_b1():
    import torch

    model = small_transformer(256, 4, 4, torch.bfloat16)
    x = torch.randn(1, 32, 256, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        for _ in range(20):
            model(x)
        torch.cuda.synchronize()
        with gm.phase("eager", batch=1, tokens=32):
            n = run_for(seconds(20), lambda: model(x))
        log(f"eager: {n} requests")
    time.sleep(2)

    static_x = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.inference_mode():
        for _ in range(5):
            model(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.inference_mode():
        static_y = model(static_x)
    graph.replay()
    torch.cuda.synchronize()
    with gm.phase("graphs", batch=1, tokens=32):
        n = run_for(seconds(20), graph.replay)
    log(f"graphs: {n} requests, out {tuple(static_y.shape)}")


def infer_server():
    import torch

    model = small_transformer(1024, 16, 12, torch.bfloat16)
    x = torch.randn(64, 512, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        for _ in range(3):
            model(x)
        torch.cuda.synchronize()
        with gm.phase("batch64", batch=64, tokens=512):
            n = run_for(seconds(20), lambda: model(x))
    log(f"batch64: {n} batches")


def memory_ops():
    import torch
    import torch.nn.functional as F

    x = torch.randn(16384, 16384, device="cuda", dtype=torch.float32)

    def softmax_naive():
        e = x.exp()
        return e / e.sum(dim=-1, keepdim=True)

    softmax_naive()
    torch.cuda.synchronize()
    with gm.phase("softmax_naive", rows=16384, cols=16384, dtype="fp32"):
        n = run_for(seconds(20), softmax_naive, sync_every=4)
    log(f"softmax_naive: {n} calls")
    del x
    torch.cuda.empty_cache()
    time.sleep(2)

    y = torch.randn(32768, 8192, device="cuda", dtype=torch.float32)
    F.layer_norm(y, (8192,))
    torch.cuda.synchronize()
    with gm.phase("layer_norm", rows=32768, cols=8192, dtype="fp32"):
        n = run_for(seconds(20), lambda: F.layer_norm(y, (8192,)), sync_every=4)
    log(f"layer_norm: {n} calls")


def matmul_fp32():
    import torch

    a = torch.randn(8192, 8192, device="cuda")
    b = torch.randn(8192, 8192, device="cuda")
    for precision, name in (("highest", "no_tf32"), ("high", "tf32")):
        torch.set_float32_matmul_precision(precision)
        a @ b
        torch.cuda.synchronize()
        with gm.phase(name, n=8192, dtype="fp32", matmul_precision=precision):
            n = run_for(seconds(20), lambda: a @ b, sync_every=4)
        log(f"{name}: {n} matmuls")
        time.sleep(2)


def h2d_copies():
    import torch

    n = 64 * 1024 * 1024  # 256 MiB of fp32
    pageable = torch.rand(n)
    pinned = pageable.pin_memory()
    dst = torch.empty(n, device="cuda")
    dst2 = torch.empty(n, device="cuda")
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    gib = n * 4 / 2**30

    dst.copy_(pageable)
    torch.cuda.synchronize()
    with gm.phase("pageable", mib=256):
        t0 = time.perf_counter()
        k = run_for(seconds(20), lambda: dst.copy_(pageable))
        log(f"pageable: {k} copies, {k * gib / (time.perf_counter() - t0):.1f} GiB/s")
    time.sleep(2)

    with gm.phase("pinned", mib=256):
        t0 = time.perf_counter()
        k = run_for(seconds(20), lambda: dst.copy_(pinned, non_blocking=True), sync_every=4)
        log(f"pinned: {k} copies, {k * gib / (time.perf_counter() - t0):.1f} GiB/s")
    time.sleep(2)

    side = torch.cuda.Stream()

    def pinned_overlap():
        with torch.cuda.stream(side):
            dst2.copy_(pinned, non_blocking=True)
        for _ in range(8):
            a @ b
        torch.cuda.current_stream().wait_stream(side)

    pinned_overlap()
    torch.cuda.synchronize()
    with gm.phase("pinned_overlap", mib=256, gemms_per_copy=8):
        k = run_for(seconds(20), pinned_overlap)
    log(f"pinned_overlap: {k} steps")
    time.sleep(2)

    def pageable_overlap():
        for _ in range(12):
            a @ b
        dst.copy_(pageable)

    with gm.phase("pageable_overlap", mib=256, gemms_per_copy=12):
        k = run_for(seconds(20), pageable_overlap)
    log(f"pageable_overlap: {k} steps")


def gemm_worker(duration):
    import torch

    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    a @ b
    torch.cuda.synchronize()
    n = run_for(duration, lambda: a @ b, sync_every=8)
    log(f"gemm worker {os.getpid()}: {n} GEMMs")


def two_procs():
    import torch

    torch.zeros(1, device="cuda")
    duration = seconds(20)
    # The second process starts first (its CUDA start-up takes seconds); both
    # run for the phase, which is marked around the shared time.
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--scale", str(SCALE), "_gemm_worker", str(duration + 6)]
    )
    time.sleep(6)
    with gm.phase("shared_gemm", processes=2):
        gemm_worker(duration)
    child.wait()


def idle_hold():
    import torch

    held = torch.empty(24 * 2**30, dtype=torch.uint8, device="cuda")
    held.fill_(1)
    torch.cuda.synchronize()
    with gm.phase("hold", held_gib=24):
        time.sleep(seconds(25))
    del held


class SlowDataset:
    """A map-style dataset whose every sample costs `cpu_ms` of CPU, as a real
    decode/augment step would."""

    def __init__(self, n, cpu_ms):
        self.n = n
        self.cpu_s = cpu_ms / 1000

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import torch

        end = time.perf_counter() + self.cpu_s
        while time.perf_counter() < end:
            pass
        return torch.randn(3, 64, 64), i % 10


def loader_step(model, opt, loader):
    """One classifier training step on the loader's next batch, copied to the
    GPU without blocking; returns the loss."""
    import torch.nn as nn

    it = iter(loader)

    def step():
        x, y = next(it)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return step


def small_cnn():
    """A two-layer CNN classifier on 64x64 images: a step of about 2 ms on a
    Hopper GPU at batch 32-64, so its input pipeline decides the pace."""
    import torch.nn as nn

    return nn.Sequential(
        nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(),
        nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(128, 10),
    ).cuda()


def dataloader_starved():
    import torch

    model = small_cnn()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(
        SlowDataset(1_000_000, 4.0), batch_size=64, num_workers=2, pin_memory=True,
        persistent_workers=True, shuffle=True)
    step = loader_step(model, opt, loader)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with gm.phase("train", batch=64, workers=2, cpu_ms_per_sample=4):
        end = time.perf_counter() + seconds(30)
        n = 0
        while time.perf_counter() < end:
            step().item()
            n += 1
    log(f"dataloader_starved: {n} steps")


def leak_oom():
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    kept = []
    a @ b
    torch.cuda.synchronize()
    log("leak: keeping 384 MiB per 0.5 s step until out of memory")
    with gm.phase("leak", mib_per_step=384):
        while True:
            for _ in range(30):
                a @ b
            kept.append(torch.empty(384 * 2**20, dtype=torch.uint8, device="cuda").fill_(7))
            torch.cuda.synchronize()
            time.sleep(0.45)
            if SCALE < 1 and len(kept) > 8:
                kept.clear()


HANG_KERNEL = r"""
extern "C" __global__ void wait_flag(const volatile int* flag, unsigned long long duration_ns,
                                     unsigned int sleep_ns) {
  extern __shared__ int reserve[];  // sized so that one block fills an SM
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    if (*flag != 0) return;  // the peer's flag: never written
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= duration_ns) return;
    if (sleep_ns) __nanosleep(sleep_ns);
  }
}
"""


def one_block_per_sm(kernel):
    """Reserves more than half an SM's shared memory per block, so no two blocks
    share an SM and N blocks occupy exactly N SMs."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    per_sm = props["sharedMemPerMultiprocessor"]
    per_block_max = props.get("sharedMemPerBlockOptin", per_sm // 2)
    want = min(per_block_max, per_sm // 2 + 8 * 1024)
    kernel.max_dynamic_shared_size_bytes = want
    return want, props["multiProcessorCount"]


def hang():
    import cupy
    import numpy as np

    kernel = cupy.RawKernel(HANG_KERNEL, "wait_flag")
    smem, sms = one_block_per_sm(kernel)
    flag = cupy.zeros(1, dtype=cupy.int32)
    stream = cupy.cuda.Stream(non_blocking=True)
    # Warm-up: compiles and loads the kernel before any phase starts.
    kernel((1,), (32,), (flag, np.uint64(1000), np.uint32(0)), shared_mem=smem, stream=stream)
    stream.synchronize()
    for name, blocks, sleep_ns in (("hang_1sm_spin", 1, 0), ("hang_8sm_sleep", 8, 1000),
                                   ("hang_32sm_spin", 32, 0), ("hang_allsm_sleep", sms, 1000)):
        duration = seconds(125)
        with gm.phase(name, blocks=blocks, threads=512, sleep_ns=sleep_ns):
            kernel((blocks,), (512,), (flag, np.uint64(int(duration * 1e9)), np.uint32(sleep_ns)),
                   shared_mem=smem, stream=stream)
            # The host waits as a rank blocked in a collective would.
            stream.synchronize()
        log(f"{name}: {blocks} blocks held {duration:.0f} s")
        time.sleep(5)


STEADY_KERNELS = r"""
extern "C" __global__ void stream_axpb(float* x, long long n, float a, float b) {
  extern __shared__ int reserve[];
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    x[i] = x[i] * a + b;
}
extern "C" __global__ void fma_chain(float* out, int iters) {
  extern __shared__ int reserve[];
  float v0 = threadIdx.x * 1e-3f, v1 = v0 + 1.f, v2 = v0 + 2.f, v3 = v0 + 3.f;
  for (int i = 0; i < iters; ++i) {
    v0 = fmaf(v0, 0.9999f, 1e-4f); v1 = fmaf(v1, 0.9999f, 1e-4f);
    v2 = fmaf(v2, 0.9999f, 1e-4f); v3 = fmaf(v3, 0.9999f, 1e-4f);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v0 + v1 + v2 + v3;
}
"""


def steady_small():
    import cupy
    import numpy as np

    module = cupy.RawModule(code=STEADY_KERNELS)
    axpb = module.get_function("stream_axpb")
    fma = module.get_function("fma_chain")
    smem, _ = one_block_per_sm(axpb)
    one_block_per_sm(fma)
    n = 64 * 1024 * 1024
    x = cupy.random.rand(n, dtype=cupy.float32)
    out = cupy.empty(8 * 512, dtype=cupy.float32)
    stream = cupy.cuda.Stream(non_blocking=True)

    def launch_axpb():
        axpb((8,), (512,), (x, np.int64(n), np.float32(0.999), np.float32(0.001)), shared_mem=smem,
             stream=stream)

    # Size the FMA kernel to ~2 ms a launch.
    iters = 20000
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    fma((8,), (512,), (out, np.int32(iters)), shared_mem=smem, stream=stream)
    start.record(stream)
    fma((8,), (512,), (out, np.int32(iters)), shared_mem=smem, stream=stream)
    stop.record(stream)
    stop.synchronize()
    ms = cupy.cuda.get_elapsed_time(start, stop)
    iters = max(1000, int(iters * 2.0 / max(ms, 1e-3)))

    def launch_fma():
        fma((8,), (512,), (out, np.int32(iters)), shared_mem=smem, stream=stream)

    for name, launch, fields in (("stream8", launch_axpb, {"mib": 256}),
                                 ("fma8", launch_fma, {"iters": iters})):
        launch()
        stream.synchronize()
        with gm.phase(name, blocks=8, threads=512, **fields):
            end = time.perf_counter() + seconds(130)
            k = 0
            while time.perf_counter() < end:
                for _ in range(20):
                    launch()
                k += 20
                stream.synchronize()
        log(f"{name}: {k} launches")
        time.sleep(5)


def compiled():
    import torch
    from train_gpt import GPT

    model = GPT(vocab=32768, seq=512, d=1024, layers=8, heads=16).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    cmodel = torch.compile(model)
    idx = torch.randint(0, 32768, (16, 512), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = cmodel(idx)
            loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.shape[-1]).float(),
                                                     idx.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    torch.cuda.synchronize()
    with gm.phase("compile"):
        t0 = time.perf_counter()
        for _ in range(2):
            step()
        torch.cuda.synchronize()
    log(f"compile: {time.perf_counter() - t0:.1f} s")
    with gm.phase("train", batch=16, tokens=512):
        n = run_for(seconds(30), step, sync_every=1)
    log(f"train: {n} steps")


# ---------------------------------------------------------------- holdout
# Added after the rules changed, to test them on recordings they were not built
# from (expected.json: `set: holdout`).


def holdout_copies():
    import torch

    n = 64 * 1024 * 1024  # 256 MiB of fp32
    x = torch.rand(n, device="cuda")
    host_pageable = torch.empty(n)
    host_pinned = torch.empty(n).pin_memory()
    gib = n * 4 / 2**30
    host_pageable.copy_(x)
    torch.cuda.synchronize()
    with gm.phase("pageable_d2h", mib=256):
        t0 = time.perf_counter()
        k = run_for(seconds(45), lambda: host_pageable.copy_(x))
        log(f"pageable_d2h: {k} copies, {k * gib / (time.perf_counter() - t0):.1f} GiB/s")
    time.sleep(2)
    with gm.phase("pinned_d2h", mib=256):
        t0 = time.perf_counter()
        k = run_for(seconds(45), lambda: host_pinned.copy_(x, non_blocking=True), sync_every=4)
        log(f"pinned_d2h: {k} copies, {k * gib / (time.perf_counter() - t0):.1f} GiB/s")
    time.sleep(2)
    small = torch.rand(16 * 1024).pin_memory()  # 64 KiB
    dst = torch.empty(16 * 1024, device="cuda")
    dst.copy_(small, non_blocking=True)
    torch.cuda.synchronize()
    with gm.phase("small_pinned_h2d", kib=64):
        t0 = time.perf_counter()
        k = run_for(seconds(45), lambda: dst.copy_(small, non_blocking=True), sync_every=64)
        log(f"small_pinned_h2d: {k} copies, {k / (time.perf_counter() - t0):.0f} copies/s")


HOLDOUT_KERNELS = r"""
extern "C" __global__ void wait_flag_atomic(const volatile int* flag, unsigned long long* counter,
                                            unsigned long long duration_ns) {
  extern __shared__ int reserve[];
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    if (*flag != 0) return;
    if (threadIdx.x == 0) atomicAdd(counter, 1ULL);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= duration_ns) return;
  }
}
extern "C" __global__ void int_hash(unsigned int* out, int iters) {
  extern __shared__ int reserve[];
  unsigned int v = blockIdx.x * blockDim.x + threadIdx.x + 1;
  for (int i = 0; i < iters; ++i) {
    v ^= v << 13; v ^= v >> 17; v ^= v << 5;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
"""


def holdout_hang():
    import cupy
    import numpy as np

    module = cupy.RawModule(code=HOLDOUT_KERNELS)
    atomic = module.get_function("wait_flag_atomic")
    ihash = module.get_function("int_hash")
    sleeper = cupy.RawKernel(HANG_KERNEL, "wait_flag")
    smem, _ = one_block_per_sm(atomic)
    one_block_per_sm(ihash)
    one_block_per_sm(sleeper)
    flag = cupy.zeros(1, dtype=cupy.int32)
    counter = cupy.zeros(1, dtype=cupy.uint64)
    out = cupy.empty(16 * 256, dtype=cupy.uint32)
    stream = cupy.cuda.Stream(non_blocking=True)
    atomic((1,), (32,), (flag, counter, np.uint64(1000)), shared_mem=smem, stream=stream)
    sleeper((1,), (32,), (flag, np.uint64(1000), np.uint32(0)), shared_mem=smem, stream=stream)
    stream.synchronize()
    duration = seconds(80)
    with gm.phase("hang_64sm_atomic", blocks=64, threads=256):
        atomic((64,), (256,), (flag, counter, np.uint64(int(duration * 1e9))), shared_mem=smem,
               stream=stream)
        stream.synchronize()
    log(f"hang_64sm_atomic: {int(counter.get()[0])} atomics")
    time.sleep(5)
    with gm.phase("hang_16sm_sleep_long", blocks=16, threads=256, sleep_ns=1000000):
        sleeper((16,), (256,), (flag, np.uint64(int(duration * 1e9)), np.uint32(1000000)),
                shared_mem=smem, stream=stream)
        stream.synchronize()
    log("hang_16sm_sleep_long done")
    time.sleep(5)
    # Size the hashing kernel to ~2 ms a launch.
    iters = 20000
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    ihash((16,), (256,), (out, np.int32(iters)), shared_mem=smem, stream=stream)
    start.record(stream)
    ihash((16,), (256,), (out, np.int32(iters)), shared_mem=smem, stream=stream)
    stop.record(stream)
    stop.synchronize()
    ms = cupy.cuda.get_elapsed_time(start, stop)
    iters = max(1000, int(iters * 2.0 / max(ms, 1e-3)))
    ihash((16,), (256,), (out, np.int32(iters)), shared_mem=smem, stream=stream)
    stream.synchronize()
    with gm.phase("int_work_16sm", blocks=16, threads=256, iters=iters):
        end = time.perf_counter() + duration
        k = 0
        while time.perf_counter() < end:
            for _ in range(20):
                ihash((16,), (256,), (out, np.int32(iters)), shared_mem=smem, stream=stream)
            k += 20
            stream.synchronize()
    log(f"int_work_16sm: {k} launches")


def holdout_blips():
    import torch

    model = torch.nn.Linear(1024, 1024).cuda()
    x = torch.ones(1024, device="cuda")
    torch.cuda.synchronize()
    time.sleep(3)
    with gm.phase("blips", every_s=3):
        end = time.perf_counter() + seconds(45)
        while time.perf_counter() < end:
            x.add_(1)
            torch.cuda.synchronize()
            time.sleep(3)
    time.sleep(2)
    y = torch.ones(1024, device="cuda")
    with gm.phase("tiny_stream", elements=1024):
        k = run_for(seconds(45), lambda: y.mul_(1.0001).add_(1e-4), sync_every=500)
    log(f"tiny_stream: {2 * k} ops")
    del model


WORKLOADS = {
    "infer_b1": infer_b1,
    "infer_server": infer_server,
    "memory_ops": memory_ops,
    "matmul_fp32": matmul_fp32,
    "h2d_copies": h2d_copies,
    "two_procs": two_procs,
    "idle_hold": idle_hold,
    "dataloader_starved": dataloader_starved,
    "leak_oom": leak_oom,
    "hang": hang,
    "steady_small": steady_small,
    "compiled": compiled,
    "holdout_copies": holdout_copies,
    "holdout_hang": holdout_hang,
    "holdout_blips": holdout_blips,
}
# The advice set (issue 28) and the evidence set (issue 46) live in their own
# modules; each workload there takes this module.
for _set in (advice, evidence):
    WORKLOADS.update({name: (lambda f: lambda: f(sys.modules[__name__]))(f)
                      for name, f in _set.WORKLOADS.items()})


def main(argv):
    global SCALE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every phase's length")
    parser.add_argument("--list", action="store_true", help="print the workload names")
    parser.add_argument("workload", nargs="?", help="one of --list")
    parser.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    SCALE = args.scale
    if args.list:
        print("\n".join(WORKLOADS))
        return 0
    if args.workload == "_gemm_worker":
        gemm_worker(float(args.rest[0]))
        return 0
    if args.workload not in WORKLOADS:
        parser.error(f"unknown workload {args.workload!r}; one of: {', '.join(WORKLOADS)}")
    log(f"{args.workload} (scale {SCALE})")
    WORKLOADS[args.workload]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
