# SPDX-License-Identifier: Apache-2.0
"""Reading the slot lines that pc_sampling.cu, launch_cost.cu and torch_launches.py
print, one process after another into one file: a process's slots run 1, 2, ..., so
a slot number that does not grow starts the next process."""
import json
import statistics


def read(path):
    """(processes, others): each process as (mode, threads, median us_per_launch of
    its slots), in file order, and every other JSON line of the file."""
    processes, others, slots = [], [], []

    def close():
        if slots:
            processes.append((slots[0]["mode"], slots[0]["threads"],
                              statistics.median(s["us_per_launch"] for s in slots)))
            slots.clear()

    for line in open(path, encoding="utf-8"):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if "us_per_launch" in j and "slot" in j:
            if slots and j["slot"] <= slots[-1]["slot"]:
                close()
            slots.append(j)
        else:
            close()
            others.append(j)
    close()
    return processes, others
