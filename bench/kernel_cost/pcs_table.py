#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Table of pcs_run.sh's JSON lines: microseconds per launch by mode and thread
count (each process's median slot; the mean over processes with a 95 % interval of
the mean, and the change against mode n), then each attribution run's samples
against the kernels' shares of time and of SM-time.

    pcs_table.py FILE.jsonl [...]
"""
import collections
import statistics
import sys

import slot_lines


def interval(values):
    if len(values) < 2:
        return float("nan")
    return 1.96 * statistics.stdev(values) / len(values) ** 0.5


def main(paths):
    per_process = collections.defaultdict(list)  # (threads, mode) -> [median of a process]
    attributions = []
    for path in paths:
        processes, others = slot_lines.read(path)
        for mode, threads, med in processes:
            per_process[(threads, mode)].append(med)
        for j in others:
            if "kernels" in j:
                attributions.append(j)
            elif "error" in j:
                print("error:", j["error"])
    names = {"n": "no CUPTI", "p": "PC sampling on", "s": "enabled, stopped",
             "d": "after disable"}
    print(f"{'threads':>7} {'mode':<18} {'procs':>5} {'us/launch':>10} {'+-95%':>7} {'vs none':>8}")
    for threads in sorted({t for t, _ in per_process}):
        base = per_process.get((threads, "n"))
        base_mean = statistics.mean(base) if base else None
        for mode in "npsd":
            v = per_process.get((threads, mode))
            if not v:
                continue
            m = statistics.mean(v)
            vs = f"{100 * (m / base_mean - 1):+7.1f}%" if base_mean else "-"
            print(f"{threads:>7} {names[mode]:<18} {len(v):>5} {m:>10.3f} {interval(v):>7.3f} {vs:>8}")
    shown = set()
    errors = collections.defaultdict(lambda: {"time": [], "smtime": []})
    for a in attributions:
        key = (a["mode"], a["period"])
        for k in a["kernels"]:
            errors[key]["time"].append(abs(k["sample_share"] - k["time_share"]))
            errors[key]["smtime"].append(abs(k["sample_share"] - k["smtime_share"]))
        if key in shown:
            continue
        shown.add(key)
        print(f"\nattribution, mode {a['mode']}, period 2^{a['period']} cycles: {a['total_samples']} samples, "
              f"{a['dropped']} dropped, {a['non_user']} in non-user kernels, buffer full {a['buffer_full']}x, "
              f"{a['other_functions']} functions sampled")
        print(f"  {'kernel':<16} {'ms':>8} {'time %':>7} {'SM-time %':>9} {'samples':>9} {'sample %':>8}")
        for k in a["kernels"]:
            print(f"  {k['name']:<16} {k['ms']:>8.1f} {100 * k['time_share']:>7.1f} "
                  f"{100 * k['smtime_share']:>9.1f} {k['samples']:>9} {100 * k['sample_share']:>8.1f}")
    for (mode, period), e in sorted(errors.items()):
        runs = len(e["time"]) // 4
        print(f"mode {mode}, 2^{period}: over {runs} runs, largest |sample share - time share| "
              f"{100 * max(e['time']):.1f} points, - SM-time share {100 * max(e['smtime']):.1f} points")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
