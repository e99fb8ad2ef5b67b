#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The real gpulens on GPUs without GPM (the fake libnvidia-ml) beside a DCGM host
engine (the fake libdcgm, both found through LD_LIBRARY_PATH, as the real libraries
would be): `record` fills SM, tensor, DRAM, pipe, PCIe and NVLink activity from DCGM,
in gpulens's units, on the GPU DCGM knows by the same UUID, and marks every such
sample; `report` then measures SM activity; `--dcgm off` and a node without libdcgm
record without it and say why (docs/dcgm.md).

  dcgm_fake.py GPULENS FAKE_NVML_DIR FAKE_DCGM_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

UUID = "GPU-fa4e0000-0000-0000-0000-00000000000{}"  # tests/fakes/nvml_fake_lib.cpp


def fail(message):
    sys.exit(f"FAIL: {message}")


def record(gpulens, libs, out, *extra, **env_extra):
    env = dict(os.environ, LD_LIBRARY_PATH=":".join(libs), GPULENS_FAKE_NVML_GPUS="2",
               **env_extra)
    stats = out + ".stats.json"
    p = subprocess.run([gpulens, "record", "-q", "-o", out, "--count", "3", "--interval", "0.2",
                        "--no-procs", "--stats", stats, *extra],
                       env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"record {' '.join(extra)} exited {p.returncode}: {p.stderr[-2000:]}")
    with open(out) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    with open(stats) as f:
        return lines[0], [l for l in lines[1:] if "gpu" in l], json.load(f)


def main():
    gpulens, nvml_dir, dcgm_dir = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="gpulens-dcgm-")
    # DCGM's ids run otherwise than NVML's indices, with a GPU this node does not have.
    engine = {"GPULENS_FAKE_DCGM_GPUS": ",".join(["GPU-elsewhere", UUID.format(1), UUID.format(0)]),
              "GPULENS_FAKE_DCGM_RATIO": "0.6"}

    trace = os.path.join(work, "dcgm.jsonl")
    header, samples, stats = record(gpulens, [nvml_dir, dcgm_dir], trace, **engine)
    for d in header["devices"]:
        if d.get("x_prof_source") != "dcgm" or d.get("x_dcgm") != "watching":
            fail(f"device {d['index']}: header says {d.get('x_prof_source')}, {d.get('x_dcgm')}")
        if "sm_active" in d.get("unsupported", {}):
            fail(f"device {d['index']} still lists sm_active as unsupported")
        if "hmma_active" not in d.get("unsupported", {}):
            fail("hmma_active (GPM only) is no longer said unsupported")
    if len(samples) != 6:
        fail(f"{len(samples)} samples, expected 6")
    for s in samples:
        want = {"sm_active": 60, "sm_occupancy": 60, "tensor_active": 60, "dram_active": 60,
                "fp64_active": 60, "fp32_active": 60, "fp16_active": 60,
                "pcie_tx_mibs": 614.4, "pcie_rx_mibs": 614.4,
                "nvlink_tx_mibs": 614.4, "nvlink_rx_mibs": 614.4}
        got = {k: s.get(k) for k in want}
        if got != want or s.get("x_prof_source") != "dcgm":
            fail(f"sample of GPU {s['gpu']}: {got}, x_prof_source={s.get('x_prof_source')}")
        if "hmma_active" in s:
            fail("a GPM-only metric was invented")
    profiler = stats.get("profiler", {})
    if profiler.get("state") != "watching" or profiler.get("gpus") != [0, 1]:
        fail(f"record --stats says {profiler}")

    report = subprocess.run([gpulens, "report", trace], capture_output=True, text=True,
                            timeout=120)
    if report.returncode != 0 or "SM act" not in report.stdout:
        fail(f"report: {report.returncode} {report.stdout[-1500:]} {report.stderr[-500:]}")
    if "SM activity not available" in report.stdout or "not measured" in report.stdout:
        fail(f"report still misses SM activity:\n{report.stdout}")

    off = os.path.join(work, "off.jsonl")
    header, samples, stats = record(gpulens, [nvml_dir, dcgm_dir], off, "--dcgm", "off", **engine)
    if any("sm_active" in s or "x_prof_source" in s for s in samples) or "profiler" in stats:
        fail("--dcgm off still read DCGM")
    if any("x_dcgm" in d for d in header["devices"]):
        fail("--dcgm off still describes DCGM in the header")

    missing = os.path.join(work, "missing.jsonl")
    header, samples, stats = record(gpulens, [nvml_dir], missing, **engine)
    reason = header["devices"][0]["unsupported"].get("sm_active", "")
    if "DCGM: not installed" not in reason or any("sm_active" in s for s in samples):
        fail(f"without libdcgm: reason {reason!r}")
    if stats.get("profiler", {}).get("state") != "unavailable":
        fail(f"without libdcgm, record --stats says {stats.get('profiler')}")

    bad = subprocess.run([gpulens, "record", "-o", os.path.join(work, "bad.jsonl"),
                          "--dcgm", "a host"], capture_output=True, text=True, timeout=60)
    if bad.returncode == 0 or "--dcgm" not in bad.stderr:
        fail(f"--dcgm 'a host' was accepted: {bad.returncode} {bad.stderr}")
    print("dcgm_fake: ok")


if __name__ == "__main__":
    main()
