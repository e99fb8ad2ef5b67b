#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""gpulens_nvml_probe on an NVML that lacks functions (the test fake, which exports
only the required entry points and a few optional ones, as an old driver might):
every mode finishes with 0, prints only JSON lines, and says each NVML function it
could not time as missing instead of calling a null pointer (it used to crash).

  nvml_probe_fake.py PROBE FAKE_NVML_DIR
"""
import json
import os
import subprocess
import sys


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
    run(probe, env, "--memory-steps")
    print(f"ok: {len(timed)} calls timed, {len(missing)} missing: {', '.join(sorted(missing))}")


if __name__ == "__main__":
    main()
