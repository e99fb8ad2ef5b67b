#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One row per GPU count from bench/multi_gpu/cost_scaling.sh's folders: gpulens'
CPU per GPU per tick and peak RSS for each configuration, beside nvidia-smi dmon's
CPU per GPU-sample and peak RSS on the same GPUs in the same minute.

    bench/multi_gpu/cost_table.py DIR [DIR ...]   (each holds run_overhead.sh's JSON)
"""
import json
import pathlib
import sys

RUNS = ["gpm-1s", "gpm-noprocs-1s", "gpm-100ms"]


def main(dirs):
    head = f"{'GPUs':>4}"
    for run in RUNS:
        head += f" {run + ' ms':>18} {'MiB':>6}"
    head += f" {'dmon ms':>9} {'MiB':>6} {'dmon/gpulens':>12}"
    print("CPU in ms per GPU per tick (whole process), peak RSS in MiB; dmon/gpulens compares")
    print("dmon with gpm-noprocs-1s (the same metrics, no per-process queries, 1 s)")
    print(head)
    for d in map(pathlib.Path, dirs):
        stats = {r: json.loads((d / f"{r}.json").read_text()) for r in RUNS if (d / f"{r}.json").exists()}
        if not stats:
            print(f"{d.name}: no stats (the run failed)")
            continue
        gpus = next(iter(stats.values()))["gpus"]
        row = f"{gpus:>4}"
        for run in RUNS:
            s = stats.get(run)
            row += (f" {s['per_gpu_tick_ms']['process_total']:>18.3f} {s['peak_rss_mib']:>6.1f}" if s
                    else f" {'-':>18} {'-':>6}")
        dm = d / "dmon.json"
        if dm.exists():
            j = json.loads(dm.read_text())
            per = 1000 * j["cpu_s"] / max(j["samples"], 1)
            ours = stats.get("gpm-noprocs-1s", {}).get("per_gpu_tick_ms", {}).get("process_total")
            ratio = f"{per / ours:.1f}x" if ours else "-"
            row += f" {per:>9.3f} {j['peak_rss_mib']:>6.1f} {ratio:>12}"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
