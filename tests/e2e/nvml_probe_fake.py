#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gpulens_nvml_probe on an NVML that lacks functions (the test fake, which exports
only the required entry points and a few optional ones, as an old driver might):
every mode finishes with 0, prints only JSON lines, and says each NVML function it
could not time as missing instead of calling a null pointer (it used to crash).

With the source tree, also runs the GPU host's cost script for dcgm-exporter's
fields (bench/dcgm_fields/run.sh) on the fake, briefly: it must print its table.

  nvml_probe_fake.py PROBE FAKE_NVML_DIR [SOURCE_DIR]
"""
import json
import os
import subprocess
import sys
import tempfile


def run(probe, env, *args):
    p = subprocess.run([probe, *args], env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(args)} exited {p.returncode}\n{p.stderr[-2000:]}")
    lines = []
    for line in p.stdout.splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            sys.exit(f"FAIL: {' '.join(args)} printed a line that is not JSON: {line!r}")
    return lines


def bench_script(source_dir, probe, env):
    """bench/dcgm_fields/run.sh with this probe as .devbin's: a short run, its table."""
    with tempfile.TemporaryDirectory() as out:
        script_env = dict(env, GPULENS_DEVBIN=os.path.dirname(probe), OUT=out, TICKS="3",
                          ROUNDS="1")
        p = subprocess.run(["bash", os.path.join(source_dir, "bench/dcgm_fields/run.sh")],
                           env=script_env, capture_output=True, text=True, timeout=120,
                           cwd=source_dir)
        if p.returncode != 0:
            sys.exit(f"FAIL: bench/dcgm_fields/run.sh exited {p.returncode}\n{p.stderr[-2000:]}")
        for want in ("without the fields", "with them (30 s, 300 s cadences)",
                     "nvmlDeviceGetPcieReplayCounter", "x_nvlink_replay_errors: n/a"):
            if want not in p.stdout:
                sys.exit(f"FAIL: run.sh printed no {want!r}:\n{p.stdout}")
        empty = dict(script_env, GPULENS_DEVBIN=out)
        p = subprocess.run(["bash", os.path.join(source_dir, "bench/dcgm_fields/run.sh")],
                           env=empty, capture_output=True, text=True, timeout=60, cwd=source_dir)
        if p.returncode == 0 or "no " not in p.stderr:
            sys.exit(f"FAIL: run.sh without a probe: exit {p.returncode}, {p.stderr!r}")


def main():
    probe, fake_dir = sys.argv[1], sys.argv[2]
    env = dict(os.environ, LD_LIBRARY_PATH=fake_dir, GPULENS_FAKE_NVML_GPUS="2")
    costs = run(probe, env, "--call-costs", "3")
    timed = {c["call"] for c in costs if "cpu_us" in c}
    missing = {c["call"] for c in costs if c.get("missing")}
    if "nvmlDeviceGetUtilizationRates" not in timed:
        sys.exit(f"FAIL: a function the fake has was not timed: {sorted(timed)}")
    if not missing:
        sys.exit("FAIL: the fake lacks functions, yet none was said to be missing")
    if timed & missing:
        sys.exit(f"FAIL: said both timed and missing: {sorted(timed & missing)}")
    samples = run(probe, env, "--count", "2", "--interval", "0")
    if not any("gpu" in s for s in samples):
        sys.exit("FAIL: no per-GPU sample lines")
    # dcgm-exporter's fields: read unless switched off; NVLink errors absent with a
    # reason (the fake exports no NVLink state).
    if not any(s.get("x_pcie_replays") == 0 and "x_enc_util" in s for s in samples):
        sys.exit(f"FAIL: no x_pcie_replays / x_enc_util in the samples: {samples[-1]}")
    off = run(probe, env, "--count", "1", "--interval", "0", "--no-dcgm-fields")
    if any("x_enc_util" in s or "x_pcie_replays" in s for s in off):
        sys.exit("FAIL: --no-dcgm-fields still read dcgm's fields")
    header = next(s for s in samples if s.get("format") == "gpu-trace")
    reasons = header["devices"][0].get("unsupported", {})
    if "x_nvlink_replay_errors" not in reasons:
        sys.exit(f"FAIL: no reason for the absent NVLink error counters: {reasons}")
    run(probe, env, "--memory-steps")
    if len(sys.argv) > 3:
        bench_script(sys.argv[3], probe, env)
    print(f"ok: {len(timed)} calls timed, {len(missing)} missing: {', '.join(sorted(missing))}")


if __name__ == "__main__":
    main()
