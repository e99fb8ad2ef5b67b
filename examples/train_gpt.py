#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small GPT trained in bf16 on random tokens: a real PyTorch workload for
`gpulens run`, which reports its own FLOPs-based MFU so the two can be compared.

    gpulens run -o report.html -- python examples/train_gpt.py --seconds 60
    gpulens run -o starved.html -- python examples/train_gpt.py --seconds 60 --starve

Model FLOPs per step are 6 x parameters x tokens (forward 2, backward 4; the
attention score FLOPs are left out, as in most MFU figures). Each timed step
ends with a synchronisation and a step mark to $GPULENS_MARKS carrying those
FLOPs (contrib/gpulens_marks.py). Warm-up steps are neither timed nor marked:
the script's MFU and gpulens' both cover exactly the marked steps, from the
end of the first to the end of the last.

--starve burns CPU time in the data loader before every batch (250 ms by
default), as a slow input pipeline would: the GPU then waits for the host, and
gpulens should say host_bound and point at the DataLoader. --workers N moves
that work to N loader processes, which is the fix.

--nvtx wraps each step and its phases (data, forward, backward, optimizer) in
NVTX ranges (torch.cuda.nvtx.range_push/pop). Under `gpulens run --kernels` the
report then has an NVTX ranges table: with --starve the "data" range holds the
GPU's idle time. Without --nvtx no NVTX call is made at all.

    gpulens run --kernels -o starved.html -- python examples/train_gpt.py --seconds 60 --starve --nvtx
"""

import argparse
import contextlib
import json
import math
import os
import re
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "contrib"))
import gpulens_marks as gm  # noqa: E402


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)
        self.proj = nn.Linear(d, d, bias=False)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d, bias=False)
        self.out = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        shape = (b, s, self.heads, d // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, seq, d, layers, heads):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied: counted once

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class RandomTokens(torch.utils.data.IterableDataset):
    """Random token batches; `starve_ms` of CPU work before each, like a slow
    decode/augment step in a real input pipeline."""

    def __init__(self, batch, seq, vocab, starve_ms):
        self.batch, self.seq, self.vocab, self.starve_ms = batch, seq, vocab, starve_ms

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        gen = torch.Generator().manual_seed(1234 + (info.id if info else 0))
        while True:
            if self.starve_ms > 0:
                until = time.perf_counter() + self.starve_ms / 1000.0
                x = 0.0
                while time.perf_counter() < until:  # busy: CPU work, not a sleep
                    x = math.sin(x + 1.0)
            yield torch.randint(0, self.vocab, (self.batch, self.seq + 1), generator=gen)


def dense_peak_tflops(device_name, dtype):
    """The same table gpulens reads (data/gpu_peaks.json), so both use one peak."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "gpu_peaks.json")
    try:
        with open(path) as f:
            table = json.load(f)
    except OSError:
        return None, None
    for m in table["models"]:
        if re.search(m["match"], device_name, re.IGNORECASE):
            return m["tflops"].get(dtype), m["model"]
    return None, None


class nvtx_range:
    """An NVTX push/pop range (seen by `gpulens run --kernels`, Nsight, ...)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        torch.cuda.nvtx.range_push(self.name)

    def __exit__(self, *exc):
        torch.cuda.nvtx.range_pop()


_NO_RANGE = contextlib.nullcontext()


def no_range(name):
    """Without --nvtx: one shared do-nothing context, so the step costs the same as before."""
    return _NO_RANGE


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=300, help="timed steps (after warm-up)")
    p.add_argument("--seconds", type=float, default=0, help="stop after this long instead (0: --steps)")
    p.add_argument("--warmup", type=int, default=10, help="untimed, unmarked steps first")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--d-model", type=int, default=1024)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32768)
    p.add_argument("--starve", action="store_true", help="slow data loading: CPU work per batch")
    p.add_argument("--starve-ms", type=float, default=250)
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--peak-tflops", type=float, help="dense bf16 peak per GPU (default: data/gpu_peaks.json)")
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--nvtx", action="store_true", help="NVTX ranges around each step and its phases")
    args = p.parse_args()

    if not torch.cuda.is_available():
        sys.exit("train_gpt: no CUDA device")
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    model = GPT(args.vocab, args.seq, args.d_model, args.layers, args.heads).to(device)
    params = sum(p.numel() for p in model.parameters())
    tokens = args.batch * args.seq
    flops_per_step = 6 * params * tokens
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    data = RandomTokens(args.batch, args.seq, args.vocab, args.starve_ms if args.starve else 0)
    loader = iter(
        torch.utils.data.DataLoader(
            data, batch_size=None, num_workers=args.workers, pin_memory=True,
            persistent_workers=args.workers > 0))

    name = torch.cuda.get_device_name(device)
    peak, model_name = (args.peak_tflops, "--peak-tflops") if args.peak_tflops else dense_peak_tflops(name, "bf16")
    print(f"train_gpt: {params / 1e6:.1f} M parameters, batch {args.batch} x {args.seq} tokens, "
          f"flops_per_step={flops_per_step:.6e}, device {name}"
          f"{' (starved: %g ms CPU per batch, %d workers)' % (args.starve_ms, args.workers) if args.starve else ''}",
          flush=True)

    rng = nvtx_range if args.nvtx else no_range

    def train_step():
        with rng("step"):
            with rng("data"):
                batch = next(loader).to(device, non_blocking=True)
            with rng("forward"), torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(batch[:, :-1])
                loss = F.cross_entropy(logits.float().view(-1, args.vocab), batch[:, 1:].reshape(-1))
            with rng("backward"):
                loss.backward()
            with rng("optimizer"):
                opt.step()
                opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(args.warmup):
        train_step()
    torch.cuda.synchronize()

    phase = "train_starved" if args.starve else "train"
    steps = 0
    with gm.phase(phase, params=params, batch=args.batch, seq=args.seq, flops_per_step=flops_per_step):
        start = time.time()
        gm.step(0, t=start)  # opens the timed span; its FLOPs are not counted
        last = start
        while (steps < args.steps) if args.seconds <= 0 else (last - start < args.seconds):
            loss = train_step()
            torch.cuda.synchronize()  # the step is done on the GPU, not just queued
            last = time.time()
            steps += 1
            gm.step(flops_per_step, t=last)
            if steps % args.log_every == 0:
                print(f"step {steps} loss {loss.item():.4f} {(last - start) / steps * 1000:.1f} ms/step", flush=True)

    seconds = last - start
    tflops = flops_per_step * steps / seconds / 1e12
    line = f"train_gpt: {steps} steps in {seconds:.2f} s, {seconds / steps * 1000:.1f} ms/step, {tflops:.1f} TFLOP/s"
    if peak:
        line += f", MFU {tflops / peak * 100:.1f} % of {peak:g} TFLOP/s (dense bf16 peak, {model_name})"
    print(line, flush=True)
    gm.mark("train_gpt_result", steps=steps, seconds=seconds, achieved_tflops=tflops,
            mfu=(tflops / peak) if peak else None)


if __name__ == "__main__":
    main()
