#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""hook_run.sh's table: microseconds per launch by way of seeing launches (each
process's median slot; mean over processes with a 95 % interval, and the change
against processes alone with its interval, from the paired rounds), whether the
hook saw every launch, the attribution against torch.profiler, and the graph jobs.

    hook_table.py OUT_DIR
"""
import collections
import glob
import json
import os
import statistics
import sys

import slot_lines

NAMES = {"n": "alone", "c": "CUPTI launch callbacks", "h": "hook, counting",
         "s": "hook, timing a sample"}


def t95(n):
    table = {2: 12.71, 3: 4.30, 4: 3.18, 5: 2.78, 6: 2.57, 7: 2.45, 8: 2.36, 9: 2.31, 10: 2.26}
    return table.get(n, 2.0)


def interval(values):
    if len(values) < 2:
        return float("nan")
    return t95(len(values)) * statistics.stdev(values) / len(values) ** 0.5


def cost_table(out_dir):
    print("| work (processes alternating) | way | us per launch | vs alone (paired by round) | processes |")
    print("|---|---|---|---|---|")
    for label, path in (("empty kernel, 1 thread", "launch-1.jsonl"), ("empty kernel, 4 threads", "launch-4.jsonl"),
                        ("eager add_, PyTorch", "torch-add.jsonl")):
        full = os.path.join(out_dir, path)
        if not os.path.exists(full):
            continue
        processes, others = slot_lines.read(full)
        procs = [(mode, med) for mode, _, med in processes]
        counts = [j for j in others if "launches_made" in j]
        modes = [m for m in "nchs" if any(p[0] == m for p in procs)]
        by_mode = collections.defaultdict(list)
        for m, v in procs:
            by_mode[m].append(v)
        rounds = min(len(v) for v in by_mode.values())
        for m in modes:
            vals = by_mode[m]
            rel = ""
            if m != "n" and by_mode["n"]:
                ratios = [100 * (a / b - 1) for a, b in zip(vals[:rounds], by_mode["n"][:rounds])]
                rel = f"{statistics.mean(ratios):+.1f} % ± {interval(ratios):.1f}"
            print(f"| {label} | {NAMES[m]} | {statistics.mean(vals):.3f} ± {interval(vals):.3f} | {rel} | {len(vals)} |")
        missed = [c for c in counts if c["mode"] in "chs" and c["launches_seen"] != c["launches_made"]]
        seen = [c for c in counts if c["mode"] in "chs"]
        print(f"|  | launches seen = made | {len(seen) - len(missed)} of {len(seen)} processes | | |")
        bad = [c for c in counts if c.get("value_ok") is False]
        if bad:
            print(f"|  | WRONG RESULT in {len(bad)} processes | | | |")


def paired_table(out_dir):
    """Each kind's slot over the same cycle's reference slot (D, the driver called
    directly, for launch_cost; P, the wrapper passing on, for PyTorch), minus one."""
    names = {"D": "driver called directly", "P": "wrapper, passing on", "C": "wrapper, counting",
             "S": "wrapper, timing a sample"}
    print("| work (paired slots, one process) | way | us per launch | vs reference | cycles |")
    print("|---|---|---|---|---|")
    for label, path, ref in (("empty kernel, 1 thread", "paired-1.jsonl", "D"),
                             ("empty kernel, 4 threads", "paired-4.jsonl", "D"),
                             ("eager add_, PyTorch", "paired-torch-eager.jsonl", "P"),
                             ("CUDA-graph batch-1 MLP, per replay", "paired-torch-graph.jsonl", "P")):
        full = os.path.join(out_dir, path)
        if not os.path.exists(full):
            continue
        cycles = collections.defaultdict(dict)
        for line in open(full, encoding="utf-8"):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if "kind" in j:
                cycles[j["cycle"]][j["kind"]] = j["us_per_launch"]
        kinds = [k for k in "DPCS" if any(k in c for c in cycles.values())]
        for k in kinds:
            vals = [c[k] for c in cycles.values() if k in c]
            rel = ""
            if k != ref:
                r = [100 * (c[k] / c[ref] - 1) for c in cycles.values() if k in c and ref in c]
                rel = f"{statistics.mean(r):+.2f} % ± {interval(r):.2f}"
            print(f"| {label} | {names[k]} | {statistics.mean(vals):.3f} | {rel} | {len(vals)} |")
    print()


def attrib_table(out_dir):
    path = os.path.join(out_dir, "attrib.jsonl")
    if not os.path.exists(path):
        return
    for line in open(path, encoding="utf-8"):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        # Lines written before the "mapped" estimator name "all" without a suffix.
        gap = lambda how: j.get("max_top5_gap_points_" + how, j.get("max_top5_gap_points" if how == "all" else ""))
        fmt = lambda v: "-" if v is None else f"{v:.2f}"
        print(f"\nattribution {j['tag']}, 1 launch in {j['sample_mean']} timed, {j['steps']} steps at scale "
              f"{j.get('scale', 1)}: largest top-5 gap in points: all {fmt(gap('all'))}, busy first "
              f"{fmt(gap('busy'))}, mapped {fmt(gap('mapped'))}; launches: trace {j['launches_trace']}, hook "
              f"{j['launches_hook']} ({j['unnamed_launches']} unnamed); trace share the hook did not name "
              f"{j['unmatched_trace_share']:.2f} %; timing skipped {j['skipped']}, in capture {j['captured']}")
        print("| kernel | trace % | hook % all / busy / mapped | launches trace / hook | timed (busy) "
              "| trace mean us | hook mean us all / busy / mapped |")
        print("|---|---|---|---|---|---|---|")
        for r in j["rows"]:
            share = lambda how: r.get("hook_share_" + how, r.get("hook_share") if how == "all" else None)
            old = {"all": "hook_mean_us", "busy": "hook_busy_mean_us"}
            mean = lambda how: r.get("hook_mean_us_" + how, r.get(old.get(how, "")))
            print(f"| {r['kernel'][:60]} | {r['trace_share']:.2f} | {fmt(share('all'))} / {fmt(share('busy'))} / "
                  f"{fmt(share('mapped'))} | {r['trace_launches']} / {r['hook_launches']} | {r['hook_samples']} "
                  f"({r.get('hook_busy_samples', 0)}) | {r['trace_mean_us']:.1f} | {fmt(mean('all'))} / "
                  f"{fmt(mean('busy'))} / {fmt(mean('mapped'))} |")


def graph_table(out_dir):
    path = os.path.join(out_dir, "graph.jsonl")
    if not os.path.exists(path):
        return
    runs = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
    ok = sum(1 for r in runs if r["exit"] == 0)
    print(f"\ngraph jobs under the hook (replays + eager on two threads, output checked): {ok} of {len(runs)} exit 0")
    for t in sorted(glob.glob(os.path.join(out_dir, "graph-*-tally.json"))):
        j = json.load(open(t))
        n = sum(k["launches"] for k in j["kernels"])
        g = sum(k["launches"] for k in j["kernels"] if k["graph"])
        print(f"  {os.path.basename(t)}: {n} launches seen ({g} graph replays), in capture {j['captured']}, "
              f"timing skipped {j['skipped']}")


def main(out_dir):
    paired_table(out_dir)
    cost_table(out_dir)
    attrib_table(out_dir)
    graph_table(out_dir)


if __name__ == "__main__":
    main(sys.argv[1])
