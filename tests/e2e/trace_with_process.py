# SPDX-License-Identifier: Apache-2.0
"""Writes the first SECONDS of a recording with one more process listed on GPU 0,
so that an agent replaying it takes that pid as a process on a GPU (the kernel
summaries of tests/e2e/kernel_sender.py come from it).

  trace_with_process.py IN OUT PID SECONDS
"""
import json
import sys


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, dst, pid, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    sender = {"pid": pid, "name": "python", "used_mib": 900}
    t0 = None
    with open(src) as lines, open(dst, "w") as out:
        for line in lines:
            line = line.rstrip("\n")
            d = json.loads(line)
            t = d.get("t")
            if t is not None:
                t0 = t if t0 is None else t0
                if t - t0 > seconds:
                    break
            if d.get("gpu") == 0 and "procs" in d:
                d["procs"] = d["procs"] + [sender]
                line = json.dumps(d)
            out.write(line + "\n")


if __name__ == "__main__":
    main()
