#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Sends an agent kernel summaries as a job's injection library would
(docs/kernels-agent.md): one datagram per trace window on the agent's unix
socket, the agent taking this process's pid from the kernel.

  kernel_sender.py SOCKET WINDOWS [GO_FILE]

Waits (at most 60 s) for the socket and GO_FILE (the caller creates it once
the agent sees this pid on a GPU), sends WINDOWS windows of 2 s, one every
20 s back from now, the first five at once and the rest a second apart (the
agent's rate limit), then exits 0. One kernel name is 250 bytes long (the
protocol allows 256), past
what a block of the dashboard can show, so the page must cut it.
"""
import json
import os
import socket
import sys
import time

KERNELS = [
    ("ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_tn", 40, 610_000_000),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 300, 180_000_000),
    ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 20, 240_000_000),
    ("flash_fwd_kernel_" + "x" * 233, 40, 90_000_000),
]


def summary(seq, end_ns):
    start_ns = end_ns - 2_000_000_000
    top = [{"name": n, "launches": l, "ns": t} for n, l, t in KERNELS]
    busy = sum(t for _, _, t in KERNELS) + 30_000_000
    return {
        "x_kernel_summary": 1, "seq": seq, "start_unix_ns": start_ns, "end_unix_ns": end_ns,
        "window": True, "cupti_dropped": 0, "summaries_dropped": 0,
        "devices": [{
            "device": 0, "busy_ns": busy, "idle_ns": 2_000_000_000 - busy, "top": top,
            "other": {"kernels": 7, "launches": 90, "ns": 30_000_000},
            "collectives": {"count": 20, "ns": 240_000_000},
            "copies": {"count": 12, "ns": 8_000_000, "bytes": 48_000_000},
            "memsets": {"count": 3, "ns": 1_000_000, "bytes": 4096},
        }],
    }


def main():
    path, windows = sys.argv[1], int(sys.argv[2])
    wanted = [path] + sys.argv[3:4]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(p) for p in wanted):
        if time.monotonic() > deadline:
            print(f"kernel_sender: {' or '.join(wanted)} missing after 60 s", file=sys.stderr)
            return 1
        time.sleep(0.1)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    now_ns = time.time_ns()
    for i in range(windows):
        if i >= 5:
            time.sleep(1.1)
        end_ns = now_ns - (windows - 1 - i) * 20_000_000_000
        sock.sendto(json.dumps(summary(i, end_ns)).encode(), path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
