#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 51, item 2: the kernel view never harms the job. Runs each job of
jobs.py twice, bare and under `gpulens run --kernels` with short windows (CUPTI
attached by the library's thread and its kinds switched on and off while the job
runs), several jobs at once, and writes a manifest: per job its command, both exit
codes and checksums, both durations and how many kernel windows the recording
holds. A job is harmed when its exit code or checksum differs, or it hangs.

    run.py --gpulens .devbin/gpulens --out DIR [--per-kind 30] [--parallel 10] [--runs DIR]
    run.py --hook liblaunch_hook.so [--hook-sample N] --out DIR ...
        the same jobs bare and under bench/kernel_cost/launch_hook.cpp's library
        (LD_PRELOAD) instead of gpulens: a job is then harmed as above, and the
        manifest gives the launches the hook counted instead of kernel windows
    run.py --summary DIR/manifest.jsonl      (the table again, from a manifest)
"""
import argparse
import concurrent.futures
import glob
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Steps per kind for a few seconds of CUDA work: long enough for several windows.
# (About 4 s each alone on an H200; windows of 0.5 s every 1.5 s give each job 4-16.)
STEPS = {"eager": 5000, "graph": 10000, "compile": 2000, "threads": 2000, "profiler": 4000,
         "fork": 4000, "exit_mid": 4000, "cupy": 4000, "nccl": 2000, "exec": 4000,
         "starved": 3000}


def run_one(cmd, env, timeout):
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "hang", (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), ""
    sums = [l.split()[-1] for l in out.splitlines() if l.startswith("checksum ")]
    # gpulens run's summary shares the job's stderr and would push the job's own error
    # out of a plain tail: the error lines are kept apart.
    errors = [l for l in err.splitlines() if "Error" in l or "ASSERT" in l or "Traceback" in l]
    return {"rc": rc, "checksum": sums[-1] if sums else None, "s": round(time.time() - t0, 2),
            "stderr_tail": err[-3000:] if rc != 0 else "",
            "error_lines": errors[-5:] if rc != 0 else []}


def job(args, kind, seed, tmp):
    steps = STEPS[kind]
    base = [sys.executable, os.path.join(HERE, "jobs.py"), kind, str(seed), "--steps", str(steps)]
    trace = os.path.join(tmp, f"{kind}-{seed}.trace.jsonl")
    tally = os.path.join(tmp, f"{kind}-{seed}.%p.hook.json")  # one per process (launch_samples.cpp)
    env = dict(os.environ, PYTHONHASHSEED="0")
    if args.hook:
        wrapped = base
        wrapped_env = dict(env, LD_PRELOAD=os.path.abspath(args.hook), LAUNCH_HOOK_SAMPLE=str(args.hook_sample),
                           LAUNCH_HOOK_OUT=tally)
        how = f"LD_PRELOAD={os.path.basename(args.hook)} LAUNCH_HOOK_SAMPLE={args.hook_sample}"
    elif args.launches:
        # `gpulens run` as by default: launch counts (libgpulens_launches.so), no CUPTI.
        wrapped = [args.gpulens, "run", "--no-stderr-scan", "--trace", trace,
                   "-o", os.path.join(tmp, f"{kind}-{seed}.txt"), "--"] + base
        wrapped_env = env
        how = "run (launch counts, the default)"
    else:
        syncs = ["--kernels-syncs"] if args.syncs else []
        wrapped = [args.gpulens, "run", "--kernels", "--kernels-window", str(args.window),
                   "--kernels-every", str(args.every)] + syncs + [
                   "--no-stderr-scan", "--trace", trace,
                   "-o", os.path.join(tmp, f"{kind}-{seed}.txt"), "--"] + base
        wrapped_env = env
        how = (f"run --kernels --kernels-window {args.window} --kernels-every {args.every}"
               + (" --kernels-syncs" if args.syncs else ""))
    order = [("bare", base, env), ("gpulens", wrapped, wrapped_env)]
    random.Random(seed).shuffle(order)
    rec = {"kind": kind, "seed": seed, "cmd": " ".join(base[1:]), "gpulens_args": how}
    for name, cmd, e in order:
        rec[name] = run_one(cmd, e, args.timeout)
    windows = 0
    if os.path.exists(trace):
        with open(trace, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        windows = sum(1 for line in lines if '"x_kernels"' in line)
        if args.launches:  # the launch records gpulens run took in: counted launches
            counted = [json.loads(line) for line in lines if line.startswith('{"x_launches"')]
            rec["hook_launches"] = sum(r.get("kernel_launches", 0) + r.get("graph_launches", 0)
                                       for r in counted)
            rec["hook_processes"] = len(counted)
            rec["launch_records_refused"] = sum(1 for r in counted if "refused" in r)
        os.remove(trace)
    tallies = glob.glob(tally.replace("%p", "*"))
    if tallies:  # one per process of the job that ran to its end (os._exit skips it)
        try:
            launches = 0
            for path in tallies:
                with open(path, encoding="utf-8") as f:
                    launches += sum(k["launches"] for k in json.load(f)["kernels"])
            rec["hook_launches"] = launches
        except (OSError, ValueError, KeyError):
            rec["hook_launches"] = None
        rec["hook_processes"] = len(tallies)
        for path in tallies:
            os.remove(path)
    rec["kernel_windows"] = windows
    b, g = rec["bare"], rec["gpulens"]
    rec["same"] = b["rc"] == g["rc"] and b["checksum"] == g["checksum"] and b["checksum"] is not None
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--gpulens", help="the gpulens binary to run the jobs under")
    who.add_argument("--hook", help="bench/kernel_cost/launch_hook.cpp built as a library, preloaded instead")
    ap.add_argument("--launches", action="store_true",
                    help="with --gpulens: gpulens run as by default (launch counts), not --kernels")
    ap.add_argument("--hook-sample", type=int, default=100,
                    help="with --hook: time 1 launch in N (0 counts only)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-kind", type=int, default=30)
    ap.add_argument("--kinds", default="eager,graph,compile,threads,profiler,fork,exit_mid,cupy")
    ap.add_argument("--parallel", type=int, default=10)
    ap.add_argument("--window", type=float, default=0.5)
    ap.add_argument("--every", type=float, default=1.5)
    ap.add_argument("--syncs", action="store_true",
                    help="run gpulens with --kernels-syncs (synchronisations recorded in PyTorch jobs)")
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--runs", help="folder for each run's report and recording (default OUT/runs)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    tmp = args.runs or os.path.join(args.out, "runs")
    os.makedirs(tmp, exist_ok=True)
    kinds = args.kinds.split(",")
    todo = [(k, s) for s in range(args.per_kind) for k in kinds]
    manifest = os.path.join(args.out, "manifest.jsonl")
    done = 0
    with open(manifest, "w", encoding="utf-8") as m, \
            concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
        for rec in pool.map(lambda ks: job(args, ks[0], ks[1], tmp), todo):
            m.write(json.dumps(rec) + "\n")
            m.flush()
            done += 1
            if not rec["same"]:
                print(f"DIFFERS: {json.dumps(rec)}", flush=True)
            if done % 50 == 0:
                print(f"{done} of {len(todo)} jobs", flush=True)
    return summarize(manifest)


def summarize(manifest):
    recs = [json.loads(l) for l in open(manifest, encoding="utf-8")]
    by_kind = {}
    for r in recs:
        k = by_kind.setdefault(r["kind"], {"jobs": 0, "same": 0, "windows": 0, "no_window": 0,
                                           "bare_s": 0.0, "gpulens_s": 0.0})
        k["jobs"] += 1
        k["same"] += r["same"]
        # Under the hook: launches counted in place of kernel windows.
        seen = (r.get("hook_launches") or 0) if "hook_launches" in r else r["kernel_windows"]
        k["windows"] += seen
        k["no_window"] += seen == 0
        k["bare_s"] += r["bare"]["s"]
        k["gpulens_s"] += r["gpulens"]["s"]
    hooked = any("hook_launches" in r for r in recs)
    launches = any(r.get("gpulens_args", "").startswith("run (launch") for r in recs)
    print(f"{'kind':<10} {'jobs':>5} {'same':>5} {'launches' if hooked else 'windows':>8} {'none':>5} "
          f"{'bare s':>7} {'with s':>9}")
    for kind, k in by_kind.items():
        print(f"{kind:<10} {k['jobs']:>5} {k['same']:>5} {k['windows']:>8} {k['no_window']:>5} "
              f"{k['bare_s'] / k['jobs']:>7.1f} {k['gpulens_s'] / k['jobs']:>9.1f}")
    same = sum(r["same"] for r in recs)
    hangs = sum(1 for r in recs if "hang" in (r["bare"]["rc"], r["gpulens"]["rc"]))
    print(f"{same} of {len(recs)} jobs: the same exit code and checksum with and without "
          f"{'the hook' if hooked and not launches else 'gpulens'}; {hangs} hung")
    return 0 if same == len(recs) else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--summary":
        sys.exit(summarize(sys.argv[2]))
    sys.exit(main())
