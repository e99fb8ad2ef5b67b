# SPDX-License-Identifier: Apache-2.0
"""What libgpulens_launches.so adds to a CUDA-graph-replayed batch-1 server (issue 51),
in paired slots in one process: a batch-1 MLP captured once, then each request one
replay and a wait for its result. Each cycle runs, in a random order, a slot of D
(the driver's cuGraphLaunch called directly: libcuda's own symbol) and one of C (the
cuGraphLaunch that the process resolves, which is the library's when it is first in
LD_PRELOAD: it counts the replay and passes it on). Both are called the same way
(ctypes), so the difference between them is the library's.

  LD_PRELOAD=libgpulens_launches.so GPULENS_LAUNCHES_DIR=DIR \\
      python3 graph_paired.py CYCLES SLOT_MS > graph.jsonl

One JSON line per slot ({"kind", "cycle", "us_per_replay"}), then a last line with the
replays made through each kind: the library's record must hold C's and torch's one
as its graph launches."""
import ctypes
import json
import random
import sys
import time

import torch


def main(cycles, slot_ms):
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda().eval()
    x = torch.randn(1, 1024, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.no_grad():
        with torch.cuda.stream(side):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = model(x)
    graph.replay()  # capture computes nothing: the first replay gives the answer to hold
    torch.cuda.synchronize()
    expected = y.clone()
    graph_exec = ctypes.c_void_p(graph.raw_cuda_graph_exec())
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)

    driver = ctypes.CDLL("libcuda.so.1")
    # The library stands in front of dlsym too (it hands its wrapper to anyone asking
    # libcuda by name, as Triton does): glibc's own dlsym, found by version, asks past it.
    libc = ctypes.CDLL(None)
    libc.dlvsym.restype = ctypes.c_void_p
    libc.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    glibc_dlsym = None
    for version in (b"GLIBC_2.34", b"GLIBC_2.2.5"):
        glibc_dlsym = libc.dlvsym(None, b"dlsym", version)
        if glibc_dlsym:
            break
    if not glibc_dlsym:
        sys.exit("graph_paired.py: glibc's dlsym not found")
    glibc_dlsym = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(glibc_dlsym)
    launch_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
    direct = launch_type(glibc_dlsym(driver._handle, b"cuGraphLaunch"))  # libcuda's own
    # The process's own (RTLD_DEFAULT): the first in LD_PRELOAD's.
    resolved = launch_type(ctypes.cast(libc.cuGraphLaunch, ctypes.c_void_p).value)
    sync = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(glibc_dlsym(driver._handle, b"cuStreamSynchronize"))
    addr = lambda f: ctypes.cast(f, ctypes.c_void_p).value
    if not addr(direct) or not addr(sync):
        sys.exit("graph_paired.py: libcuda's cuGraphLaunch or cuStreamSynchronize not found")
    if addr(direct) == addr(resolved):
        sys.exit("graph_paired.py: cuGraphLaunch resolves to the driver's: is the library first in LD_PRELOAD?")

    fns = {"D": direct, "C": resolved}
    # The first replay went through torch (cudaGraphLaunch, the library's wrapper too).
    made = {"D": 0, "C": 0, "torch": 1}
    rng = random.Random(12345)

    def slot(kind):
        fn = fns[kind]
        n = 0
        t0 = time.perf_counter()
        end = t0 + slot_ms / 1000
        while True:
            if fn(graph_exec, stream) != 0 or sync(stream) != 0:
                sys.exit(f"graph_paired.py: a replay through {kind} failed")
            n += 1
            now = time.perf_counter()
            if now >= end:
                break
        made[kind] += n
        return (now - t0) * 1e6 / n

    for cycle in range(cycles + 1):  # the first cycle warms up, unreported
        order = ["D", "C"]
        rng.shuffle(order)
        for kind in order:
            us = slot(kind)
            if cycle > 0:
                print(json.dumps({"kind": kind, "cycle": cycle, "us_per_replay": round(us, 4)}))
    same = bool(torch.equal(y, expected))
    print(json.dumps({"replays": made, "output_unchanged": same}))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
