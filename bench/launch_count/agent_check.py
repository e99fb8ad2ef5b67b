#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""device_run.sh's agent phase: the launch counts that reached the agent's /metrics,
job by job, against what each job launched (its own line on stdout; for `profiled`,
torch.profiler's count of the whole job).

Usage: agent_check.py OUT/agent"""
import collections
import json
import os
import re
import sys

out = sys.argv[1]
problems = []
SAMPLE = re.compile(r'^(gpulens_kernel_launches_total|gpulens_graph_launches_total)\{(.*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def scrape(name):
    """The launch series of one scrape: kernel label -> launches, and graph launches."""
    kernels, graphs = collections.Counter(), 0
    with open(os.path.join(out, f"metrics.{name}.txt")) as f:
        for line in f:
            m = SAMPLE.match(line.strip())
            if not m:
                continue
            labels = dict(LABEL.findall(m.group(2)))
            value = int(float(m.group(3)))
            if m.group(1) == "gpulens_graph_launches_total":
                graphs += value
            else:
                kernels[labels.get("kernel", "?")] += value
    return kernels, graphs


def job_line(name):
    with open(os.path.join(out, name + ".stdout")) as f:
        return json.loads(f.read().strip().splitlines()[-1])


print("4. launch counts through the node agent (/metrics after each job, the job outside gpulens run)")
with open(os.path.join(out, "prolog.txt")) as f:
    print("  task prolog printed: " + "; ".join(line.strip() for line in f))
order = ["start", "profiled", "graphs", "eager", "nobody"]
present = [n for n in order if os.path.exists(os.path.join(out, f"metrics.{n}.txt"))]
before_k, before_g = scrape(present[0])
for name in present[1:]:
    k, g = scrape(name)
    dk = k - before_k
    total, graph = sum(dk.values()), g - before_g
    before_k, before_g = k, g
    try:
        job = job_line(name)
    except (OSError, ValueError, IndexError) as e:
        problems.append(f"{name}: no job line ({e!r})")
        continue
    print(f"  {name}: /metrics gained {total} kernel launches ({len(dk)} labels), {graph} graph launches")
    if name == "profiled":
        made = job["kernel_launches"]
        print(f"    torch.profiler: {made} kernel launches, {len(job['kernels'])} names")
        if total != made:
            problems.append(f"profiled: /metrics {total}, the profiler {made}")
        # Labels are short names: instantiations of one template may share one. Where no
        # two share, the counts must pair one to one.
        mine = sorted(dk.values(), reverse=True)
        theirs = sorted(job["kernels"].values(), reverse=True)
        print(f"    counts by label, most first: {mine[:12]}")
        print(f"    the profiler's by name:       {theirs[:12]}")
        if len(mine) == len(theirs) and mine != theirs:
            problems.append("profiled: the counts by kernel differ")
        for label, n in dk.most_common(5):
            print(f"      {n:>8}  {label[:100]}")
    elif name in ("graphs", "nobody"):
        if graph != job["graph_launches"]:
            problems.append(f"{name}: /metrics {graph} graph launches, the job made {job['graph_launches']}")
    elif name == "eager":
        made = job["kernel_launches"]
        # The job's count is its add_ loop; torch.zeros adds one fill kernel before it.
        print(f"    the job's add_ launches: {made}")
        if not made <= total <= made + 5:
            problems.append(f"eager: /metrics {total}, the job's loop {made}")
try:
    with open(os.path.join(out, "health.json")) as f:
        health = json.load(f)
    print("  health: " + json.dumps({k: v for k, v in health.items() if "launch" in k or "kernel" in k})[:300])
except (OSError, ValueError) as e:
    problems.append(f"health: {e!r}")
with open(os.path.join(out, "serve.log")) as f:
    warnings = [line.strip() for line in f if "warn" in line.lower() or "error" in line.lower()]
print(f"  agent log: {len(warnings)} warning or error lines" + (": " + warnings[0][:200] if warnings else ""))
print("problems:" if problems else "no problems")
for p in problems:
    print("  " + p)
sys.exit(1 if problems else 0)
