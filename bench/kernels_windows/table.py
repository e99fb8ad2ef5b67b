#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The table of bench/kernels_windows/device_run.sh: per job, its own CUDA-event
busy share (NAME.log's JSON line, when there is one) against the kernel view of
`gpulens run --kernels` (NAME.json's kernels.windows_vs_counters and headline).

  python3 table.py OUT NAME...
"""
import json
import os
import sys


def job_line(path):
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{") and "job_busy_share" in line:
                    return json.loads(line)
    except OSError:
        pass
    return None


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}"


def main():
    out, names = sys.argv[1], sys.argv[2:]
    head = f"{'job':<30} {'own %':>6} {'windows %':>9} {'counters %':>10} {'coverage %':>10} {'windows':>7}  verdict"
    print(head)
    print("-" * len(head))
    details = []
    for name in names:
        own = job_line(os.path.join(out, name + ".log"))
        try:
            with open(os.path.join(out, name + ".json")) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{name:<30} no report ({e})")
            continue
        k = report.get("kernels") or {}
        rec = (k.get("windows_vs_counters") or [{}])[0]
        job = rec.get("job") or {}
        windows = (k.get("sampling") or {}).get("windows")
        w_share, c_share = job.get("windows_busy_share"), job.get("counters_active_share")
        own_share = own["job_busy_share"] if own else None
        said = job.get("low_coverage") or job.get("shares_differ")
        if not k.get("available"):
            verdict = "no kernel view: " + "; ".join(k.get("notes", []))
        elif not job:
            verdict = "traced whole (or no counters): not compared"
        elif own_share is None:
            verdict = ("windows differ from the counters; the headline says so"
                       if job.get("shares_differ") else
                       "few windows, read as the counters; the headline gives both"
                       if job.get("low_coverage") else "windows read as the counters")
        elif w_share is not None and abs(w_share - own_share) <= 0.10:
            verdict = "windows within 10 points of the job"
        elif said and c_share is not None and abs(c_share - own_share) <= 0.10:
            verdict = "windows off; the view said so, job-wide figure within 10 points"
        elif said:
            verdict = "windows off; the view said so, job-wide figure also off"
        else:
            verdict = "MISSED: windows off and the view did not say so"
        print(f"{name:<30} {pct(own_share):>6} {pct(w_share):>9} {pct(c_share):>10} "
              f"{pct(job.get('coverage')):>10} {windows if windows is not None else '-':>7}  {verdict}")
        details.append((name, k.get("headline", ""), rec.get("phases", []), own))
    print()
    for name, headline, phases, own in details:
        print(f"{name}: {headline}")
        own_phases = {p["name"]: p for p in (own or {}).get("phases", [])}
        for p in phases:
            mine = own_phases.get(p.get("name"), {})
            print(f"    phase {p.get('name')}: own {pct(mine.get('busy_share'))} %, windows "
                  f"{pct(p.get('windows_busy_share'))} %, counters "
                  f"{pct(p.get('counters_active_share'))} %, coverage {pct(p.get('coverage'))} %")


if __name__ == "__main__":
    main()
