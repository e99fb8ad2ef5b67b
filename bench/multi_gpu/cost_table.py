#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One row per GPU count from bench/multi_gpu/cost_scaling.sh's folders: gpulens'
CPU per GPU per tick and peak RSS for each configuration, beside nvidia-smi dmon's
CPU per GPU-sample and peak RSS on the same GPUs in the same minute; then gpulens
against the floor measured in the same folder (bench/overhead/floor.py: the tick's
NVML calls alone, the GPM pair the cheaper of in turn and at once; the slow
counters apart, against their reads' own cost), and the ticks late at 100 ms
(skipped slots plus GPUs without an answer in time).

    bench/multi_gpu/cost_table.py DIR [DIR ...]   (each holds run_overhead.sh's JSON)
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "overhead"))
import floor  # noqa: E402

RUNS = ["gpm-1s", "gpm-noprocs-1s", "gpm-100ms"]


def main(dirs):
    head = f"{'GPUs':>4}"
    for run in RUNS:
        head += f" {run + ' ms':>18} {'MiB':>6}"
    head += f" {'dmon ms':>9} {'MiB':>6} {'dmon/gpulens':>12}"
    print("CPU in ms per GPU per tick (whole process), peak RSS in MiB; dmon/gpulens compares")
    print("dmon with gpm-noprocs-1s (the same metrics, no per-process queries, 1 s)")
    print(head)
    floors = []
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
        floors.append((gpus, d, stats))
    print("\ngpulens (gpm-noprocs-1s, whole process) against the floor, ms of CPU per GPU per tick;")
    print("the slow counters (energy, ECC, PCIe replays, NVLink errors: read at the start, then every")
    print("10-300 s) apart, against what their reads cost alone in a run this long")
    print(f"{'GPUs':>4} {'gpulens':>8} {'slow':>6} {'per-tick':>8} {'in turn':>8} {'at once':>8} {'floor':>7} "
          f"{'ratio':>6} {'slow floor':>10} {'ratio':>6} {'late@100ms':>10}")
    for gpus, d, stats in floors:
        calls = floor.call_costs(d / "call-costs.jsonl")
        ways = floor.fanout(d / "gpm-fanout.jsonl")
        if not calls:
            print(f"{gpus:>4} no call costs in {d}")
            continue
        classic = floor.classic_ms(calls)
        gpm, _ = floor.gpm_ms(calls, ways)
        turn = ways.get("serial", ways.get("alone"))
        once = ways.get("parallel", ways.get("alone"))
        run = stats.get("gpm-noprocs-1s", {})
        tick = run.get("per_gpu_tick_ms", {})
        ours = tick.get("process_total", 0)
        slow = tick.get("slow_counters", 0)
        slow_floor = floor.slow_ms(calls, run.get("wall_s", 0), run.get("ticks", 0))
        fast = stats.get("gpm-100ms", {})
        late = fast.get("missed_ticks", 0) + fast.get("timeouts", 0) if fast else "-"
        cell = lambda f: f"{classic + f['cpu_us_per_gpu'] / 1000:8.3f}" if f else f"{'-':>8}"  # noqa: E731
        ratio = lambda a, b: f"{a / b:>5.2f}x" if a and b else f"{'-':>6}"  # noqa: E731
        print(f"{gpus:>4} {ours:>8.3f} {slow:>6.3f} {ours - slow:>8.3f} {cell(turn)} {cell(once)} "
              f"{classic + gpm:>7.3f} {ratio(ours - slow, classic + gpm)} {slow_floor:>10.3f} "
              f"{ratio(slow, slow_floor)} {late!s:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
