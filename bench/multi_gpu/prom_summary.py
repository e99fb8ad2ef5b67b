#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How a real Prometheus' scrapes of gpulens went over [start, end], from its raw
samples (not from rate() or other functions that smooth gaps away): scrapes against
the seconds elapsed, the longest gap between two, scrape duration p50/p99/max,
series per scrape, series per GPU in a /metrics snapshot, and each GPU's peak NVLink
traffic (an NCCL job's all-reduce must show on every GPU).

    prom_summary.py PROM_URL START END METRICS_SNAPSHOT
"""
import collections
import json
import re
import sys
import urllib.parse
import urllib.request


def raw(url, expr, start, end):
    """[(t, value)] of every series of expr between start and end, raw samples."""
    window = max(1, int(end - start) + 1)
    q = urllib.parse.urlencode({"query": f"{expr}[{window}s]", "time": f"{end:.3f}"})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=30) as r:
        body = json.load(r)
    out = []
    for series in body["data"]["result"]:
        pts = [(float(t), float(v)) for t, v in series["values"] if start <= float(t) <= end]
        out.append((series["metric"], pts))
    return out


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def per_gpu_series(snapshot):
    counts = collections.Counter()
    for line in open(snapshot, encoding="utf-8"):
        m = re.search(r'[{,]gpu="(\d+)"', line)
        if m and not line.startswith("#"):
            counts[int(m.group(1))] += 1
    return counts


def main(url, start, end, snapshot):
    start, end = float(start), float(end)
    ups = raw(url, 'up{job="gpulens"}', start, end)
    times = sorted(t for _, pts in ups for t, _ in pts)
    failed = sum(1 for _, pts in ups for _, v in pts if v != 1)
    gaps = [b - a for a, b in zip(times, times[1:])]
    seconds = end - start
    print(f"window {seconds:.0f} s; scrapes {len(times)} (1 s interval: {seconds:.0f} expected), "
          f"failed {failed}, longest gap {max(gaps, default=float('nan')):.2f} s, "
          f"gaps over 1.5 s: {sum(1 for g in gaps if g > 1.5)}")
    durations = [v for _, pts in raw(url, 'scrape_duration_seconds{job="gpulens"}', start, end)
                 for _, v in pts]
    print(f"scrape duration ms: p50 {1000 * quantile(durations, 0.5):.2f}, "
          f"p99 {1000 * quantile(durations, 0.99):.2f}, max {1000 * max(durations, default=0):.2f}")
    samples = [v for _, pts in raw(url, 'scrape_samples_scraped{job="gpulens"}', start, end)
               for _, v in pts]
    if samples:
        print(f"series per scrape: min {min(samples):.0f}, max {max(samples):.0f}")
    counts = per_gpu_series(snapshot)
    print("series per GPU in /metrics mid-job: " +
          ", ".join(f"GPU {g}: {n}" for g, n in sorted(counts.items())))
    peaks = collections.defaultdict(float)
    for metric, pts in raw(url, 'gpulens_nvlink_throughput_bytes_per_second{direction="tx"}',
                           start, end):
        peaks[metric.get("gpu", "?")] = max([v for _, v in pts] + [peaks[metric.get("gpu", "?")]])
    print("NVLink tx peak GB/s per GPU: " +
          ", ".join(f"GPU {g}: {v / 1e9:.1f}" for g, v in sorted(peaks.items())))
    ok = len(times) >= 0.98 * seconds and failed == 0 and max(gaps, default=99) <= 1.5
    print("verdict:", "no gaps" if ok else "GAPS OR FAILED SCRAPES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
