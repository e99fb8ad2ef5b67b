# SPDX-License-Identifier: Apache-2.0
"""The evidence set of the labelled corpus (issue 46): workloads where the first
fix must follow what the job already does (precision, pinning, fusion,
synchronisation) and jobs that die out of memory. Real model code where it
matters: transformers' Llama and GPT-2 built from a config with random weights
(nothing is downloaded). Their labels (calibration/corpus/expected.json,
"set": "evidence") were written on 2026-11-29 before any of them ran.
corpus.py imports this module and runs them by name; `c` is corpus.py itself
(phase marks, scaled seconds, the log, run_for, SlowDataset).
"""

import time


def _llama(hidden, layers, inter, heads):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=32000, hidden_size=hidden, intermediate_size=inter,
                      num_hidden_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=heads, max_position_embeddings=4096)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg)
    return model.to(torch.bfloat16)


def _generate(model, ids, new_tokens):
    import torch

    with torch.inference_mode():
        return model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=new_tokens,
                              min_new_tokens=new_tokens, do_sample=False, pad_token_id=0)


def llama_gen_b1(c):
    """Greedy generation at batch 1, eager: the host's dispatch bounds it."""
    import torch

    model = _llama(2048, 16, 5632, 16).eval()
    ids = torch.randint(3, 32000, (1, 64), device="cuda")
    _generate(model, ids, 8)
    torch.cuda.synchronize()
    with c.gm.phase("gen_b1", batch=1, prompt=64, new_tokens=128):
        end = time.perf_counter() + c.seconds(20)
        calls = 0
        t0 = time.perf_counter()
        while time.perf_counter() < end:
            _generate(model, ids, 128)
            calls += 1
        torch.cuda.synchronize()
    c.log(f"gen_b1: {calls * 128 / (time.perf_counter() - t0):.1f} tokens/s")


def llama_gen_b64(c):
    """Generation of 16 tokens for 64 prompts of 1024: the prefill dominates."""
    import torch

    model = _llama(2048, 16, 5632, 16).eval()
    ids = torch.randint(3, 32000, (64, 1024), device="cuda")
    _generate(model, ids, 2)
    torch.cuda.synchronize()
    with c.gm.phase("gen_b64", batch=64, prompt=1024, new_tokens=16):
        end = time.perf_counter() + c.seconds(20)
        calls = 0
        while time.perf_counter() < end:
            _generate(model, ids, 16)
            calls += 1
        torch.cuda.synchronize()
    c.log(f"gen_b64: {calls} calls")


