#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints the overhead table from the JSON files that run_overhead.sh leaves."""
import json
import pathlib
import sys

import floor  # noqa: E402 - beside this file

out = pathlib.Path(sys.argv[1])
rows = []
for name in [
    "gpm-1s", "gpm-noprocs-1s", "nogpm-1s", "nogpm-noprocs-1s", "gpm-100ms", "nogpm-100ms"
]:
    path = out / f"{name}.json"
    if not path.exists():
        print(f"{name}: no stats (the run failed)")
        continue
    rows.append((name, json.loads(path.read_text())))

print(f"{'run':<16} {'ticks':>5} {'late':>4} {'classic':>8} {'slow':>6} {'gpm':>7} {'procs':>7} {'procfs':>7} "
      f"{'host':>6} {'events':>6} {'sampler':>8} {'write':>6} {'process':>8} {'rss MiB':>8}"
      f"   (ms of CPU per GPU per tick)")
for name, s in rows:
    c = s["per_gpu_tick_ms"]
    # Late: slots the sampler skipped because a tick ran past the next one, plus
    # GPUs that did not answer within the tick's timeout.
    late = s.get("missed_ticks", 0) + s.get("timeouts", 0)
    print(f"{name:<16} {s['ticks']:>5} {late:>4} {c['classic_nvml']:>8.3f} "
          f"{c.get('slow_counters', 0):>6.3f} {c['gpm']:>7.3f} "
          f"{c['processes']:>7.3f} {c['procfs']:>7.3f} {c['host']:>6.3f} "
          f"{c.get('events', 0):>6.3f} {c['sampler_total']:>8.3f} {c.get('write', 0):>6.3f} "
          f"{c['process_total']:>8.3f} {s['peak_rss_mib']:>8.1f}")

dmon_path = out / "dmon.json"
if dmon_path.exists():
    d = json.loads(dmon_path.read_text())
    # dmon prints one line per GPU per second, so CPU per line is CPU per GPU per tick.
    per_gpu_sample_ms = 1000 * d["cpu_s"] / max(d["samples"], 1)
    print(f"\nnvidia-smi dmon -d 1 --gpm-metrics 1,2,3,5,10,20,21,60,61: {d['samples']} GPU-samples, "
          f"{d['cpu_s']:.3f} s CPU = {per_gpu_sample_ms:.3f} ms per GPU per sample, peak RSS "
          f"{d['peak_rss_mib']:.1f} MiB")
    for run, label in [("gpm-noprocs-1s", "all metrics, no per-process queries (like dmon)"),
                       ("gpm-1s", "all metrics + processes")]:
        ours = dict(rows).get(run)
        if not ours:
            continue
        mine = ours["per_gpu_tick_ms"]["process_total"]
        print(f"gpulens record --interval 1 on {ours['gpus']} GPU(s), {label}: {mine:.3f} ms per GPU "
              f"per tick, peak RSS {ours['peak_rss_mib']:.1f} MiB")
        if mine > 0:
            print(f"  ratio: nvidia-smi dmon uses {per_gpu_sample_ms / mine:.1f}x the CPU of gpulens "
                  f"per GPU per sample")

# The floor: what the NVML calls of one tick cost by themselves, timed in a tight loop
# on the same GPU under the same load. gpulens cannot go under it; what it adds on top
# is its own overhead.
costs_path = out / "call-costs.jsonl"
if costs_path.exists():
    calls = floor.call_costs(costs_path)
    print(f"\n{'NVML call (tight loop, GPU 0)':<46} {'cpu us':>9} {'user':>8} {'sys':>8}")
    for name, c in calls.items():
        print(f"{name:<46} {c['cpu_us']:>9.1f} {c.get('user_us', 0):>8.1f} "
              f"{c.get('sys_us', 0):>8.1f}")
    ways = floor.fanout(out / "gpm-fanout.jsonl")
    for way, f in ways.items():
        print(f"GPM pair, fresh 100 ms apart, {way} on {f['gpus']} GPU(s): "
              f"{f['cpu_us_per_gpu'] / 1000:.3f} ms per GPU, {f['wall_us_per_round'] / 1000:.3f} ms a round")
    classic_ms = floor.classic_ms(calls)
    gpm_ms, how = floor.gpm_ms(calls, ways)
    floor_ms = classic_ms + gpm_ms
    print(f"floor per GPU per tick: {floor_ms:.3f} ms with GPM, {classic_ms:.3f} ms without "
          f"(GPM: the pair {how}, the cheapest way measured)")
    for run, under in [("gpm-noprocs-1s", floor_ms), ("nogpm-noprocs-1s", classic_ms)]:
        ours = dict(rows).get(run)
        if ours:
            # The slow counters are held to their own floor (bench/multi_gpu/cost_table.py).
            slow = ours["per_gpu_tick_ms"].get("slow_counters", 0)
            sampler = ours["per_gpu_tick_ms"]["sampler_total"] - slow
            total = ours["per_gpu_tick_ms"]["process_total"] - slow
            print(f"  {run}, less the slow counters' {slow:.3f} ms: sampler {sampler:.3f} ms "
                  f"({sampler - under:+.3f} over the floor), whole process {total:.3f} ms "
                  f"({total - under:+.3f}, {total / under:.2f}x)")

smaps_path = out / "smaps.txt"
if smaps_path.exists():
    print("\nresident memory by mapping, KiB (largest first):")
    for block in smaps_path.read_text().split("== ")[1:]:
        lines = block.splitlines()
        print(f"  {lines[0][:70]}")
        for line in lines[1:9]:
            print(f"    {line}")

# The memory floor: what NVML holds resident in a small client that makes the same
# calls, step by step. No NVML client can have a smaller peak.
steps_path = out / "memory-steps.jsonl"
if steps_path.exists():
    steps = []
    for line in steps_path.read_text().splitlines():
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if "step" in j:
            steps.append(j)
    if steps:
        print("\nresident memory of a minimal NVML client (gpulens_nvml_probe --memory-steps), MiB:")
        for j in steps:
            print(f"  {j['step']:<56} rss {j.get('VmRSS', 0) / 1024:5.1f}  anon "
                  f"{j.get('RssAnon', 0) / 1024:5.1f}  files {j.get('RssFile', 0) / 1024:5.1f}"
                  f"  {'libcuda mapped' if j.get('libcuda_mapped') else ''}")
        start = steps[0].get("VmRSS", 0)
        init = next((j for j in steps if j["step"] == "nvmlInit_v2"), None)
        peak = max(j.get("VmHWM", 0) for j in steps)
        if init:
            print(f"  nvmlInit_v2 alone adds {(init['VmRSS'] - start) / 1024:.1f} MiB; the client "
                  f"peaks at {peak / 1024:.1f} MiB")

# CPU per thread over the whole run (open included), to tell gpulens' threads
# (gpulens, gpulens-gpuN, gpulens-signal) from those the NVIDIA libraries start.
for name, s in rows:
    threads = s.get("threads_cpu_s")
    if not threads or name not in ("gpm-noprocs-1s", "nogpm-noprocs-1s"):
        continue
    busiest = sorted(threads.items(), key=lambda kv: -kv[1])[:6]
    print(f"\nthreads of {name} (CPU s over {s['wall_s']:.0f} s): " +
          ", ".join(f"{t} {cpu:.3f}" for t, cpu in busiest))
