# SPDX-License-Identifier: Apache-2.0
"""Jobs that run out of GPU memory (or look as if they might), for bench/oom/run.sh.

  fast_leak   keeps 4 GiB every 0.5 s (8 GiB/s) after 20 s of steps until a
              request fails: torch.OutOfMemoryError with memory short of the ceiling
  big_request holds 60 % of the device, then asks for all of the rest at once
  sawtooth    allocates 20 GiB of activations and frees them every 1.5 s for 90 s:
              must end cleanly, and memory_growth must not fire
  jax_leak    as fast_leak, in JAX (RESOURCE_EXHAUSTED), where jax is installed
"""
import sys
import time


def torch_steps(seconds):
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    end = time.time() + seconds
    while time.time() < end:
        (a @ a).sum().item()
        time.sleep(0.05)
    return a


def fast_leak():
    import torch

    torch_steps(20)
    kept = []
    while True:  # raises torch.OutOfMemoryError
        kept.append(torch.empty(4 << 30, dtype=torch.uint8, device="cuda").fill_(1))
        torch.cuda.synchronize()
        time.sleep(0.5)


def big_request():
    import torch

    torch_steps(10)
    free, total = torch.cuda.mem_get_info()
    held = torch.empty(int(total * 0.6), dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    time.sleep(5)
    torch.empty(int(total * 0.5), dtype=torch.uint8, device="cuda")  # raises
    del held


def sawtooth():
    import torch

    torch_steps(5)
    end = time.time() + 90
    while time.time() < end:
        acts = [torch.empty(1 << 30, dtype=torch.uint8, device="cuda") for _ in range(20)]
        torch.cuda.synchronize()
        time.sleep(1.0)
        del acts
        torch.cuda.empty_cache()  # give it back, so NVML sees the fall
        time.sleep(0.5)


def jax_leak():
    import jax.numpy as jnp

    kept = []
    while True:
        kept.append(jnp.ones((1 << 30,), dtype=jnp.float32).block_until_ready())
        time.sleep(0.5)


if __name__ == "__main__":
    {"fast_leak": fast_leak, "big_request": big_request, "sawtooth": sawtooth,
     "jax_leak": jax_leak}[sys.argv[1]]()
