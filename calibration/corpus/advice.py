# SPDX-License-Identifier: Apache-2.0
"""The advice set of the labelled corpus (issue 28): workloads whose first fix
was wrong in held-out tries, or that no rule was written against. Their labels
(calibration/corpus/expected.json, "set": "advice") were written on 2026-11-27
before any of them ran. corpus.py imports this module and runs them by name;
`c` is corpus.py itself (phase marks, scaled seconds, the log, run_for).
"""

import time

INT_HASH = r"""
extern "C" __global__ void int_hash_all(unsigned* out, int iters) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < iters; ++i) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        x = x * 2654435761u + (unsigned)i;
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
"""


def advice_memory(c):
    """A random gather from a 4 GiB table, a fused streaming kernel, and
    integer-only hashing on every SM."""
    import cupy
    import numpy as np
    import torch
    import torch.nn.functional as F

    # 16 Mi rows of 64 fp32 (256 B): each looked-up row is two DRAM bursts at a
    # random address; nothing to compute.
    table = torch.randn(16 * 1024 * 1024, 64, device="cuda")
    pool = [torch.randint(0, table.shape[0], (1 << 20,), device="cuda") for _ in range(8)]
    for idx in pool:
        F.embedding(idx, table)
    torch.cuda.synchronize()
    time.sleep(2)
    with c.gm.phase("embedding_gather", rows=table.shape[0], row_bytes=256, lookups=1 << 20):
        k = [0]

        def gather():
            F.embedding(pool[k[0] % len(pool)], table)
            k[0] += 1

        n = c.run_for(c.seconds(30), gather, sync_every=16)
    c.log(f"embedding_gather: {n} gathers of 1 Mi rows")
    del table, pool
    torch.cuda.empty_cache()
    time.sleep(2)

    # One fused element-wise kernel over 1 GiB inputs: z = a * x + y, read two,
    # write one, a multiply-add per 12 bytes.
    axpy = cupy.ElementwiseKernel("float32 a, float32 x, float32 y", "float32 z",
                                  "z = a * x + y", "fused_axpy")
    n_el = 256 * 1024 * 1024
    x = cupy.random.random(n_el, dtype=cupy.float32)
    y = cupy.random.random(n_el, dtype=cupy.float32)
    z = cupy.empty_like(x)
    axpy(np.float32(2.0), x, y, z)
    cupy.cuda.Device().synchronize()
    with c.gm.phase("fused_stream", bytes_per_launch=3 * 4 * n_el):
        end = time.perf_counter() + c.seconds(30)
        launches = 0
        while time.perf_counter() < end:
            for _ in range(10):
                axpy(np.float32(2.0), x, y, z)
            launches += 10
            cupy.cuda.Device().synchronize()
    c.log(f"fused_stream: {launches} launches")
    del x, y, z
    cupy.get_default_memory_pool().free_all_blocks()
    time.sleep(2)

    # Integer hashing on every SM, several blocks each: legitimate work that no
    # float or tensor pipe sees.
    sms = cupy.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    kernel = cupy.RawKernel(INT_HASH, "int_hash_all")
    blocks, threads = sms * 4, 256
    out = cupy.empty(blocks * threads, dtype=cupy.uint32)
    iters = 200000
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    kernel((blocks,), (threads,), (out, np.int32(iters)))
    start.record()
    kernel((blocks,), (threads,), (out, np.int32(iters)))
    stop.record()
    stop.synchronize()
    ms = cupy.cuda.get_elapsed_time(start, stop)
    iters = max(1000, int(iters * 20.0 / max(ms, 1e-3)))  # ~20 ms a launch
    with c.gm.phase("int_hash_all", blocks=blocks, threads=threads, iters=iters):
        end = time.perf_counter() + c.seconds(30)
        launches = 0
        while time.perf_counter() < end:
            for _ in range(5):
                kernel((blocks,), (threads,), (out, np.int32(iters)))
            launches += 5
            cupy.cuda.Device().synchronize()
    c.log(f"int_hash_all: {launches} launches of {iters} iterations")


