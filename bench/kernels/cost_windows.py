#!/usr/bin/env python3
"""What `gpulens run --kernels` costs the job when it traces in windows (the
default: 2 s every 20 s), measured on the job's own steps.

Per round, one process per configuration runs the same workloads (workloads.py,
each for --seconds, every step timed with its unix start), in a rotated order:

  alone     python3 workloads.py --steps-out ...
  windowed  gpulens run --kernels --kernels-window W --kernels-every P -- the same
            (CUPTI attached inside the windows, detached between them)
  attached  the same with GPULENS_KERNELS_DETACH=0: CUPTI left attached, every
            kind off, between windows (what the library did before it detached)
  inject    gpulens run --kernels with GPULENS_CUPTI=/nonexistent: the injection
            library and the sampler without CUPTI at all

The windowed process's recording says when its trace windows were open. Then, per
workload:

  in-window   steps that started inside a window (--margin inside its edges)
              against the steps of the same process in the second before it
              opened: paired per window, so drift
              in the machine's speed over minutes cancels. This is the cost
              while tracing: CUPTI's per-launch work.
  outside     steps of the windowed process away from any window (--margin from
              its edges) against all steps of the alone process of the same
              round: the cost of having the library and CUPTI loaded with
              tracing off. Process against process, so machine drift stays in.
  all         every step of the windowed process against the alone process: the
              cost at the measured duty (W / P).

The duty-weighted cost of another schedule follows as outside + duty x in-window;
the table prints it for the default (2 s every 20 s: duty 0.1). Each figure is the
mean over windows (in-window) or rounds (the others) of the relative change of the
median (p50) and of the mean step time, with a 95 % confidence interval (Student
t). Positive: the job is slower.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
       12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04, 60: 2.00}
DEFAULT_DUTY = 2 / 20


def t95(df):
    keys = sorted(k for k in T95 if k <= df)
    return T95[keys[-1]] if keys else float("nan")


def mean_ci(xs):
    if not xs:
        return float("nan"), float("nan"), 0
    if len(xs) == 1:
        return xs[0], float("nan"), 1
    return statistics.mean(xs), t95(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs)), len(xs)


def rel(value, base):
    return (value - base) / base * 100


def read_steps(path):
    out = {}
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            out[j["workload"]] = j["steps"]
    return out


def read_windows(trace_path):
    """Trace windows of the recording's kernel records, unix seconds."""
    windows = []
    with open(trace_path) as f:
        for line in f:
            if '"x_kernels"' not in line:
                continue
            r = json.loads(line)
            base = r.get("clock", {}).get("base_unix_ns", 0)
            for a, b in r.get("windows", []):
                windows.append(((base + a) / 1e9, (base + b) / 1e9))
    return sorted(windows)


def latencies(steps, keep):
    return [d for (u, d) in steps if keep(u)]


CONFIGS = ["alone", "windowed", "attached", "inject"]


def summarise(rounds, margin, duty, config="windowed"):
    """rounds: list of {"alone": {workload: steps}, config: {...}, "windows": {config: [...]}}."""
    table = []
    workloads = sorted({w for r in rounds for w in r["alone"]})
    for w in workloads:
        inwin = {"p50": [], "mean": []}
        outside = {"p50": [], "mean": []}
        every = {"p50": [], "mean": []}
        n_in = n_out = 0
        for r in rounds:
            if w not in r["alone"] or w not in r.get(config, {}):
                continue
            alone = [d for _, d in r["alone"][w]]
            steps = r[config][w]
            wins = r["windows"].get(config, [])

            def near_window(u):
                return any(a - margin <= u <= b + margin for a, b in wins)

            for a, b in wins:
                inside = latencies(steps, lambda u: a + margin <= u <= b - margin)
                # The second before it opened: after a window CUPTI stays attached
                # (all off) until its records are flushed, so the second after is not
                # the same state as before.
                around = latencies(steps, lambda u: a - 1 - margin <= u < a - margin)
                if len(inside) < 5 or len(around) < 5:
                    continue  # the window fell outside this workload's stretch
                n_in += 1
                inwin["p50"].append(rel(statistics.median(inside), statistics.median(around)))
                inwin["mean"].append(rel(statistics.mean(inside), statistics.mean(around)))
            away = latencies(steps, lambda u: not near_window(u))
            if len(away) >= 5 and alone:
                n_out += 1
                outside["p50"].append(rel(statistics.median(away), statistics.median(alone)))
                outside["mean"].append(rel(statistics.mean(away), statistics.mean(alone)))
                every["p50"].append(rel(statistics.median([d for _, d in steps]), statistics.median(alone)))
                every["mean"].append(rel(statistics.mean([d for _, d in steps]), statistics.mean(alone)))
        for metric in ("p50", "mean"):
            i_m, i_ci, i_n = mean_ci(inwin[metric])
            o_m, o_ci, o_n = mean_ci(outside[metric])
            a_m, a_ci, a_n = mean_ci(every[metric])
            table.append({"config": config, "workload": w, "metric": metric, "in_window_pct": i_m, "in_window_ci": i_ci,
                          "windows": i_n, "outside_pct": o_m, "outside_ci": o_ci, "rounds": o_n,
                          "all_pct": a_m, "all_ci": a_ci,
                          "default_duty_pct": o_m + duty * i_m if i_n and o_n else float("nan"),
                          "alone_median_ms": statistics.median(
                              [statistics.median([d for _, d in r["alone"][w]]) * 1e3
                               for r in rounds if w in r["alone"]])})
    return table


