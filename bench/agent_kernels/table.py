#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The table of bench/agent_kernels/device_run.sh: what the agent stored per job,
each job's steps around the agent's SIGKILL, and the sending's cost.

  table.py WORK_DIR
"""
import json
import os
import statistics
import sys


def steps(path):
    with open(path) as f:
        return json.loads(f.readline())["steps"]


def median_ms(st):
    return 1e3 * statistics.median(s for _, s in st) if st else float("nan")


def main():
    w = sys.argv[1]
    tl = {}
    pids = {}
    exits = {}
    for line in open(os.path.join(w, "timeline.txt")):
        p = line.split()
        if p[0] in ("t0", "kill", "restart"):
            tl[p[0]] = float(p[1])
        elif p[0] == "pids":
            pids = {p[i]: int(p[i + 1]) for i in range(1, len(p), 2)}
        elif p[1] == "exit":
            exits[p[0]] = int(p[2])
    print("== jobs around the agent's SIGKILL (median step, ms)")
    print(f"{'job':8} {'exit':>4} {'before':>9} {'agent gone':>11} {'after':>9} {'steps':>7}")
    for job in ("train", "infer", "plain"):
        path = os.path.join(w, f"{job}.steps")
        if not os.path.exists(path):
            print(f"{job:8} {exits.get(job, '?'):>4} (no steps file)")
            continue
        st = steps(path)
        # 10 s of warm-up excluded; the agent was absent between kill and restart.
        before = [s for s in st if tl["t0"] + 10 <= s[0] < tl["kill"]]
        gone = [s for s in st if tl["kill"] <= s[0] < tl["restart"]]
        after = [s for s in st if s[0] >= tl["restart"]]
        print(f"{job:8} {exits.get(job, '?'):>4} {median_ms(before):9.3f} {median_ms(gone):11.3f} "
              f"{median_ms(after):9.3f} {len(st):7}")
    print("\n== what the agent stored (after its restart), /api/v1/kernels")
    k = json.load(open(os.path.join(w, "kernels.json")))
    by = {}
    for win in k["windows"]:
        by.setdefault((win["gpu"], win["pid"]), []).append(win)
    names = {v: n for n, v in pids.items()}
    for (gpu, pid), wins in sorted(by.items()):
        top = wins[-1]["kernels"][0]["name"][:70] if wins[-1]["kernels"] else "-"
        dropped = max(x["summaries_dropped"] for x in wins)
        print(f"GPU {gpu} pid {pid} ({names.get(pid, 'unknown')}): {len(wins)} windows, "
              f"summaries_dropped {dropped}, top: {top}")
    missing = [n for n in ("train", "infer") if not any(p == pids.get(n) for _, p in by)]
    print(f"opted-in jobs missing: {missing or 'none'}; the not-opted-in job listed: "
          f"{any(p == pids.get('plain') for _, p in by)}")
    before = json.load(open(os.path.join(w, "kernels-before-kill.json")))
    print(f"windows before the kill: {len(before['windows'])}")
    h = json.load(open(os.path.join(w, "health.json")))["kernels"]
    print(f"health.kernels: accepted {h['accepted']} refused {h['refused']} "
          f"sender_dropped {h['sender_dropped']}")
    metrics = open(os.path.join(w, "metrics.txt")).read().splitlines()
    series = [m for m in metrics if m.startswith("gpulens_kernel") and not m.startswith("#")]
    print(f"/metrics: {len(series)} gpulens_kernel* series")
    for m in series[:12]:
        print("  " + m[:150])
    print(f"dashboard asset has the panel: {open(os.path.join(w, 'dashboard-panel.txt')).read().strip()}")
    print("\n== the sending's cost: batch-1 inference with the injection library, p50 step ms")
    rows = []
    for rnd in (1, 2):
        a = median_ms(steps(os.path.join(w, f"cost-agent-{rnd}.steps")))
        b = median_ms(steps(os.path.join(w, f"cost-none-{rnd}.steps")))
        rows.append(a / b)
        print(f"round {rnd}: agent {a:.4f}  none {b:.4f}  ratio {a / b:.4f}")
    print(f"ratio mean {statistics.mean(rows):.4f} (2 rounds, spread {max(rows) - min(rows):.4f})")
    hc = json.load(open(os.path.join(w, "health-cost.json")))["kernels"]
    print(f"cost phase accepted {hc['accepted']} refused {hc['refused']}")


if __name__ == "__main__":
    main()
