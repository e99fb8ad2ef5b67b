#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a gpu-trace recording with many overlapping phases (NAME:start/NAME:end
marks), for timing `gpulens report` and `gpulens diagnose` on it (issue 31, item 6).

  bench/many_phases.py --phases 40000 > /tmp/p40k.trace.jsonl
  /usr/bin/time -v gpulens report /tmp/p40k.trace.jsonl > /dev/null

Phase i starts at i * --spacing seconds and lasts --length seconds, so about
length / spacing phases are open at once; one GPU is sampled every --interval
seconds over the whole span. Deterministic: the same arguments give the same file.
"""
import argparse
import json
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phases", type=int, default=40000)
    ap.add_argument("--spacing", type=float, default=0.01, help="seconds between phase starts")
    ap.add_argument("--length", type=float, default=100.0, help="seconds each phase lasts")
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between samples")
    args = ap.parse_args()
    t0 = 1795000000.0
    out = sys.stdout
    header = {"format": "gpu-trace", "version": 1, "host": "bench", "interval_s": args.interval,
              "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "sm_count": 132,
                           "mem_total_mib": 81559, "power_limit_w": 700.0}]}
    out.write(json.dumps(header) + "\n")
    end = t0 + (args.phases - 1) * args.spacing + args.length
    events = []  # (t, order, line): marks before samples at the same time
    for i in range(args.phases):
        start = t0 + i * args.spacing
        events.append((start, 0, {"t": round(start, 3), "mark": f"p{i % 100}:start"}))
        events.append((start + args.length, 0,
                       {"t": round(start + args.length, 3), "mark": f"p{i % 100}:end"}))
    n = int((end - t0) / args.interval) + 1
    for k in range(n):
        t = t0 + k * args.interval
        busy = 40 + (k * 7) % 60
        events.append((t, 1, {"t": round(t, 3), "gpu": 0, "gpu_util": busy,
                              "sm_active": busy * 0.8, "tensor_active": busy * 0.3,
                              "dram_active": 20 + k % 30, "power_w": 300 + k % 200,
                              "sm_clock_mhz": 1980, "mem_used_mib": 40000}))
    events.sort(key=lambda e: (e[0], e[1]))
    for _, _, line in events:
        out.write(json.dumps(line, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