def gpt2_finetune(c):
    """GPT-2 small fine-tuned in bf16 autocast, fed by a DataLoader."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_positions=1024, n_embd=768, n_layer=12, n_head=12)
    torch.manual_seed(0)
    try:
        model = GPT2LMHeadModel._from_config(cfg, attn_implementation="sdpa")
    except (TypeError, ValueError):
        model = GPT2LMHeadModel(cfg)
    model = model.cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    tokens = torch.randint(0, cfg.vocab_size, (4096, 1024))
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(tokens), batch_size=16, num_workers=2, pin_memory=True,
        shuffle=True, drop_last=True, persistent_workers=True)

    def batches():
        while True:
            for (x,) in loader:
                yield x

    it = batches()

    def step():
        x = next(it).cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with c.gm.phase("finetune", batch=16, tokens=1024, workers=2):
        n = c.run_for(c.seconds(20), step, sync_every=4)
    c.log(f"finetune: {n} steps")


def llama_compile(c):
    """torch.compile of a small Llama training step: the compile, then training."""
    import torch
    import torch._dynamo

    torch._dynamo.config.suppress_errors = True  # a graph break must not end the workload
    model = _llama(1024, 8, 2816, 16).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    cmodel = torch.compile(model)
    idx = torch.randint(3, 32000, (32, 512), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = cmodel(input_ids=idx, labels=idx).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    torch.cuda.synchronize()
    with c.gm.phase("compile"):
        t0 = time.perf_counter()
        for _ in range(2):
            step()
        torch.cuda.synchronize()
    c.log(f"compile: {time.perf_counter() - t0:.1f} s")
    with c.gm.phase("train", batch=32, tokens=512):
        n = c.run_for(c.seconds(20), step, sync_every=1)
    c.log(f"train: {n} steps")


def _gemm_phase(c, name, body, flop, **marks):
    import torch

    body()
    torch.cuda.synchronize()
    with c.gm.phase(name, **marks):
        t0 = time.perf_counter()
        n = c.run_for(c.seconds(20), body, sync_every=4)
        dt = time.perf_counter() - t0
    c.log(f"{name}: {n} matmuls, {n * flop / dt / 1e12:.0f} TFLOP/s")
    time.sleep(2)


def gemm_fp8(c):
    """fp8 (e4m3) GEMMs through torch._scaled_mm."""
    import torch

    n = 8192
    a = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device="cuda").to(torch.float8_e4m3fn).t()  # column-major, as cuBLASLt wants
    one = torch.tensor(1.0, device="cuda")
    _gemm_phase(c, "fp8", lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                   out_dtype=torch.bfloat16),
                2 * n**3, n=n, dtype="float8_e4m3fn")


def gemm_int8(c):
    """int8 GEMMs through torch._int_mm (integer tensor cores)."""
    import torch

    n = 8192
    a = torch.randint(-64, 64, (n, n), device="cuda", dtype=torch.int8)
    b = torch.randint(-64, 64, (n, n), device="cuda", dtype=torch.int8)
    try:
        torch._int_mm(a, b)
    except RuntimeError:
        b = b.t().contiguous().t()  # some versions want the second operand column-major
    _gemm_phase(c, "int8", lambda: torch._int_mm(a, b), 2 * n**3, n=n, dtype="int8")


def gemm_precisions(c):
    """The same GEMM in fp32 (FFMA), TF32 and bf16: which pipes each moves."""
    import torch

    n = 8192
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    torch.set_float32_matmul_precision("highest")
    _gemm_phase(c, "fp32", lambda: a @ b, 2 * n**3, n=n, dtype="fp32")
    torch.set_float32_matmul_precision("high")
    _gemm_phase(c, "tf32", lambda: a @ b, 2 * n**3, n=n, dtype="tf32")
    a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
    _gemm_phase(c, "bf16", lambda: a16 @ b16, 2 * n**3, n=n, dtype="bf16")


COPY_BYTES = 512 * 2**20


def _copy_phase(c, name, body, sync_every):
    import torch

    body()
    torch.cuda.synchronize()
    with c.gm.phase(name, mib=COPY_BYTES >> 20):
        t0 = time.perf_counter()
        k = c.run_for(c.seconds(20), body, sync_every=sync_every)
        rate = k * COPY_BYTES / (time.perf_counter() - t0) / 1e9
    c.log(f"{name}: {k} copies, {rate:.1f} GB/s")
    time.sleep(2)


def copies_pinned(c):
    """512 MiB copies each way between pinned host memory and the GPU."""
    import torch

    n = COPY_BYTES // 4
    host = torch.empty(n).pin_memory()
    dev = torch.rand(n, device="cuda")
    _copy_phase(c, "pinned_h2d", lambda: dev.copy_(host, non_blocking=True), 4)
    _copy_phase(c, "pinned_d2h", lambda: host.copy_(dev, non_blocking=True), 4)


def copies_pageable(c):
    """512 MiB host-to-device copies from pageable memory."""
    import torch

    n = COPY_BYTES // 4
    host = torch.rand(n)
    dev = torch.empty(n, device="cuda")
    _copy_phase(c, "pageable_h2d", lambda: dev.copy_(host), 1)


def fused_half(c):
    """One fused fp16 element-wise kernel at the DRAM limit."""
    import cupy

    axpy = cupy.ElementwiseKernel("float16 x, float16 y", "float16 z",
                                  "z = (float16)(2.0f * (float)x + (float)y)", "fused_axpy_half")
    n = 1 << 30
    x = cupy.random.random(n, dtype=cupy.float32).astype(cupy.float16)
    y = cupy.random.random(n, dtype=cupy.float32).astype(cupy.float16)
    z = cupy.empty_like(x)
    axpy(x, y, z)
    cupy.cuda.Device().synchronize()
    with c.gm.phase("fused_bf16", elements=n, dtype="fp16", bytes_per_launch=6 * n):
        end = time.perf_counter() + c.seconds(20)
        launches = 0
        t0 = time.perf_counter()
        while time.perf_counter() < end:
            for _ in range(10):
                axpy(x, y, z)
            launches += 10
            cupy.cuda.Device().synchronize()
    c.log(f"fused_bf16: {launches * 6 * n / (time.perf_counter() - t0) / 1e9:.0f} GB/s")


def unfused_fp32(c):
    """Five eager fp32 element-wise kernels where one would do."""
    import torch

    x = torch.randn(1 << 30, device="cuda")

    def chain():
        return torch.relu(x * 2 + 1) * 3 - x

    chain()
    torch.cuda.synchronize()
    with c.gm.phase("chain_fp32", elements=1 << 30, kernels=5):
        n = c.run_for(c.seconds(20), chain, sync_every=2)
    c.log(f"chain_fp32: {n} chains")


def leak_fast(c):
    """Keeps 1 GiB more every 125 ms (8 GiB/s) until out of memory."""
    import torch

    kept = []
    torch.zeros(1, device="cuda")
    c.log("leak_fast: keeping 1 GiB per 125 ms until out of memory")
    with c.gm.phase("leak", gib_per_s=8):
        while True:
            kept.append(torch.empty(2**30, dtype=torch.uint8, device="cuda").fill_(1))
            torch.cuda.synchronize()
            time.sleep(0.125)
            if c.SCALE < 1 and len(kept) > 8:
                kept.clear()


def item_every_op(c):
    """A small bf16 layer whose every output is read back with .item()."""
    import torch

    lin = torch.nn.Linear(2048, 2048).cuda().to(torch.bfloat16)
    x = torch.randn(64, 2048, device="cuda", dtype=torch.bfloat16)
    seen = [0.0]

    def op():
        with torch.inference_mode():
            y = lin(x)
            seen[0] += y.float().mean().item()  # a statistic read after every op
            y = torch.relu(y)
            seen[0] += y.float().sum().item()

    op()
    with c.gm.phase("item_sync", batch=64, width=2048):
        n = c.run_for(c.seconds(20), op, sync_every=1)
    c.log(f"item_sync: {n} ops, {seen[0]:.1f}")


def loader_wait(c):
    """A small CNN waiting on six DataLoader workers with a costly transform."""
    import torch

    model = c.small_cnn()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(
        c.SlowDataset(1_000_000, 15.0), batch_size=32, num_workers=6, pin_memory=True,
        persistent_workers=True, shuffle=True)
    step = c.loader_step(model, opt, loader)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with c.gm.phase("workers", batch=32, workers=6, cpu_ms_per_sample=15):
        end = time.perf_counter() + c.seconds(20)
        n = 0
        while time.perf_counter() < end:
            step().item()
            n += 1
    c.log(f"loader_wait: {n} steps")


WORKLOADS = {
    "llama_gen_b1": llama_gen_b1,
    "llama_gen_b64": llama_gen_b64,
    "gpt2_finetune": gpt2_finetune,
    "llama_compile": llama_compile,
    "gemm_fp8": gemm_fp8,
    "gemm_int8": gemm_int8,
    "gemm_precisions": gemm_precisions,
    "copies_pinned": copies_pinned,
    "copies_pageable": copies_pageable,
    "fused_half": fused_half,
    "unfused_fp32": unfused_fp32,
    "leak_fast": leak_fast,
    "item_every_op": item_every_op,
    "loader_wait": loader_wait,
}


def fused_add_bf16(c):
    """One vectorised bf16 element-wise kernel (torch.add with alpha) at the DRAM limit."""
    import torch

    n = 1 << 30
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    z = torch.empty_like(x)
    torch.add(x, y, alpha=2.0, out=z)
    torch.cuda.synchronize()
    with c.gm.phase("add_bf16", elements=n, dtype="bf16", bytes_per_launch=6 * n):
        t0 = time.perf_counter()
        k = c.run_for(c.seconds(20), lambda: torch.add(x, y, alpha=2.0, out=z), sync_every=10)
        dt = time.perf_counter() - t0
    c.log(f"add_bf16: {k * 6 * n / dt / 1e9:.0f} GB/s")


WORKLOADS["fused_add_bf16"] = fused_add_bf16
