#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Windowed against whole-job tracing of the same script (one run after the
other): the top kernels' shares of kernel time and the idle share of the marked
steps, from each recording's kernel view (`gpulens report --format json`).

    python3 compare_windows.py GPULENS WINDOWED.trace.jsonl WHOLE.trace.jsonl
"""
import json
import subprocess
import sys


def view(gpulens, trace):
    out = subprocess.run([gpulens, "report", "--format", "json", trace], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out)["kernels"]


def main():
    gl, windowed, whole = sys.argv[1:4]
    w, a = view(gl, windowed), view(gl, whole)
    ws = {k["name"]: k["share"] for k in w["top"]}
    print(f"{'kernel':60} {'windows %':>10} {'whole %':>8} {'diff pts':>9}")
    worst = 0.0
    for k in a["top"][:5]:
        s = ws.get(k["name"])
        d = (s - k["share"]) * 100 if s is not None else float("nan")
        worst = max(worst, abs(d)) if s is not None else float("inf")
        print(f"{k['short_name'][:60]:60} {s * 100 if s is not None else float('nan'):10.2f} "
              f"{k['share'] * 100:8.2f} {d:+9.2f}")
    print(f"worst top-5 share difference: {worst:.2f} points")

    def steps_idle(v):
        d = v["devices"][0]
        st = d.get("steps")
        return (st["idle"]["idle_share"] * 100, st["steps"]) if st else (float("nan"), 0)

    wi, wn = steps_idle(w)
    ai, an = steps_idle(a)
    print(f"idle share of the marked steps: windows {wi:.2f} % ({wn} steps inside {w.get('sampling', {}).get('windows')} "
          f"windows), whole {ai:.2f} % ({an} steps): {wi - ai:+.2f} points")
    print(f"headline windows: {w['headline']}")
    print(f"headline whole:   {a['headline']}")


if __name__ == "__main__":
    main()
