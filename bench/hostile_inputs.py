#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rehearsal: the inputs that crashed or ran away in issue 17, against a binary.

Builds each hostile recording or config in a temporary directory, runs
`stream`, `diagnose` and `report` on it (strict and --lenient) with a time limit
and a memory limit, and counts crashes (killed by a signal), hangs (past the
time limit) and clean refusals. Prints one line per case and a total:

  bench/hostile_inputs.py --gpulens build/debug/gpulens
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HEADER = '{"format": "gpu-trace", "version": 1, "devices": [{"index": 0}]}\n'


def nested_arrays(n):
    return "[" * n + "]" * n


def cases(tmp):
    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    ok = '{"t": 2, "gpu": 0, "gpu_util": 1}\n'
    yield "nested 70,000 arrays", write("n70k.jsonl", HEADER + '{"t": 1, "gpu": 0, "x": ' + nested_arrays(70000) + "}\n" + ok)
    yield "nested 200,000 arrays", write("n200k.jsonl", HEADER + '{"t": 1, "gpu": 0, "x": ' + nested_arrays(200000) + "}\n" + ok)
    yield "mark nesting 100,000 objects", write("mark.jsonl", HEADER + '{"t": 1, "mark": "m", "f": ' + '{"a": ' * 100000 + "1" + "}" * 100000 + "}\n" + ok)
    procs = ",".join('{"pid": %d, "name": "p%d"}' % (i, i) for i in range(2_000_000))
    yield "one 50 MB line of 2 M processes", write("procs.jsonl", HEADER + '{"t": 1, "gpu": 0, "procs": [' + procs + "]}\n" + ok)
    devices = ",".join('{"index": %d}' % i for i in range(100000))
    yield "header with 100,000 devices", write("devices.jsonl", '{"format": "gpu-trace", "version": 1, "devices": [' + devices + "]}\n" + ok)
    bare = '{"format": "gpu-trace", "version": 1}\n'
    yield "2,000 distinct GPUs, no device list", write("gpus.jsonl", bare + "".join('{"t": %d, "gpu": %d, "gpu_util": 50, "sm_active": 10}\n' % (i // 100, i) for i in range(2000)))
    yield "sample for an undescribed GPU 2e9", write("gpu2e9.jsonl", HEADER + '{"t": 1, "gpu": 2000000000, "gpu_util": 1}\n' + ok)
    yield "endless line (/dev/zero)", "/dev/zero"


def run(cmd, limit_s, mem_bytes):
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=limit_s, preexec_fn=limits)
        return p.returncode, time.time() - t0, p.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
    except subprocess.TimeoutExpired:
        return None, time.time() - t0, ["(hang)"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulens", default="build/debug/gpulens")
    ap.add_argument("--limit", type=float, default=20.0)
    ap.add_argument("--mem-gib", type=float, default=4.0)
    a = ap.parse_args()
    crashes = hangs = runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in cases(tmp):
            for args in (["stream", "-f", "json", "--speed", "0", "--replay", path],
                         ["diagnose", "--replay", path], ["report", path],
                         ["diagnose", "--lenient", "--replay", path]):
                code, secs, last = run([a.gpulens] + args, a.limit, int(a.mem_gib * 2**30))
                runs += 1
                if code is None:
                    hangs += 1
                    verdict = "HANG"
                elif code < 0 or code >= 128:
                    crashes += 1
                    verdict = "CRASH %s" % code
                else:
                    verdict = "exit %d" % code
                print("%-38s %-9s %-9s %5.1fs %s" % (name, args[0], "lenient" if "--lenient" in args else "", secs, verdict + "  " + last[0][:90]))
    print("total: %d runs, %d crashes, %d hangs (limit %.0f s, %.0f GiB)" % (runs, crashes, hangs, a.limit, a.mem_gib))
    return 1 if crashes or hangs else 0


if __name__ == "__main__":
    sys.exit(main())
