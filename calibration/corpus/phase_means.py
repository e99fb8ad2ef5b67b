#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Mean of each counter over each marked phase of corpus recordings, GPU 0:
which pipes a workload moves (e.g. which GPM tensor metric an fp8, int8 or
TF32 GEMM raises), and the link and DRAM rates it reaches.

    calibration/corpus/phase_means.py RECORDING... [--keys gpu_util,sm_active,...]
"""

import argparse
import json

DEFAULT_KEYS = ("gpu_util,sm_active,sm_occupancy,tensor_active,hmma_active,imma_active,"
                "dfma_active,fp16_active,fp32_active,fp64_active,int_active,dram_active,"
                "pcie_tx_mibs,pcie_rx_mibs,host_cpu_pct")


def phases(path):
    marks, samples = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if "mark" in rec:
                marks.append(rec)
            elif rec.get("gpu") == 0 and "t" in rec:
                samples.append(rec)
    opened = {}
    for m in marks:
        name = m["mark"]
        if name.endswith(":start"):
            opened[name[:-6]] = m["t"]
        elif name.endswith(":end") and name[:-4] in opened:
            start = opened.pop(name[:-4])
            yield name[:-4], [s for s in samples if start <= s["t"] <= m["t"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("recordings", nargs="+")
    ap.add_argument("--keys", default=DEFAULT_KEYS)
    args = ap.parse_args()
    keys = args.keys.split(",")
    print("phase".ljust(28) + "".join(k.replace("_active", "")[:9].rjust(10) for k in keys))
    for path in args.recordings:
        for name, rows in phases(path):
            cells = []
            for k in keys:
                vals = [r[k] for r in rows if isinstance(r.get(k), (int, float))]
                cells.append(f"{sum(vals) / len(vals):.1f}" if vals else "-")
            print(name.ljust(28) + "".join(c.rjust(10) for c in cells))


if __name__ == "__main__":
    main()
