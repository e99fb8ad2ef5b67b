#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""device_run.sh's table: the report's launch counts against what each job launched,
and the cost of a launch under libgpulens_launches.so against without it.

Usage: check.py OUT   (device_run.sh's output directory)"""
import glob
import json
import math
import os
import statistics
import sys

out = sys.argv[1]
problems = []


def load(name):
    with open(os.path.join(out, name)) as f:
        return json.load(f)


def job_line(name):
    with open(os.path.join(out, name + ".stdout")) as f:
        return json.loads(f.read().strip().splitlines()[-1])


exits_path = os.path.join(out, "exits.txt")
with open(exits_path) if os.path.exists(exits_path) else open(os.devnull) as f:
    for line in f:
        if not line.strip().endswith("exit 0"):
            problems.append("a job failed: " + line.strip())

def counts():
    print("1. counts (report of gpulens run against the job's own)")
    try:
        job, rep = job_line("profiled"), load("profiled.report.json")["launches"]
        prof = job["kernels"]
        print(f"  profiled: torch.profiler {job['kernel_launches']} kernel launches, "
              f"report {rep['kernel_launches']} ({len(prof)} names in the profile)")
        if rep["kernel_launches"] != job["kernel_launches"]:
            problems.append(f"profiled: {rep['kernel_launches']} counted, the profiler saw {job['kernel_launches']}")
        for k in rep["top"]:
            seen = prof.get(k["name"])
            mark = "ok" if seen == k["launches"] else "DIFFERS"
            print(f"    {k['launches']:>8} (profiler {seen})  {mark}  {k['name'][:90]}")
            if seen != k["launches"]:
                problems.append(f"profiled: {k['name'][:60]}: {k['launches']} counted, profiler {seen}")
    except (OSError, ValueError, KeyError) as e:
        problems.append(f"profiled: {e!r}")
    for name in ("graphs", "kernels", "nobody"):
        try:
            job, report = job_line(name), load(name + ".report.json")
            rep = report["launches"]
            print(f"  {name}: graph launches made {job['graph_launches']}, report {rep['graph_launches']}; "
                  f"kernel launches {rep['kernel_launches']}; GPUs {[g['gpu'] for g in rep['gpus']]}; "
                  f"kernel view {'present' if 'kernels' in report else 'absent'}")
            if rep["graph_launches"] != job["graph_launches"]:
                problems.append(f"{name}: {rep['graph_launches']} graph launches counted, {job['graph_launches']} made")
            if name == "kernels" and "kernels" not in report:
                problems.append("kernels: no kernel view beside the launch counts")
            # A job shorter than the sampling interval may be seen by no sample.
            if not rep["gpus"] and name != "nobody":
                problems.append(f"{name}: the process was put on no GPU")
        except (OSError, ValueError, KeyError) as e:
            problems.append(f"{name}: {e!r}")


if os.path.exists(os.path.join(out, "profiled.report.json")) or os.path.exists(os.path.join(out, "profiled.stdout")):
    counts()
else:
    print("1. counts: not run")

print("2. cost of a launch (empty kernels, us per launch; mean of each process's slots)")


def t95(n):
    table = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
             11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 16: 2.12}
    return table.get(n, 2.0)


