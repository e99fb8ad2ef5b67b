# SPDX-License-Identifier: Apache-2.0
"""Checks, through Prometheus' HTTP API, that the series scraped from the agent
hold the replayed trace's last values, under gpulens' names or dcgm-exporter's."""
import json
import math
import sys
import urllib.parse
import urllib.request

prom, agent, mode, expected_path = sys.argv[1:5]
expected = json.load(open(expected_path))
header, last = expected["header"], expected["last"]
host = header.get("host", "")
devices = {str(d["index"]): d for d in header["devices"]}
problems = []


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def query(expr):
    body = get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if body.get("status") != "success":
        raise SystemExit(f"query {expr} failed: {body}")
    return body["data"]["result"]


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def expect(metric, key, scale, labels_of):
    result = query(metric)
    by_gpu = {r["metric"].get("gpu"): r for r in result}
    for gpu, sample in last.items():
        if key not in sample:
            continue
        want = sample[key] * scale
        r = by_gpu.get(gpu)
        if r is None:
            problems.append(f"{metric}: no series for gpu {gpu}")
            continue
        got = float(r["value"][1])
        if not close(got, want):
            problems.append(f"{metric}{{gpu={gpu}}} = {got}, the trace says {want}")
        for name, value in labels_of(gpu).items():
            if r["metric"].get(name) != value:
                problems.append(f"{metric}{{gpu={gpu}}}: label {name}={r['metric'].get(name)!r}, want {value!r}")


def native_labels(gpu):
    d = devices[gpu]
    return {"uuid": d.get("uuid", ""), "model": d.get("name", ""), "hostname": host, "job": "gpulens"}


def dcgm_labels(gpu):
    d = devices[gpu]
    return {"UUID": d.get("uuid", ""), "modelName": d.get("name", ""), "Hostname": host,
            "device": f"nvidia{gpu}"}


if mode == "native":
    for metric, key, scale in [
        ("gpulens_gpu_utilization_ratio", "gpu_util", 0.01),
        ("gpulens_sm_active_ratio", "sm_active", 0.01),
        ("gpulens_sm_occupancy_ratio", "sm_occupancy", 0.01),
        ("gpulens_tensor_active_ratio", "tensor_active", 0.01),
        ("gpulens_dram_active_ratio", "dram_active", 0.01),
        ("gpulens_power_watts", "power_w", 1),
        ("gpulens_energy_joules_total", "energy_mj", 0.001),
        ("gpulens_temperature_celsius", "temp_c", 1),
        ("gpulens_sm_clock_hertz", "sm_clock_mhz", 1e6),
        ("gpulens_memory_used_bytes", "mem_used_mib", 1048576),
    ]:
        expect(metric, key, scale, native_labels)
    # The diagnosis state: exactly one state per GPU, the one the API reports.
    latest = get(f"{agent}/api/v1/latest")
    for g in latest["gpus"]:
        state = g["state"]["id"]
        r = query(f'gpulens_diagnosis_state{{gpu="{g["gpu"]}",state="{state}"}}')
        if not r or float(r[0]["value"][1]) != 1:
            problems.append(f"gpulens_diagnosis_state for gpu {g['gpu']} is not 1 for {state}")
        ones = query(f'sum(gpulens_diagnosis_state{{gpu="{g["gpu"]}"}})')
        if not ones or float(ones[0]["value"][1]) != 1:
            problems.append(f"gpu {g['gpu']}: more than one state is 1")
        if state == "unknown":
            problems.append(f"gpu {g['gpu']}: no diagnosis on a trace with every metric")
    if not query("gpulens_build_info"):
        problems.append("gpulens_build_info missing")
else:
    for metric, key, scale in [
        ("DCGM_FI_DEV_GPU_UTIL", "gpu_util", 1),
        ("DCGM_FI_PROF_SM_ACTIVE", "sm_active", 0.01),
        ("DCGM_FI_PROF_SM_OCCUPANCY", "sm_occupancy", 0.01),
        ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "tensor_active", 0.01),
        ("DCGM_FI_PROF_DRAM_ACTIVE", "dram_active", 0.01),
        ("DCGM_FI_DEV_FB_USED", "mem_used_mib", 1),
        ("DCGM_FI_DEV_POWER_USAGE", "power_w", 1),
        ("DCGM_FI_DEV_GPU_TEMP", "temp_c", 1),
        ("DCGM_FI_DEV_SM_CLOCK", "sm_clock_mhz", 1),
        ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "energy_mj", 1),
        ("DCGM_FI_PROF_NVLINK_TX_BYTES", "nvlink_tx_mibs", 1048576),
    ]:
        expect(metric, key, scale, dcgm_labels)
    # A query from dcgm-exporter's Grafana dashboard works unchanged.
    r = query('avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL{Hostname=~".+"})')
    if len(r) != 1:
        problems.append(f"the dashboard query returned {r}")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"prometheus e2e ({mode}): {len(last)} GPU(s) hold the trace's values")