def advice_host(c):
    """Waits on the host that are not data loading: .item() after every layer,
    a synchronize after every small op, a process busy in Python while it holds
    GPU memory, and pageable device-to-host copies at a small link share."""
    import numpy as np
    import torch
    import torch.nn as nn

    layers = [nn.Linear(4096, 4096).cuda().to(torch.bfloat16) for _ in range(8)]
    params = [p for layer in layers for p in layer.parameters()]
    opt = torch.optim.SGD(params, lr=1e-4)
    x = torch.randn(512, 4096, device="cuda", dtype=torch.bfloat16)

    def train_step():
        h = x
        seen = 0.0
        for layer in layers:
            h = torch.relu(layer(h))
            seen += h.float().abs().mean().item()  # a per-layer statistic, read every time
        loss = h.float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item() + seen

    for _ in range(3):
        train_step()
    torch.cuda.synchronize()
    with c.gm.phase("item_every_layer", layers=8, batch=512, width=4096):
        n = c.run_for(c.seconds(30), train_step)
    c.log(f"item_every_layer: {n} steps")
    time.sleep(2)

    v = torch.randn(1 << 20, device="cuda")

    def op_and_wait():
        v.mul_(0.999).add_(0.001)
        torch.cuda.synchronize()

    with c.gm.phase("sync_every_op", elements=1 << 20):
        n = c.run_for(c.seconds(30), op_and_wait)
    c.log(f"sync_every_op: {n} op pairs")
    del layers, params, opt, x, v
    torch.cuda.empty_cache()
    time.sleep(2)

    # 14 GiB held while the only process tokenizes text in pure Python.
    held = torch.empty(14 * 1024 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    held.fill_(1)
    torch.cuda.synchronize()
    words = ("the quick brown fox jumps over the lazy dog " * 64).split()
    with c.gm.phase("cpu_tokenize", held_gib=14):
        end = time.perf_counter() + c.seconds(25)
        vocab, tokens = {}, 0
        while time.perf_counter() < end:
            for w in words:
                tokens += vocab.setdefault(w + str(tokens % 97), len(vocab)) & 1
    c.log(f"cpu_tokenize: {tokens} tokens, vocab {len(vocab)}")
    del held
    torch.cuda.empty_cache()
    time.sleep(2)

    # 8 MiB read back into pageable memory, then summed on the CPU, over and over:
    # copies most of the time the GPU does anything, at a small share of the link.
    src = torch.randn(2 * 1024 * 1024, device="cuda")
    src.cpu()
    with c.gm.phase("pageable_d2h_small", bytes_per_copy=8 << 20):
        end = time.perf_counter() + c.seconds(30)
        copies, total = 0, 0.0
        while time.perf_counter() < end:
            host = src.cpu().numpy()
            total += float(np.sum(host[::4]))
            copies += 1
    c.log(f"pageable_d2h_small: {copies} copies")


def advice_loader(c):
    """The data-loading case the advice must still get right: a CNN fed by four
    DataLoader workers whose transform costs 12 ms a sample."""
    import torch
    import torch.nn as nn

    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(64, 10),
    ).cuda()
    opt = torch.optim.Adam(model.parameters())
    loader = torch.utils.data.DataLoader(
        c.SlowDataset(1_000_000, 12.0), batch_size=32, num_workers=4, pin_memory=True,
        persistent_workers=True)
    step = c.loader_step(model, opt, loader)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with c.gm.phase("loader_workers4", batch=32, workers=4, cpu_ms_per_sample=12):
        end = time.perf_counter() + c.seconds(30)
        n = 0
        while time.perf_counter() < end:
            step()
            n += 1
        torch.cuda.synchronize()
    c.log(f"loader_workers4: {n} steps")


def advice_compiled(c):
    """torch.compile'd inference of a bf16 transformer at batch 32 x 512."""
    import torch

    model = c.small_transformer(1024, 16, 8, torch.bfloat16)
    compiled = torch.compile(model)
    x = torch.randn(32, 512, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        for _ in range(3):
            compiled(x)
        torch.cuda.synchronize()
        time.sleep(2)
        with c.gm.phase("compiled_infer", batch=32, tokens=512, layers=8):
            n = c.run_for(c.seconds(30), lambda: compiled(x))
    c.log(f"compiled_infer: {n} batches")


# Each thread follows its own chain through a random permutation: every step a
# dependent load of a random 32-byte sector, nothing else.
CHASE = r"""
extern "C" __global__ void chase(const int* next, int* out, int steps, long long n) {
    int i = (int)(((long long)(blockIdx.x * blockDim.x + threadIdx.x) * 7919) % n);
    for (int s = 0; s < steps; ++s) i = next[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}
"""


def holdout_latency(c):
    """The memory-stall rule's holdout (labels in expected.json, set
    holdout_latency, written before this ran): a scalar random gather, and a
    pointer chase at full occupancy and at one warp per SM."""
    import cupy
    import numpy as np
    import torch

    src = torch.randn(1024 * 1024 * 1024, device="cuda")  # 4 GiB of fp32
    pool = [torch.randint(0, src.numel(), (16 << 20,), device="cuda") for _ in range(4)]
    for idx in pool:
        torch.take(src, idx)
    torch.cuda.synchronize()
    time.sleep(2)
    with c.gm.phase("gather_scalar", elements=src.numel(), lookups=16 << 20):
        k = [0]

        def gather():
            torch.take(src, pool[k[0] % len(pool)])
            k[0] += 1

        n = c.run_for(c.seconds(30), gather, sync_every=16)
    c.log(f"gather_scalar: {n} gathers of 16 Mi elements")
    del src, pool
    torch.cuda.empty_cache()
    time.sleep(2)

    n_el = 512 * 1024 * 1024  # 2 GiB of int32: one random cycle through all of it
    perm = cupy.random.permutation(n_el).astype(cupy.int32)
    nxt = cupy.empty_like(perm)
    nxt[perm] = cupy.roll(perm, -1)
    del perm
    kernel = cupy.RawKernel(CHASE, "chase")
    sms = cupy.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    for name, blocks, threads in (("chase_full", sms * 8, 256), ("chase_1warp", sms, 32)):
        out = cupy.empty(blocks * threads, dtype=cupy.int32)
        steps = 2000
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        kernel((blocks,), (threads,), (nxt, out, np.int32(steps), np.int64(n_el)))
        start.record()
        kernel((blocks,), (threads,), (nxt, out, np.int32(steps), np.int64(n_el)))
        stop.record()
        stop.synchronize()
        ms = cupy.cuda.get_elapsed_time(start, stop)
        steps = max(100, int(steps * 20.0 / max(ms, 1e-3)))  # ~20 ms a launch
        time.sleep(2)
        with c.gm.phase(name, blocks=blocks, threads=threads, steps=steps):
            end = time.perf_counter() + c.seconds(30)
            launches = 0
            while time.perf_counter() < end:
                for _ in range(5):
                    kernel((blocks,), (threads,), (nxt, out, np.int32(steps), np.int64(n_el)))
                launches += 5
                cupy.cuda.Device().synchronize()
        c.log(f"{name}: {launches} launches of {steps} steps")
    del nxt
    cupy.get_default_memory_pool().free_all_blocks()
    time.sleep(2)


WORKLOADS = {
    "advice_memory": advice_memory,
    "advice_host": advice_host,
    "advice_loader": advice_loader,
    "advice_compiled": advice_compiled,
    "holdout_latency": holdout_latency,
}