for threads in (1, 4):
    per_kind = {}
    made = {}
    for kind in ("n", "g", "h"):
        path = os.path.join(out, f"cost.{kind}.{threads}.jsonl")
        if not os.path.exists(path):
            continue
        procs, current = [], []
        with open(path) as f:
            for line in f:
                j = json.loads(line)
                if "us_per_launch" in j:
                    current.append(j["us_per_launch"])
                elif "launches_made" in j:
                    procs.append(statistics.mean(current))
                    made.setdefault(kind, []).append(j["launches_made"])
                    current = []
        per_kind[kind] = procs
    if not per_kind:
        print(f"  {threads} thread(s): not run")
        continue
    if "n" not in per_kind or "g" not in per_kind:
        problems.append(f"cost: no runs of {threads} thread(s)")
        continue
    for kind, what in (("g", "libgpulens_launches.so"), ("h", "the bench hook counting")):
        if kind not in per_kind:
            continue
        diffs = [100 * (x / n - 1) for n, x in zip(per_kind["n"], per_kind[kind])]
        m = statistics.mean(diffs)
        half = t95(len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else float("nan")
        med = statistics.median(diffs)
        print(f"  {threads} thread(s), {what}: alone {statistics.mean(per_kind['n']):.3f} us, with it "
              f"{statistics.mean(per_kind[kind]):.3f} us: {m:+.2f} % +- {half:.2f} (95 %, {len(diffs)} rounds; "
              f"median {med:+.2f} %, {sum(d > 0 for d in diffs)} of {len(diffs)} above)")
    # Every launch of each counted process is in its record.
    records = sorted(glob.glob(os.path.join(out, "records", f"r*.t{threads}", "launches-*.json")))
    counted = [json.load(open(r))["kernel_launches"] for r in records]
    made_g = made.get("g", [])
    ok = sorted(counted) == sorted(made_g)
    print(f"    launches made by the counted processes {sum(made_g)}, in their records {sum(counted)}"
          f" ({len(records)} records): {'equal' if ok else 'DIFFER'}")
    if not ok:
        problems.append(f"cost {threads}: records {sorted(counted)} against made {sorted(made_g)}")

print("3. paired slots in one process: the driver's cuLaunchKernel called directly (D) against")
print("   libgpulens_launches.so's (P, C and S all count; PAIRED_KINDS), us per launch, change per cycle")
for threads in (1, 4):
    path = os.path.join(out, f"paired.{threads}.jsonl")
    if not os.path.exists(path):
        continue
    cycles = {}
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if "kind" in j:
                cycles.setdefault(j["cycle"], {})[j["kind"]] = j["us_per_launch"]
    # The counted kinds are those each cycle ran beside D (PAIRED_KINDS: DPCS or DC).
    def counted(c):
        return statistics.mean(v for k, v in c.items() if k != "D")

    full = [c for c in cycles.values() if "D" in c and len(c) > 1]
    diffs = [100 * (counted(c) / c["D"] - 1) for c in full]
    if len(diffs) < 2:
        problems.append(f"paired {threads}: too few cycles")
        continue
    m = statistics.mean(diffs)
    half = t95(len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
    kinds = "".join(sorted(full[0]))
    print(f"  {threads} thread(s), slots {kinds}: direct {statistics.mean(c['D'] for c in full):.3f} us, "
          f"counted {statistics.mean(counted(c) for c in full):.3f} us: "
          f"{m:+.2f} % +- {half:.2f} (95 %, {len(diffs)} cycles; median {statistics.median(diffs):+.2f} %)")

print("4. through the node agent: agent/summary.txt (agent_check.py)")

print("5. a launch-bound loop under gpulens run (bound.report.json)")
try:
    report = load("bound.report.json")
    job = job_line("bound")
    rep = report["launches"]
    print(f"  launches made {job['kernel_launches']}, counted {rep['kernel_launches']}")
    print(f"  headline: {report.get('headline')}")
    print(f"  states: {json.dumps(report.get('states'))[:400]}")
    print(f"  first fix: {(report.get('fixes') or [''])[0]}")
    print("  text report: bound.report.txt")
except (OSError, ValueError, KeyError, IndexError) as e:
    print("  not run" if isinstance(e, OSError) else f"  {e!r}")

print("6. CUDA-graph batch-1 server, paired slots: the driver's cuGraphLaunch (D) against")
print("   libgpulens_launches.so's (C), us per replay (replay and wait), change per cycle")
path = os.path.join(out, "graph.jsonl")
if os.path.exists(path):
    cycles, tail = {}, {}
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if "kind" in j:
                cycles.setdefault(j["cycle"], {})[j["kind"]] = j["us_per_replay"]
            else:
                tail = j
    full = [c for c in cycles.values() if "D" in c and "C" in c]
    if len(full) > 1:
        diffs = [100 * (c["C"] / c["D"] - 1) for c in full]
        half = t95(len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
        print(f"  direct {statistics.mean(c['D'] for c in full):.3f} us, through the library "
              f"{statistics.mean(c['C'] for c in full):.3f} us: {statistics.mean(diffs):+.3f} % +- {half:.3f} "
              f"(95 %, {len(diffs)} cycles; median {statistics.median(diffs):+.3f} %)")
    else:
        problems.append("graph: too few cycles")
    records = glob.glob(os.path.join(out, "records", "graph", "launches-*.json"))
    counted = sum(json.load(open(r))["graph_launches"] for r in records)
    replays = tail.get("replays", {})
    # Through the library: C's slots and torch's own first replay (graph_paired.py's
    # output of 2026-11-30b's call 3 predates its "torch" key: one more in the record).
    made = replays.get("C", 0) + replays.get("torch", 0)
    print(f"  replays through the library {made}, graph launches in its record {counted}; "
          f"output unchanged: {tail.get('output_unchanged')}")
    if made != counted:
        problems.append(f"graph: {counted} graph launches counted, {made} made through the library")
else:
    print("  not run")

print("7. GPU-bound training, processes alternating: bare (n) and under the library (g)")
runs = {}
for kind in ("n", "g"):
    path = os.path.join(out, f"train.{kind}.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            runs[kind] = [json.loads(line) for line in f if line.strip()]
if runs.get("n") and runs.get("g"):
    pairs = list(zip(runs["n"], runs["g"]))
    diffs = [100 * (n["steps_per_s"] / g["steps_per_s"] - 1) for n, g in pairs]  # time per step
    half = t95(len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else float("nan")
    print(f"  steps a second: bare {statistics.mean(r['steps_per_s'] for r in runs['n']):.4f}, "
          f"under the library {statistics.mean(r['steps_per_s'] for r in runs['g']):.4f}; time a step "
          f"{statistics.mean(diffs):+.3f} % +- {half:.3f} (95 %, {len(diffs)} rounds; "
          f"median {statistics.median(diffs):+.3f} %)")
    print("  bare steps/s by round:  " + " ".join(f"{r['steps_per_s']:.4f}" for r in runs["n"]))
    print("  library steps/s:        " + " ".join(f"{r['steps_per_s']:.4f}" for r in runs["g"]))
    records = glob.glob(os.path.join(out, "records", "train", "launches-*.json"))
    launches = [json.load(open(r))["kernel_launches"] for r in records]
    steps = sum(r["steps"] for r in runs["g"])
    if launches:
        print(f"  the library's records: {len(records)}, {sum(launches)} kernel launches "
              f"(about {sum(launches) / max(1, steps + 10 * len(runs['g'])):.0f} a step)")
else:
    print("  not run")

print()
print("problems:" if problems else "no problems")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
