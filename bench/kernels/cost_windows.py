#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What `gpulens run --kernels` costs the job when it traces in windows (the
default: 2 s every 20 s), measured on the job's own steps.

The machine's speed for launch-bound Python loops differs from process to process
by tens of per cent (bench/results/kernels-windows-attached-h100.txt: 95 %
intervals of +-20 to +-400 points between processes), so a process is compared
with itself. Every process, whatever its configuration, runs the workloads in
turn (workloads.py --cycle, every step timed with its unix start) in two
phases: A, the first --first seconds after it is started, and B, the rest.

  alone     python3 workloads.py ...
  windowed  gpulens run --kernels, windows of --window s every --every s from
            --first s on (GPULENS_KERNELS_SCHEDULE): CUPTI untouched in phase A;
            in phase B attached at the first window and left attached, every
            kind off, between windows

Per workload and configuration:

  between     how much slower phase B's steps away from any window (and from the
              half second after it) are than phase A's, less the same ratio of the
              alone process of the same round (a difference in differences: the
              machine's drift over a process's life cancels): the cost of CUPTI
              attached with every kind off
  in-window   steps inside a window against the second before it opened (same
              process, paired per window): what recording adds
  drain       steps in the half second after a window closed against the same
              second before it (records of the window still completing)

`@default` = between + 0.1 x in-window + 0.025 x drain: the default schedule
(2 s windows every 20 s), derived. Figures are the relative change
of the median (p50) and of the mean step time, mean over rounds (between) or
windows (in-window, drain), with 95 % confidence intervals (Student t).
Positive: the job is slower.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cost import t95  # noqa: E402  (Student t, 95 %, two-sided)
CONFIGS = ["alone", "windowed"]
DEFAULT_WINDOW, DEFAULT_EVERY, DRAIN = 2.0, 20.0, 0.5


def mean_ci(xs):
    if not xs:
        return float("nan"), float("nan"), 0
    if len(xs) == 1:
        return xs[0], float("nan"), 1
    return statistics.mean(xs), t95(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs)), len(xs)


def stat(xs, metric):
    return statistics.median(xs) if metric == "p50" else statistics.mean(xs)


def read_steps(path):
    with open(path) as f:
        return {j["workload"]: j["steps"] for j in map(json.loads, f)}


def read_record(trace_path):
    """Windows (unix seconds) and status of the recording's kernel records."""
    windows, status = [], []
    with open(trace_path) as f:
        for line in f:
            if '"x_kernels"' not in line:
                continue
            r = json.loads(line)
            base = r.get("clock", {}).get("base_unix_ns", 0)
            windows += [((base + a) / 1e9, (base + b) / 1e9) for a, b in r.get("windows", [])]
            status.append(r.get("status", "?"))
    return sorted(windows), ",".join(status)


def summarise(rounds, a, config):
    table = []
    for w in sorted({w for r in rounds for w in r["alone"]["steps"]}):
        for metric in ("p50", "mean"):
            between, inwin, drain = [], [], []
            for r in rounds:
                if config not in r or w not in r[config]["steps"] or w not in r["alone"]["steps"]:
                    continue

                def ratio(run, away_from):
                    split = run["split"]
                    steps = run["steps"][w]
                    early = [d for u, d in steps if u < split - 0.2]
                    late = [d for u, d in steps if u >= split and
                            not any(x - a.margin <= u <= y + DRAIN + a.margin for x, y in away_from)]
                    if len(early) < 5 or len(late) < 5:
                        return None
                    return stat(late, metric) / stat(early, metric)

                mine = ratio(r[config], r[config]["windows"])
                # The alone process leaves out the same stretches of its own clock.
                shift = r["alone"]["split"] - r[config]["split"]
                base = ratio(r["alone"], [(x + shift, y + shift) for x, y in r[config]["windows"]])
                if mine is not None and base is not None:
                    between.append((mine / base - 1) * 100)
                steps = r[config]["steps"][w]
                for x, y in r[config]["windows"]:
                    before = [d for u, d in steps if x - 1 - a.margin <= u < x - a.margin]
                    inside = [d for u, d in steps if x + a.margin <= u <= y - a.margin]
                    after = [d for u, d in steps if y + a.margin < u <= y + DRAIN]
                    if len(before) < 5:
                        continue
                    if len(inside) >= 5:
                        inwin.append((stat(inside, metric) / stat(before, metric) - 1) * 100)
                    if len(after) >= 3:
                        drain.append((stat(after, metric) / stat(before, metric) - 1) * 100)
            b, b_ci, b_n = mean_ci(between)
            i, i_ci, i_n = mean_ci(inwin)
            d, d_ci, d_n = mean_ci(drain)
            derived = (b + DEFAULT_WINDOW / DEFAULT_EVERY * i + DRAIN / DEFAULT_EVERY * d
                       if b_n and i_n and d_n else float("nan"))
            table.append({"config": config, "workload": w, "metric": metric,
                          "between_pct": b, "between_ci": b_ci, "rounds": b_n,
                          "in_window_pct": i, "in_window_ci": i_ci, "windows": i_n,
                          "drain_pct": d, "drain_ci": d_ci, "drains": d_n, "default_pct": derived,
                          "alone_ms": statistics.median(
                              [stat([d for _, d in r["alone"]["steps"][w]], metric) * 1e3 for r in rounds])})
    return table


