#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What gpulens costs the job it watches, measured side by side in one run.

Two kinds of slots, alternating, over several rounds:

  in-process slots  one Python process runs the three workloads (workloads.py)
                    in slots of --slot seconds; between slots a monitor is started
                    or stopped: none, `gpulens record` at 1 s and at 100 ms (the
                    sampler `gpulens run` runs beside its job), `nvidia-smi dmon -d 1`
                    with GPM metrics. The order of the configurations is shuffled in
                    each round.
  process slots     `--kernels` must be in a process from its start, so there the
                    slot is a whole process: `python3 workloads.py` alone, then under
                    `gpulens run --kernels` (counters at the default 1 s too), in
                    ABBA order.

Each configuration is compared with the baseline of its own round; the table
gives the mean cost over rounds and a 95 % confidence interval (Student t). Cost
is positive when the job is slower: lower TFLOP/s, longer latency or step time.
"""
import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
       12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}


def t95(df):
    if df <= 0:
        return float("nan")
    keys = sorted(k for k in T95 if k <= df)
    return T95[keys[-1]] if keys else T95[1]


def cost_pct(metric, base, value):
    if metric == "tflops":
        return (base - value) / base * 100
    return (value - base) / base * 100


def summarize(rows, metric_of):
    """rows: (round, config, workload, result dict). Cost of each config vs the
    baseline ('none') of the same round."""
    base = {(r, w): res for r, c, w, res in rows if c == "none"}
    out = {}
    values = {}
    for r, c, w, res in rows:
        for metric in metric_of[w]:
            values.setdefault((w, metric, c), []).append(res[metric])
        if c == "none" or (r, w) not in base:
            continue
        for metric in metric_of[w]:
            d = cost_pct(metric, base[(r, w)][metric], res[metric])
            out.setdefault((w, metric, c), []).append(d)
    table = []
    for (w, metric, c), ds in sorted(out.items()):
        mean = statistics.mean(ds)
        half = t95(len(ds) - 1) * statistics.stdev(ds) / math.sqrt(len(ds)) if len(ds) > 1 else float("nan")
        table.append({"workload": w, "metric": metric, "config": c, "rounds": len(ds),
                      "cost_pct": mean, "ci95_pct": half, "min_pct": min(ds), "max_pct": max(ds),
                      "median_value": statistics.median(values[(w, metric, c)]),
                      "median_base": statistics.median(values.get((w, metric, "none"), [float("nan")]))})
    return table


def in_process(args, gl):
    sys.path.insert(0, HERE)
    import workloads
    ws = workloads.make(args.workloads.split(","))
    tmp = tempfile.mkdtemp(prefix="gpulens-cost-")
    monitors = {
        "none": None,
        "record-1s": [gl, "record", "-q", "-o", f"{tmp}/r1.jsonl", "--interval", "1"],
        "record-100ms": [gl, "record", "-q", "-o", f"{tmp}/r01.jsonl", "--interval", "0.1"],
        "dmon-1s": ["nvidia-smi", "dmon", "-d", "1", "--gpm-metrics", "1,2,3,5,10,20,21,60,61"],
    }
    rng = random.Random(12)
    rows = []
    for rnd in range(args.rounds):
        order = list(monitors)
        rng.shuffle(order)
        for cfg in order:
            proc = None
            if monitors[cfg]:
                cmd = monitors[cfg]
                if args.monitor_cpus:  # off the job's pinned cores, as a monitor would be
                    cmd = ["taskset", "-c", args.monitor_cpus] + cmd
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(args.settle)  # its start-up (NVML init) is not the steady cost
            for w in ws:
                res = w.slot(args.slot)
                rows.append((rnd, cfg, w.name, res))
            if proc:
                proc.terminate()
                proc.wait()
        print(f"cost: in-process round {rnd + 1}/{args.rounds} done", file=sys.stderr, flush=True)
        partial = summarize(rows, {"gemm": ["tflops"], "batch1": ["p50_ms", "p99_ms"], "train": ["step_ms"],
                                   "launch": ["us_per_launch"]})
        with open(os.path.join(args.out, "cost-in-process-partial.txt"), "w") as f:
            f.write(f"after {rnd + 1} of {args.rounds} rounds\n" + format_table(partial) + "\n")
    metric_of = {"gemm": ["tflops"], "batch1": ["p50_ms", "p99_ms"], "train": ["step_ms"]}
    return rows, summarize(rows, metric_of)


def process_slots(args, gl):
    tmp = tempfile.mkdtemp(prefix="gpulens-cost-")
    job = [sys.executable, os.path.join(HERE, "workloads.py"), "--seconds", str(args.process_slot),
           "--workloads", args.process_workloads]
    run_k = [gl, "run", "--kernels", "-q", "--trace", f"{tmp}/k.jsonl", "--"]
    configs = {"none": (job, {}),
               "run-kernels": (run_k + job, {}),
               # Only the kernel activity: what the other kinds add on top.
               "kernels-only": (run_k + job, {"GPULENS_KERNELS_KINDS": "kernel"}),
               # The peer: torch.profiler recording CUDA activity through CUPTI too.
               "torch-profiler": (job + ["--profiler"], {}),
               # gpulens run's sampler alone (1 s), without --kernels.
               "run-1s": ([gl, "run", "-q", "--trace", f"{tmp}/r.jsonl", "--"] + job, {})}
    names = [c for c in configs if c in args.process_configs.split(",")]
    rows = []
    for rnd in range(args.process_rounds):
        # Every configuration once per round, in a rotated order (each one first
        # in turn), so that drift over the run falls on all of them alike.
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        for cfg in order:
            cmd, env = configs[cfg]
            out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env})
            for line in out.stdout.splitlines():
                if line.startswith("RESULT "):
                    res = json.loads(line[7:])
                    rows.append((rnd, cfg, res.pop("workload"), res))
            if out.returncode != 0:
                print(f"cost: {cfg} exited {out.returncode}: {out.stderr[-2000:]}", file=sys.stderr)
        print(f"cost: process round {rnd + 1}/{args.process_rounds} done", file=sys.stderr, flush=True)
        # A partial table after every round: a run cut off by a time limit keeps what it measured.
        partial = summarize(rows, {"gemm": ["tflops"], "batch1": ["p50_ms", "p99_ms"], "train": ["step_ms"],
                                   "launch": ["us_per_launch"]})
        with open(os.path.join(args.out, "cost-process-partial.txt"), "w") as f:
            f.write(f"after {rnd + 1} of {args.process_rounds} rounds\n" + format_table(partial) + "\n")
    metric_of = {"gemm": ["tflops"], "batch1": ["p50_ms", "p99_ms"], "train": ["step_ms"],
                 "launch": ["us_per_launch"]}
    return rows, summarize(rows, metric_of)


def format_table(table):
    lines = [f"{'workload':8} {'metric':13} {'config':14} {'rounds':>6} {'cost %':>8} {'95% CI':>8} "
             f"{'min..max %':>16} {'median':>9} {'alone':>9}"]
    for t in table:
        lines.append(f"{t['workload']:8} {t['metric']:13} {t['config']:14} {t['rounds']:6d} "
                     f"{t['cost_pct']:+8.2f} {t['ci95_pct']:8.2f} {t['min_pct']:+7.2f}..{t['max_pct']:+7.2f} "
                     f"{t['median_value']:9.3f} {t['median_base']:9.3f}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpulens", default=os.path.join(HERE, "..", "..", ".devbin", "gpulens"))
    p.add_argument("--workloads", default="gemm,batch1,train")
    p.add_argument("--slot", type=float, default=1.0, help="seconds per workload per slot")
    p.add_argument("--settle", type=float, default=0.4, help="seconds after a monitor starts")
    p.add_argument("--rounds", type=int, default=5, help="rounds of in-process slots")
    p.add_argument("--process-rounds", type=int, default=4, help="rounds of process slots (--kernels)")
    p.add_argument("--process-workloads", default="launch,batch1,train",
                   help="workloads of the process slots")
    p.add_argument("--process-slot", type=float, default=3.0, help="seconds per workload per process slot")
    p.add_argument("--process-configs", default="none,run-kernels,kernels-only,torch-profiler",
                   help="process configurations: none,run-kernels,kernels-only,torch-profiler,run-1s")
    p.add_argument("--skip", default="", help="in-process or process")
    p.add_argument("--monitor-cpus", default="",
                   help="run the monitors on these CPUs (taskset -c), e.g. when the job itself is "
                   "pinned with taskset")
    p.add_argument("--out", default=".")
    a = p.parse_args()
    gl = os.path.abspath(a.gpulens)
    result = {"slot_s": a.slot, "rounds": a.rounds, "process_rounds": a.process_rounds}
    text = []
    if "in-process" not in a.skip:
        rows, table = in_process(a, gl)
        result["in_process"] = {"rows": rows, "table": table}
        text += ["in-process slots (monitor started/stopped between slots of one job)", format_table(table)]
    if "process" not in a.skip.replace("in-process", ""):
        rows, table = process_slots(a, gl)
        result["process"] = {"rows": rows, "table": table}
        text += ["", "process slots (python3 workloads.py alone, under gpulens run --kernels, with only the kernel "
                 "activity, under torch.profiler with CUDA activities)",
                 format_table(table)]
    with open(os.path.join(a.out, "cost.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(a.out, "cost.txt"), "w") as f:
        f.write("\n".join(text) + "\n")
    print("\n".join(text))


if __name__ == "__main__":
    main()
