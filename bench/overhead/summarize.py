#!/usr/bin/env python3
"""Prints the overhead table from the JSON files that run_overhead.sh leaves."""
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
rows = []
for name in ["gpm-1s", "gpm-noprocs-1s", "nogpm-1s", "gpm-100ms", "nogpm-100ms"]:
    path = out / f"{name}.json"
    if not path.exists():
        print(f"{name}: no stats (the run failed)")
        continue
    rows.append((name, json.loads(path.read_text())))

print(f"{'run':<12} {'ticks':>5} {'classic':>8} {'gpm':>7} {'procs':>7} {'procfs':>7} "
      f"{'host':>6} {'sampler':>8} {'process':>8} {'rss MiB':>8}   (ms of CPU per GPU per tick)")
for name, s in rows:
    c = s["per_gpu_tick_ms"]
    print(f"{name:<12} {s['ticks']:>5} {c['classic_nvml']:>8.3f} {c['gpm']:>7.3f} "
          f"{c['processes']:>7.3f} {c['procfs']:>7.3f} {c['host']:>6.3f} "
          f"{c['sampler_total']:>8.3f} {c['process_total']:>8.3f} {s['peak_rss_mib']:>8.1f}")

dmon_path = out / "dmon.json"
if dmon_path.exists():
    d = json.loads(dmon_path.read_text())
    per_sample_ms = 1000 * d["cpu_s"] / max(d["samples"], 1)
    print(f"\nnvidia-smi dmon -d 1 --gpm-metrics 1,2,3,5,10,20,21,60,61: {d['samples']} samples, "
          f"{d['cpu_s']:.3f} s CPU = {per_sample_ms:.3f} ms per sample, peak RSS "
          f"{d['peak_rss_mib']:.1f} MiB")
    for run, label in [("gpm-noprocs-1s", "all metrics, no per-process queries (like dmon)"),
                       ("gpm-1s", "all metrics + processes")]:
        ours = dict(rows).get(run)
        if not ours:
            continue
        mine = ours["per_gpu_tick_ms"]["process_total"] * ours["gpus"]
        print(f"gpulens record --interval 1, {label}: {mine:.3f} ms per tick, "
              f"peak RSS {ours['peak_rss_mib']:.1f} MiB")
        if mine > 0:
            print(f"  ratio: nvidia-smi dmon uses {per_sample_ms / mine:.1f}x the CPU of gpulens "
                  f"per sample")
