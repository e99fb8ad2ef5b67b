#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Pinned against pageable host-device copies on one GPU: the figures behind
kPinnedLinkShare and kPinningHelpsBelow (src/diagnosis/fix_premises.hpp,
docs/diagnosis.md "Pinning advice by the link's rate").

Each case copies back to back for a few seconds and prints GB/s (1e9 bytes)
and the share of the PCIe link per direction (from nvidia-smi's current link
generation and width: Gen5 3.938, Gen4 1.969, Gen3 0.985 GB/s per lane).
Run on the GPU machine (torch needed):

    python3 bench/pcie_pinned_pageable.py | tee bench/results/pcie-pinned-pageable-h200.txt
"""
import subprocess
import time

import torch

LANE_GBS = {3: 0.985, 4: 1.969, 5: 3.938, 6: 7.56}


def link_gbs():
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=pcie.link.gen.current,pcie.link.width.current",
         "--format=csv,noheader,nounits", "-i", "0"],
        capture_output=True, text=True, check=False).stdout.strip()
    try:
        gen, width = (int(x) for x in out.split(","))
        return gen, width, LANE_GBS.get(gen, 0) * width
    except ValueError:
        return None, None, 0.0


def rate(copy, nbytes, seconds=4.0, sync_every=8):
    copy()
    torch.cuda.synchronize()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(sync_every):
            copy()
        n += sync_every
        torch.cuda.synchronize()
    return n * nbytes / (time.perf_counter() - t0) / 1e9


def main():
    gen, width, link = link_gbs()
    print(f"{torch.cuda.get_device_name(0)}, PCIe Gen{gen} x{width}: {link:.1f} GB/s per direction")
    for size in (256 << 20, 64 << 10):
        n = size // 4
        dev = torch.empty(n, device="cuda")
        pageable = torch.rand(n)
        pinned = pageable.pin_memory()
        cases = [
            ("h2d pageable", lambda: dev.copy_(pageable)),
            ("h2d pinned", lambda: dev.copy_(pinned, non_blocking=True)),
            ("d2h pageable", lambda: pageable.copy_(dev)),
            ("d2h pinned", lambda: pinned.copy_(dev, non_blocking=True)),
        ]
        for name, copy in cases:
            gbs = rate(copy, size)
            share = f"{gbs / link:.3f} of the link" if link else "link unknown"
            print(f"{size >> 10:>8} KiB {name:<13} {gbs:7.2f} GB/s  {share}")


if __name__ == "__main__":
    main()