def format_table(table):
    lines = [f"{'config':9} {'workload':10} {'metric':6} {'between %':>10} {'95% CI':>7} {'rnds':>4} "
             f"{'in-window %':>11} {'95% CI':>7} {'wins':>4} {'drain %':>8} {'95% CI':>7} "
             f"{'@default %':>10} {'alone ms':>9}"]
    for t in table:
        lines.append(f"{t['config']:9} {t['workload']:10} {t['metric']:6} {t['between_pct']:+10.2f} "
                     f"{t['between_ci']:7.2f} {t['rounds']:4d} {t['in_window_pct']:+11.2f} {t['in_window_ci']:7.2f} "
                     f"{t['windows']:4d} {t['drain_pct']:+8.2f} {t['drain_ci']:7.2f} {t['default_pct']:+10.2f} "
                     f"{t['alone_ms']:9.3f}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpulens", default=os.path.join(HERE, "..", "..", ".devbin", "gpulens"))
    p.add_argument("--workloads", default="launch,batch1,train,train_gpt")
    p.add_argument("--seconds", type=float, default=40, help="seconds of steps per process, both phases")
    p.add_argument("--first", type=float, default=28,
                   help="seconds from a process's start to its first window (phase B)")
    p.add_argument("--cycle", type=float, default=2.5, help="seconds per workload in turn")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--window", type=float, default=1.0)
    p.add_argument("--every", type=float, default=3.0)
    p.add_argument("--margin", type=float, default=0.05, help="seconds kept clear of a window's edges")
    p.add_argument("--configs", default=",".join(CONFIGS), help="of: " + ",".join(CONFIGS))
    p.add_argument("--cpus", default="", help="run every process on these CPUs (taskset -c), the same "
                   "for all configurations, so that the process does not move between cores")
    p.add_argument("--out", default=".")
    a = p.parse_args()
    gl = os.path.abspath(a.gpulens)
    tmp = tempfile.mkdtemp(prefix="gpulens-windows-")
    configs = [c for c in CONFIGS if c in a.configs.split(",")]
    measured = [c for c in configs if c != "alone"]
    rounds = []
    for rnd in range(a.rounds):
        r = {}
        for cfg in configs[rnd % len(configs):] + configs[:rnd % len(configs)]:
            steps_path = f"{tmp}/{cfg}-{rnd}.jsonl"
            trace = f"{tmp}/{cfg}-{rnd}.trace.jsonl"
            job = [sys.executable, os.path.join(HERE, "workloads.py"), "--seconds", str(a.seconds),
                   "--cycle", str(a.cycle), "--workloads", a.workloads, "--steps-out", steps_path]
            env = dict(os.environ)
            epoch = time.time_ns()
            if cfg == "alone":
                cmd = job
            else:
                # --kernels-every 0 leaves GPULENS_KERNELS_SCHEDULE to us: windows from
                # --first on, on this process's clock.
                env["GPULENS_KERNELS_SCHEDULE"] = f"{epoch}:{a.first}:{a.window}:{a.every}"
                cmd = [gl, "run", "--kernels", "--kernels-every", "0", "-q", "--trace", trace,
                       "-o", f"{tmp}/{cfg}-{rnd}.txt", "--"] + job
            env["PYTHONFAULTHANDLER"] = "1"  # a crash of the job says where
            if a.cpus:
                cmd = ["taskset", "-c", a.cpus] + cmd
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if cfg != "alone" and os.path.exists(trace):
                # The kernel records (windows, detaches, status) of every run, kept.
                with open(trace) as src, open(os.path.join(a.out, "records.jsonl"), "a") as dst:
                    for line in src:
                        if '"x_kernels"' in line:
                            r_ = json.loads(line)
                            for big in ("kernels", "busy", "streams", "syncs", "nvtx", "copies"):
                                r_.pop(big, None)
                            r_.update({"config": cfg, "round": rnd, "exit": done.returncode})
                            dst.write(json.dumps(r_) + "\n")
            if done.returncode != 0:
                print(f"cost_windows: {cfg} exited {done.returncode}: {done.stderr[-2000:]}", file=sys.stderr)
                continue
            run = {"steps": read_steps(steps_path), "split": epoch / 1e9 + a.first, "windows": [], "status": ""}
            if cfg != "alone":
                run["windows"], run["status"] = read_record(trace)
            r[cfg] = run
        if "alone" not in r:
            continue
        rounds.append(r)
        print(f"cost_windows: round {rnd + 1}/{a.rounds}: " +
              ", ".join(f"{c} {len(r[c]['windows'])} windows, status {r[c]['status']}"
                        for c in measured if c in r), file=sys.stderr, flush=True)
        table = [t for c in measured for t in summarise(rounds, a, c)]
        with open(os.path.join(a.out, "cost-windows-partial.txt"), "w") as f:
            f.write(f"after {rnd + 1} of {a.rounds} rounds\n" + format_table(table) + "\n")
    table = [t for c in measured for t in summarise(rounds, a, c)]
    head = (f"# gpulens run --kernels in windows: cost to the job's steps, each process against itself (phase A: "
            f"before the first window at {a.first:g} s; phase B: windows of {a.window:g} s every {a.every:g} s), "
            f"{len(rounds)} rounds of {a.seconds:g} s, workloads in turn for {a.cycle:g} s each; '@default' = "
            f"between + 0.1 x in-window + 0.025 x drain (2 s every 20 s), derived.")
    text = head + "\n" + format_table(table)
    with open(os.path.join(a.out, "cost-windows.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, "cost-windows.json"), "w") as f:
        json.dump({"args": vars(a), "rounds": len(rounds), "table": table,
                   "windows": [{c: {"windows": len(r[c]["windows"]), "status": r[c]["status"]}
                                for c in measured if c in r} for r in rounds]}, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
