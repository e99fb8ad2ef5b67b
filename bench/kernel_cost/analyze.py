# SPDX-License-Identifier: Apache-2.0
"""Tables from launch_slots / torch_slots lines (JSON, one per slot).

Paired: per bench and thread count, each cycle's slot of a state over the same
cycle's detached slot, minus one; mean and 95 % Student-t interval over cycles.
Across processes (launch_slots with "n" and "f"): each process's mean slot, the
finalised processes' mean over the never-touched ones', with a Welch interval.
Usage: python3 analyze.py RAW.jsonl [RAW2.jsonl ...]
"""
import json
import math
import statistics
import sys
from collections import defaultdict

# Two-sided 95 % Student-t quantiles by degrees of freedom (beyond 30: normal-ish).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
       18: 2.101, 19: 2.093, 20: 2.086, 22: 2.074, 24: 2.064, 26: 2.056, 28: 2.048, 30: 2.042,
       40: 2.021, 60: 2.000, 120: 1.980}


def t95(df):
    if df < 1:
        return float("nan")
    keys = [k for k in sorted(T95) if k <= df]
    return T95[keys[-1]] if df <= 120 else 1.960


def interval(values):
    n = len(values)
    if n < 2:
        return (values[0] if values else float("nan")), float("nan")
    return statistics.mean(values), t95(n - 1) * statistics.stdev(values) / math.sqrt(n)


def main(paths):
    slots = defaultdict(dict)  # (bench, threads, file, cycle) -> state -> us
    procs = defaultdict(list)  # (threads, state) -> [process mean]
    moves = []
    for path in paths:
        per_file = defaultdict(list)
        with open(path) as f:
            for n, line in enumerate(f):
                line = line.strip()
                if not line.startswith("{"):
                    continue
                r = json.loads(line)
                if r["bench"].endswith("_moves"):
                    moves.append(r)
                    continue
                key = (r["bench"], r["threads"], path, r.get("proc", 0), r["cycle"])
                slots[key][r["state"]] = r["us"]
                if r["state"] in "nf":
                    per_file[(r["threads"], r["state"], r.get("proc", 0))].append(r["us"])
        for (threads, state, _), v in per_file.items():
            procs[(threads, state)].append(statistics.mean(v))

    by_bench = defaultdict(lambda: defaultdict(list))
    base = defaultdict(list)
    for (bench, threads, *_), st in slots.items():
        if "d" not in st:
            continue
        base[(bench, threads)].append(st["d"])
        for s, us in st.items():
            if s != "d":
                by_bench[(bench, threads)][s].append(us / st["d"] - 1)
    print(f"{'bench':8} {'thr':>3} {'state':6} {'cost %':>8} {'95% CI':>7} {'n':>4} {'detached us':>12}")
    for (bench, threads), states in sorted(by_bench.items()):
        for s in sorted(states):
            m, h = interval(states[s])
            print(f"{bench:8} {threads:>3} {s:6} {100 * m:+8.2f} {100 * h:7.2f} {len(states[s]):>4} "
                  f"{statistics.median(base[(bench, threads)]):12.3f}")
    for threads in sorted({t for t, _ in procs}):
        n, f = procs.get((threads, "n"), []), procs.get((threads, "f"), [])
        if len(n) < 2 or len(f) < 2:
            continue
        mn, mf = statistics.mean(n), statistics.mean(f)
        se = math.sqrt(statistics.variance(n) / len(n) + statistics.variance(f) / len(f))
        print(f"finalised vs never touched, {threads} thread(s), across processes: {100 * (mf / mn - 1):+.2f} % "
              f"+- {100 * 1.96 * se / mn:.2f} ({len(f)} and {len(n)} processes; {mn:.3f} us never)")
    for m in moves:
        print("moves:", json.dumps(m))


if __name__ == "__main__":
    main(sys.argv[1:])
