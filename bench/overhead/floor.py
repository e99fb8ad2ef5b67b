# SPDX-License-Identifier: Apache-2.0
"""The floor under gpulens' cost per GPU per tick: what the NVML calls of one tick
cost by themselves (gpulens_nvml_probe's JSON lines), shared by summarize.py and
bench/multi_gpu/cost_table.py so that both tables hold gpulens to the same floor.
"""
import json
import pathlib

# Calls made on every tick; clocks are read twice (SM, memory). Energy, ECC and
# per-process calls are made every few minutes or seconds, so they are left out.
CLASSIC = ["nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo_v2",
           "nvmlDeviceGetPowerUsage", "nvmlDeviceGetTemperature",
           "nvmlDeviceGetFieldValues(MEMORY_TEMP)", "nvmlDeviceGetCurrentClocksEventReasons",
           "nvmlDeviceGetPerformanceState", "nvmlEventSetWait_v2(timeout 0)"]
TWICE = ["nvmlDeviceGetClockInfo(SM)"]
FRESH = "nvmlGpmSampleGet+MetricsGet(15), fresh 100 ms apart"


# Counters read every few seconds or minutes (gpulens' "slow_counters", timed apart):
# (call as --call-costs names it, calls per read, seconds between reads as in
# NvmlOptions). The NVLink pass is one call per active link and counter; the probe
# times a whole pass on GPU 0 under a name that says how many links it had.
SLOW = [("nvmlDeviceGetTotalEnergyConsumption", 1, 300),
        ("nvmlDeviceGetTotalEccErrors", 2, 10),
        ("nvmlDeviceGetPcieReplayCounter", 1, 30)]
NVLINK_PASS = "active links x 4 counters)"
NVLINK_PASS_EVERY_S = 300


def json_lines(path):
    path = pathlib.Path(path)
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def call_costs(path):
    """{call: {"cpu_us", ...}} from --call-costs; calls this NVML lacks are left out."""
    return {c["call"]: c for c in json_lines(path) if "call" in c and "cpu_us" in c}


def fanout(path):
    """{"alone"|"serial"|"parallel": {...}} from --gpm-fanout."""
    return {f["gpm_fanout"]: f for f in json_lines(path) if "gpm_fanout" in f}


def classic_ms(calls):
    return (sum(calls[n]["cpu_us"] for n in CLASSIC if n in calls) +
            sum(2 * calls[n]["cpu_us"] for n in TWICE if n in calls)) / 1000


def gpm_ms(calls, ways):
    """The GPM pair's floor per GPU: the cheaper of reading the GPUs in turn and at
    once (the probe's fan-out on the same GPUs); a single GPU's "alone"; without a
    fan-out, the tight-loop figure. Returns (ms, how)."""
    measured = {w: ways[w]["cpu_us_per_gpu"] / 1000 for w in ("serial", "parallel", "alone") if w in ways}
    several = {w: v for w, v in measured.items() if w != "alone"}
    if several:
        way = min(several, key=several.get)
        return several[way], {"serial": "in turn", "parallel": "at once"}[way]
    if "alone" in measured:
        return measured["alone"], "alone"
    if FRESH in calls:
        return calls[FRESH]["cpu_us"] / 1000, "tight loop"
    return sum(calls[n]["cpu_us"] for n in ["nvmlGpmSampleGet", "nvmlGpmMetricsGet(15 metrics)"]
               if n in calls) / 1000, "tight loop"


def slow_ms(calls, wall_s, ticks):
    """What the slow counters' reads cost by themselves in a run of wall_s seconds and
    `ticks` ticks, per tick: each is read at the start and then once per its period,
    as gpulens reads them. A short run pays the start's reads over few ticks."""
    if ticks <= 0:
        return 0.0
    total_us = 0.0
    for name, per_read, every_s in SLOW:
        if name in calls:
            total_us += calls[name]["cpu_us"] * per_read * (1 + int(wall_s // every_s))
    nvlink = [c for n, c in calls.items() if n.endswith(NVLINK_PASS)]
    if nvlink:
        total_us += nvlink[0]["cpu_us"] * (1 + int(wall_s // NVLINK_PASS_EVERY_S))
    return total_us / 1000 / ticks
