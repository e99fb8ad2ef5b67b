# SPDX-License-Identifier: Apache-2.0
"""What each CUPTI state costs a launch-bound job: runs cupti_states (built from
cupti_states.cu) once per state per round, states in a new random order each
round, and compares each state's phase-B/phase-A ratio with the `none` control's
of the same round (paired: drift in the machine cancels).

  python3 bench/kernels/cupti_states.py --bin ./cupti_states --rounds 5 \
      --inject .devbin/libgpulens_kernels.so [--states none,register,...]

Prints one row per state: the change in the host's cost per kernel launch and in
a launch+synchronise round trip, mean over rounds with a 95 % interval
(Student t), and the phase-A medians in microseconds.

The library no longer has GPULENS_KERNELS_DETACH (docs/kernels.md, "What it
costs"): the setting below reaches nothing, `inject` and `inject_attached` both
measure CUPTI left attached, and a record's `detaches` is 0.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

STATES = ["none", "register", "device", "kernel_on", "kernel_off", "all_on", "all_off",
          "sync_off", "memcpy_off", "memset_off", "marker_off", "finalize", "inject_attached", "inject"]

# Two-sided 95 % Student t quantiles by degrees of freedom.
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
       10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04}


def t95(df):
    keys = [k for k in sorted(T95) if k <= df]
    return T95[keys[-1]] if keys else float("nan")


def mean_ci(xs):
    n = len(xs)
    if n == 0:
        return float("nan"), float("nan")
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, t95(n - 1) * sd / math.sqrt(n)


def run_one(args, state):
    env = dict(os.environ)
    if state.startswith("inject"):
        env["CUDA_INJECTION64_PATH"] = os.path.abspath(args.inject)
        env["GPULENS_KERNELS_DIR"] = tempfile.mkdtemp(prefix="cupti-states-")
        if state == "inject_attached":
            env["GPULENS_KERNELS_DETACH"] = "0"
    # The library detaches 0.5 s after its window's record is out: phase B starts
    # 1 s after it.
    cmd = [args.bin, state, str(args.seconds), "1.0"]
    if args.cpu is not None:
        cmd = ["taskset", "-c", args.cpu] + cmd
    p = subprocess.run(cmd, env=env, capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0:
        print(f"cupti_states.py: {state} exited {p.returncode}: {p.stderr.strip()[-300:]}",
              file=sys.stderr)
        return None
    line = json.loads(p.stdout.strip().splitlines()[-1])
    if state.startswith("inject"):
        # What the library's record says: windows closed, detaches, any note.
        import glob
        import re
        text = "".join(open(f).read() for f in glob.glob(env["GPULENS_KERNELS_DIR"] + "/*.jsonl"))
        m = re.search(r'"detaches":(\d+)', text)
        line["detaches"] = int(m.group(1)) if m else 0
        n = re.search(r'"detach_note":"([^"]*)"', text)
        if n:
            line["detach_note"] = n.group(1)
    return line


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the built cupti_states")
    ap.add_argument("--inject", help="libgpulens_kernels.so, for the `inject` state")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=1.5, help="each phase's length")
    ap.add_argument("--states", default=",".join(STATES))
    ap.add_argument("--cpu", help="pin every run to these CPUs (taskset -c): less noise")
    ap.add_argument("--raw", help="append every run's JSON line to this file")
    args = ap.parse_args()
    states = [s for s in args.states.split(",") if s]
    if not args.inject:
        states = [s for s in states if not s.startswith("inject")]
    if "none" not in states:
        states.insert(0, "none")
    runs = {s: [] for s in states}  # per round: the run's line, or None
    rng = random.Random(1)
    for r in range(args.rounds):
        order = states[:]
        rng.shuffle(order)
        for s in order:
            line = run_one(args, s)
            if line is not None:
                line["round"] = r
                if args.raw:
                    with open(args.raw, "a") as f:
                        f.write(json.dumps(line) + "\n")
            runs[s].append(line)
        print(f"cupti_states.py: round {r + 1}/{args.rounds} done", file=sys.stderr)

    print(f"# {args.rounds} rounds, phases of {args.seconds} s; change = state's B/A over "
          "the control's B/A in the same round, mean and 95 % interval over rounds")
    print(f"{'state':12} {'launch %':>9} {'95% CI':>7} {'sync %':>8} {'95% CI':>7} "
          f"{'launch us A->B':>16} {'sync us A->B':>16} {'ok':>4}")
    for s in states:
        dl, ds, la, lb, sa, sb = [], [], [], [], [], []
        for r in range(args.rounds):
            x, c = runs[s][r], runs["none"][r]
            if x is None or c is None:
                continue
            dl.append(100 * ((x["launch_b"] / x["launch_a"]) / (c["launch_b"] / c["launch_a"]) - 1))
            ds.append(100 * ((x["sync_b"] / x["sync_a"]) / (c["sync_b"] / c["sync_a"]) - 1))
            la.append(x["launch_a"])
            lb.append(x["launch_b"])
            sa.append(x["sync_a"])
            sb.append(x["sync_b"])
        ml, cl = mean_ci(dl)
        ms, cs = mean_ci(ds)
        med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")  # noqa: E731
        print(f"{s:12} {ml:+9.2f} {cl:7.2f} {ms:+8.2f} {cs:7.2f} "
              f"{med(la):7.3f}->{med(lb):7.3f} {med(sa):7.2f}->{med(sb):7.2f} "
              f"{len(dl):2d}/{args.rounds}")
    for s in states:
        if s.startswith("inject"):
            got = [x for x in runs[s] if x is not None]
            print(f"# {s}: detaches per run {[x.get('detaches', 0) for x in got]}"
                  + "".join(f"; note: {x['detach_note']}" for x in got[:1] if "detach_note" in x))


if __name__ == "__main__":
    main()
