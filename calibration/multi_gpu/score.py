#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Scores a multi-GPU recording of phases.py against expected.json.

    calibration/multi_gpu/score.py --bin .devbin/gpulens --trace T --ranks DIR

Prints one row per phase and GPU (phase, GPU, expected state or alert, got,
right or wrong), then the NVLink and PCIe checks: gpulens' mean rates against
what the program moved by its own timing (DIR/rank<R>.json). Exit status 0
when every row and check is right.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def diagnose(binary, trace):
    out = subprocess.run([binary, "diagnose", "--replay", trace, "--speed", "0", "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def gpus_of(which, world):
    return {"all": range(world), "last": [world - 1], "others": range(world - 1), "rank0": [0],
            "not_rank0": range(1, world)}[which]


def samples(trace):
    with open(trace) as f:
        next(f)
        for line in f:
            s = json.loads(line)
            if "gpu" in s and "t" in s:
                yield s


GPM_KEYS = ["sm_active", "sm_occupancy", "tensor_active", "hmma_active", "imma_active", "dfma_active",
            "fp64_active", "fp32_active", "fp16_active", "graphics_active", "pcie_tx_mibs", "pcie_rx_mibs",
            "nvlink_tx_mibs", "nvlink_rx_mibs"]


def empty_gpm_interval(s):
    """core/gpm_interval.cpp's signature: an interval the driver had no data for
    (every GPM metric 0, DRAM absent); gpulens' own analysis drops these."""
    return (s.get("sm_active") is not None and s.get("dram_active") is None
            and all(s.get(k) in (None, 0) for k in GPM_KEYS))


def mean_rate(trace, gpu, start, end, field):
    # The first and last second of a phase hold its ramps; the middle is steady.
    vals = [s[field] for s in samples(trace)
            if s["gpu"] == gpu and start + 1 <= s["t"] <= end - 1 and s.get(field) is not None
            and not empty_gpm_interval(s)]
    return sum(vals) / len(vals) if vals else None


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--trace", required=True)
    p.add_argument("--ranks", required=True, help="folder with rank<R>.json from phases.py")
    p.add_argument("--expected", default=os.path.join(HERE, "expected.json"),
                   help="labels (default expected.json; expected-holdout.json for --plan holdout)")
    args = p.parse_args(argv)
    expected = json.load(open(args.expected))
    ranks = sorted(f for f in os.listdir(args.ranks) if f.startswith("rank") and f.endswith(".json"))
    per_rank = [json.load(open(os.path.join(args.ranks, f))) for f in ranks]
    world = len(per_rank)
    if world < 2:
        print("score: fewer than 2 rank files", file=sys.stderr)
        return 2
    diag = diagnose(args.bin, args.trace)
    phases = {(ph["name"], ph.get("gpu", 0)): ph for ph in diag.get("phases", [])}
    alerts = diag.get("alerts", [])
    ok = True
    print(f"{'phase':<12} {'gpu':>3}  {'expected':<34} {'got':<34} right?")
    for row in expected["phases"]:
        for gpu in gpus_of(row["gpus"], world):
            got = phases.get((row["phase"], gpu))
            if got is None:
                print(f"{row['phase']:<12} {gpu:>3}  {'(phase)':<34} {'not found':<34} wrong")
                ok = False
                continue
            want_states = row.get("state_any") or [row["state"]]
            fired = {a["rule"] for a in alerts if a.get("gpu") == gpu and a.get("fired_at") is not None
                     and got["start"] <= a["fired_at"] <= got["end"] + 10}
            problems = []
            if got["state"] not in want_states:
                problems.append("state")
            problems += [f"{a} missing" for a in row.get("alerts", []) if a not in fired]
            problems += [f"{a} fired" for a in row.get("not_alerts", []) if a in fired]
            first = (got.get("fixes") or [""])[0]
            if row.get("fix") and not any(k in first for k in row["fix"]):
                problems.append("first fix")
            problems += [f"first fix says {k!r}" for k in row.get("fix_not", []) if k in first]
            if row.get("names_late_rank"):
                late = world - 1
                texts = [a.get("message", "") for a in alerts if a.get("gpu") == gpu] + list(got.get("fixes") or [])
                if not any(f"GPU {late}" in t for t in texts):
                    problems.append(f"GPU {late} not named")
            want = "/".join(want_states) + ("" if not row.get("alerts") else " + " + ",".join(row["alerts"]))
            have = got["state"] + ("" if not fired else " + " + ",".join(sorted(fired)))
            if row.get("known_miss"):
                # Understood after the run (expected.json says why): it must still miss.
                right = "known miss" if problems else "right: remove its known_miss"
                ok &= bool(problems)
            else:
                right = "right" if not problems else "wrong: " + "; ".join(problems)
                ok &= not problems
            print(f"{row['phase']:<12} {gpu:>3}  {want:<34} {have:<34} {right}")
    print()
    within = expected["checks"]
    marks = {}
    with open(args.trace) as f:
        next(f)
        for line in f:
            m = json.loads(line)
            if "mark" in m and "t" in m:
                marks.setdefault(m["mark"], m["t"])
    print(f"{'check':<22} {'gpu':>3} {'program GB/s':>12} {'gpulens GB/s':>12} {'diff':>7}")
    for name, phase, field, rec_field, tol in (
            ("nvlink tx allreduce", "allreduce", "nvlink_tx_mibs", "sent_bytes_per_s", within["nvlink_tx_within"]),
            ("pcie rx h2d_pinned", "h2d_pinned", "pcie_rx_mibs", "rx_bytes_per_s", within["pcie_rx_within"])):
        for gpu, rec in enumerate(per_rank):
            if phase not in rec:
                continue  # a plan without this phase
            prog = rec[phase][rec_field] / 1e9
            # Rank files of the first live run (2026-11-26) lack the allreduce
            # phase's times: the phase marks in the trace carry them too.
            start = rec[phase].get("start", marks.get(phase + ":start"))
            end = rec[phase].get("end", marks.get(phase + ":end"))
            rate = mean_rate(args.trace, gpu, start, end, field)
            ours = rate * 1048576 / 1e9 if rate is not None else None
            if ours is None:
                print(f"{name:<22} {gpu:>3} {prog:>12.1f} {'n/a':>12}   wrong")
                ok = False
                continue
            diff = (ours - prog) / prog
            good = abs(diff) <= tol
            ok &= good
            print(f"{name:<22} {gpu:>3} {prog:>12.1f} {ours:>12.1f} {diff:>+7.1%} {'right' if good else 'wrong'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
