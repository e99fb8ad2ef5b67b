#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The torch.profiler comparison: per top-10 kernel (by GPU time) the launch
count and total time from a `gpulens run --kernels` recording and from
profile_train.py's summary of the profiler's trace, and the idle share of the GPU
between the first and the last GPU activity from each.

    python3 compare.py RECORDING.trace.jsonl PROFILER.json > comparison.txt
"""
import json
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from profile_train import idle_stats  # noqa: E402


def ours(path):
    """Kernels by name, busy intervals (Unix ns), idle the sketches closed, the
    records and the step marks of a recording, from record versions 1 to 4."""
    kernels, intervals, hidden, records, steps = {}, [], [], [], []
    procs = {}  # version 4, per pid: clock base, kernel names, configurations
    with open(path) as f:
        for line in f:
            if '"mark":"step"' in line.replace(" ", ""):
                steps.append(json.loads(line)["t"] * 1e9)
            if '"x_kernels"' not in line:
                continue
            r = json.loads(line)
            if r["x_kernels"] >= 4:
                p = procs.setdefault(r.get("pid"), {"base": 0, "names": {}, "configs": {}})
                kind = r.get("record")
                if kind == "process":
                    p["base"] = r.get("clock", {}).get("base_unix_ns", 0)
                elif kind == "names":
                    p["names"].update({i: n for i, n in r.get("kernel_names", [])})
                    p["configs"].update({c[0]: c[1] for c in r.get("configs", [])})
                elif kind == "chunk":
                    for cfg, n, ns, *_ in r.get("kernels", []):
                        e = kernels.setdefault(p["names"].get(p["configs"].get(cfg), "(unnamed)"), [0, 0])
                        e[0] += n
                        e[1] += ns
                    for dev, flat, merged in r.get("busy", []):
                        spans, t = [], 0
                        for i in range(0, len(flat), 2):
                            start = flat[i] if i == 0 else t + flat[i]
                            t = start + flat[i + 1]
                            spans.append((p["base"] + start, p["base"] + t))
                        intervals += spans
                        for i in range(0, len(merged), 4):
                            a, b = spans[merged[i]]
                            hidden.append((a, b, merged[i + 3]))
                elif kind == "end":
                    records.append({"pid": r.get("pid"), "status": r.get("status")})
                continue
            records.append(r)
            base = r.get("clock", {}).get("base_unix_ns", 0)
            for k in r.get("kernels", []):
                e = kernels.setdefault(k["name"], [0, 0])
                e[0] += k["count"]
                e[1] += k["total_ns"]
            for b in r.get("busy", []):
                v = b["intervals"]
                intervals += [(base + v[i], base + v[i + 1]) for i in range(0, len(v), 2)]
    return kernels, intervals, hidden, records, steps


def with_hidden(st, hidden, window=None):
    """Idle the sketches closed inside busy spans (version 4), pro rata in the window."""
    if not hidden or not st.get("window_ns"):
        return st
    lo, hi = window if window else (min(a for a, _, _ in hidden), max(b for _, b, _ in hidden))
    extra = 0.0
    for a, b, gap in hidden:
        over = min(b, hi) - max(a, lo)
        if over > 0 and b > a:
            extra += gap * over / (b - a)
    st = dict(st)
    st["idle_share"] = st["idle_share"] + extra / st["window_ns"]
    return st


def main():
    kernels, intervals, hidden, records, steps = ours(sys.argv[1])
    with open(sys.argv[2]) as f:
        prof = json.load(f)
    pk = prof["kernels"]
    top = sorted(kernels.items(), key=lambda kv: -kv[1][1])[:10]
    print(f"{'kernel':60} {'gpulens n':>9} {'prof n':>7} {'gpulens ms':>10} {'prof ms':>9} {'diff %':>7}")
    worst = 0.0
    for name, (n, ns) in top:
        p = pk.get(name, {"count": 0, "total_ns": 0})
        diff = (ns - p["total_ns"]) / p["total_ns"] * 100 if p["total_ns"] else float("inf")
        worst = max(worst, abs(diff), abs(n - p["count"]) / max(p["count"], 1) * 100)
        short = name if len(name) <= 60 else name[:57] + "..."
        print(f"{short:60} {n:9d} {p['count']:7d} {ns / 1e6:10.2f} {p['total_ns'] / 1e6:9.2f} {diff:+7.2f}")
    tn = sum(v[0] for v in kernels.values())
    tt = sum(v[1] for v in kernels.values())
    print(f"{'all kernels':60} {tn:9d} {prof['kernel_launches']:7d} {tt / 1e6:10.2f} "
          f"{prof['kernel_ns'] / 1e6:9.2f} {(tt - prof['kernel_ns']) / prof['kernel_ns'] * 100:+7.2f}")
    print(f"worst top-10 disagreement (count or time): {worst:.2f} %")
    st = with_hidden(idle_stats(intervals), hidden)
    print("idle share, first to last GPU activity: gpulens {:.1f} % of {:.2f} s, torch.profiler {:.1f} % of {:.2f} s".format(
        st.get("idle_share", 0) * 100, st.get("window_ns", 0) / 1e9, prof.get("idle_share", 0) * 100,
        prof.get("window_ns", 0) / 1e9))
    # The same steps in both runs: each run's idle share between its first and
    # last step mark (the window gpulens' report uses). The whole-run figures above
    # differ by what each run did outside the steps (start-up, exit).
    if len(steps) >= 2 and "steps_idle_share" in prof:
        ws = with_hidden(idle_stats(list(intervals), (min(steps), max(steps))), hidden,
                         (min(steps), max(steps)))
        diff = (ws["idle_share"] - prof["steps_idle_share"]) * 100
        print(f"idle share over the marked steps: gpulens {ws['idle_share'] * 100:.2f} % of "
              f"{ws['window_ns'] / 1e9:.3f} s ({len(steps) - 1} steps), torch.profiler "
              f"{prof['steps_idle_share'] * 100:.2f} % of {prof['steps_window_ns'] / 1e9:.3f} s "
              f"({prof['steps']} steps): {diff:+.2f} points"
              + ("" if prof.get("activity_covers_steps") else " (profiler trace does not cover its steps: clocks?)"))
    labels = ["<10us", "10-100us", "0.1-1ms", "1-10ms", ">10ms"]
    for name, s in (("gpulens", st), ("torch.profiler", prof)):
        print(f"gaps {name:15}" + "  ".join(f"{l}: {c} ({ns / 1e6:.1f} ms)" for l, c, ns in
                                            zip(labels, s.get("gap_hist_count", []), s.get("gap_hist_ns", []))))
    print("records: " + ", ".join(f"pid {r.get('pid')} {r.get('status')}" for r in records))


if __name__ == "__main__":
    main()
