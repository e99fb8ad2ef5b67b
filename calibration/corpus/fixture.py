#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Copies corpus recordings into tests/fixtures/corpus/, thinned to their phases.

    calibration/corpus/fixture.py RECORDING... [--out tests/fixtures/corpus] [--margin 10]

Keeps the header, every mark (job_start and job_end too: the job's end is part of
the verdict) and every sample within --margin seconds of a phase (NAME:start ..
NAME:end), plus the last --margin seconds before the job ended (where an
out-of-memory death shows). Samples are kept byte for byte at their recorded
100 ms interval: the fixture reads exactly as the recording did inside the phases.
Written into tests/fixtures/, a fixture over 300 KB is packed as NAME.xz beside it
(scripts/fixtures.sh pack): commit the .xz, git ignores NAME.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def spans(lines, margin):
    opened, out, job_end = {}, [], None
    for line in lines:
        if '"mark"' not in line:
            continue
        m = json.loads(line)
        name, t = m.get("mark", ""), m.get("t")
        if name.endswith(":start"):
            opened[name[:-6]] = t
        elif name.endswith(":end") and name[:-4] in opened:
            out.append((opened.pop(name[:-4]) - margin, t + margin))
        elif name == "job_end":
            job_end = t
    for start in opened.values():  # a phase the job never closed (it died)
        out.append((start - margin, float("inf")))
    if job_end is not None:
        out.append((job_end - margin, job_end + margin))
    return out


def thin(src, dst, margin):
    with open(src) as f:
        lines = f.readlines()
    keep_spans = spans(lines[1:], margin)
    kept = [lines[0]]
    for line in lines[1:]:
        if '"mark"' in line:
            kept.append(line)
            continue
        t = json.loads(line).get("t")
        if t is not None and any(a <= t <= b for a, b in keep_spans):
            kept.append(line)
    with open(dst, "w") as f:
        f.writelines(kept)
    return len(lines), len(kept)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recordings", nargs="+")
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "corpus"))
    parser.add_argument("--margin", type=float, default=10.0)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    written = []
    for src in args.recordings:
        dst = os.path.join(args.out, os.path.basename(src))
        before, after = thin(src, dst, args.margin)
        written.append(dst)
        print(f"{os.path.basename(src):<32} {before:>6} -> {after:>6} lines, {os.path.getsize(dst):>9} bytes")
    fixtures = os.path.realpath(os.path.join(ROOT, "tests", "fixtures")) + os.sep
    if os.path.realpath(args.out).startswith(fixtures):
        # The large ones are committed as .xz (the tree is carried to GPU machines).
        subprocess.run([os.path.join(ROOT, "scripts", "fixtures.sh"), "pack", *written], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