def format_table(table, measured_duty):
    lines = [f"{'config':9} {'workload':10} {'metric':6} {'in-window %':>12} {'95% CI':>7} {'wins':>5} "
             f"{'outside %':>10} {'95% CI':>7} {'all @' + format(measured_duty, '.2f') + ' %':>12} "
             f"{'95% CI':>7} {'rounds':>6} {'@0.10 %':>8} {'alone ms':>9}"]
    for t in table:
        lines.append(f"{t['config']:9} {t['workload']:10} {t['metric']:6} {t['in_window_pct']:+12.2f} {t['in_window_ci']:7.2f} "
                     f"{t['windows']:5d} {t['outside_pct']:+10.2f} {t['outside_ci']:7.2f} "
                     f"{t['all_pct']:+12.2f} {t['all_ci']:7.2f} {t['rounds']:6d} "
                     f"{t['default_duty_pct']:+8.2f} {t['alone_median_ms']:9.3f}")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpulens", default=os.path.join(HERE, "..", "..", ".devbin", "gpulens"))
    p.add_argument("--workloads", default="launch,batch1,train,train_gpt")
    p.add_argument("--seconds", type=float, default=12, help="seconds per workload per process")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--window", type=float, default=1.0, help="--kernels-window of the measurement")
    p.add_argument("--every", type=float, default=3.0, help="--kernels-every of the measurement")
    p.add_argument("--margin", type=float, default=0.05, help="seconds kept clear of a window's edges")
    p.add_argument("--configs", default=",".join(CONFIGS), help="of: " + ",".join(CONFIGS))
    p.add_argument("--out", default=".")
    a = p.parse_args()
    gl = os.path.abspath(a.gpulens)
    tmp = tempfile.mkdtemp(prefix="gpulens-windows-")
    configs = [c for c in CONFIGS if c in a.configs.split(",")]
    rounds = []
    for rnd in range(a.rounds):
        r = {"windows": {}}
        order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
        for cfg in order:
            steps_path = f"{tmp}/{cfg}-{rnd}.jsonl"
            trace = f"{tmp}/{cfg}-{rnd}.trace.jsonl"
            job = [sys.executable, os.path.join(HERE, "workloads.py"), "--seconds", str(a.seconds),
                   "--workloads", a.workloads, "--steps-out", steps_path]
            cmd = job if cfg == "alone" else [gl, "run", "--kernels", "--kernels-window", str(a.window),
                                              "--kernels-every", str(a.every), "-q", "--trace", trace,
                                              "-o", "/dev/null", "--"] + job
            env = dict(os.environ)
            if cfg == "attached":
                env["GPULENS_KERNELS_DETACH"] = "0"
            elif cfg == "inject":
                env["GPULENS_CUPTI"] = "/nonexistent/libcupti.so"
            done = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if done.returncode != 0:
                print(f"cost_windows: {cfg} exited {done.returncode}: {done.stderr[-2000:]}", file=sys.stderr)
                continue
            r[cfg] = read_steps(steps_path)
            if cfg != "alone":
                r["windows"][cfg] = read_windows(trace)
        if "alone" not in r:
            continue
        rounds.append(r)
        print(f"cost_windows: round {rnd + 1}/{a.rounds} done, windows "
              f"{ {c: len(v) for c, v in r['windows'].items()} }", file=sys.stderr, flush=True)
        table = [t for c in configs if c != "alone" for t in summarise(rounds, a.margin, DEFAULT_DUTY, c)]
        with open(os.path.join(a.out, "cost-windows-partial.txt"), "w") as f:
            f.write(f"after {rnd + 1} of {a.rounds} rounds\n" + format_table(table, a.window / a.every) + "\n")
    table = [t for c in configs if c != "alone" for t in summarise(rounds, a.margin, DEFAULT_DUTY, c)]
    head = (f"# gpulens run --kernels in windows: cost to the job's steps. Measured with windows of {a.window:g} s "
            f"every {a.every:g} s (duty {a.window / a.every:.2f}), {len(rounds)} rounds of {a.seconds:g} s per "
            f"workload; '@0.10' = outside + 0.1 x in-window, the default schedule (2 s every 20 s), derived.")
    text = head + "\n" + format_table(table, a.window / a.every)
    with open(os.path.join(a.out, "cost-windows.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, "cost-windows.json"), "w") as f:
        json.dump({"window_s": a.window, "every_s": a.every, "rounds": len(rounds), "seconds": a.seconds,
                   "table": table}, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
