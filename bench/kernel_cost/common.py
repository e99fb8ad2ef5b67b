# SPDX-License-Identifier: Apache-2.0
"""What the kernel-cost harnesses share: finding the job's libcupti, opening
cupti_toggle.cpp's library, and the batch-1 MLP replayed as a CUDA graph that
torch_slots.py, graph_moves.py, concurrent_moves.py and bench/kernels/graph_job.py
run."""
import ctypes
import glob
import os
import sys

import torch


def loaded_cupti():
    """The libcupti this process has mapped, else the one torch ships, else none."""
    with open("/proc/self/maps") as f:
        for line in f:
            if "libcupti.so" in line:
                return line.split()[-1]
    for base in sys.path:
        hits = sorted(glob.glob(os.path.join(base, "nvidia", "**", "libcupti.so*"), recursive=True))
        if hits:
            return hits[0]
    return ""


def open_toggle(path):
    """libcupti_toggle.so with its C signatures, on the libcupti the job uses (one
    CUPTI in the process)."""
    os.environ.setdefault("GPULENS_CUPTI", loaded_cupti())
    ct = ctypes.CDLL(path)
    ct.ct_goto.restype = ctypes.c_double
    ct.ct_goto.argtypes = [ctypes.c_int]
    ct.ct_error.restype = ctypes.c_char_p
    ct.ct_records.restype = ctypes.c_long
    ct.ct_job_finalizes.restype = ctypes.c_long
    return ct


def graph_mlp(dev):
    """An 8-layer bf16 MLP of width 1024 at batch 1, captured in a CUDA graph after
    three warm-up passes on a side stream: (model, input, graph, graph's output)."""
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
    return model, inp, g, out


def job_loops(g, dev, stop, errors, counts):
    """The two job threads of concurrent_moves.py and bench/kernels/graph_job.py:
    replays of graph `g` synchronised one by one, and eager ops with a host copy.
    Each counts its rounds in `counts`, and on a failure says it in `errors` and
    sets `stop`."""
    def graph_loop():
        try:
            while not stop.is_set():
                g.replay()
                torch.cuda.synchronize()
                counts["graph"] += 1
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            errors.append(f"graph: {type(e).__name__}: {str(e).splitlines()[0]}")
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
            errors.append(f"eager: {type(e).__name__}: {str(e).splitlines()[0]}")
            stop.set()

    return graph_loop, eager_loop
