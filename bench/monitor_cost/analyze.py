# SPDX-License-Identifier: Apache-2.0
"""Turns a job's unit timings and alternate.py's slots into the monitors' costs.

For each slot: the units of work that started at least --guard ms after it began
(a paused monitor finishes the driver call it was in) and ended inside it. Per
slot the job's speed is its p50 and p99 unit time (batch1, batch1g: request latency) or
its mean unit time (gemm: the inverse of throughput). For each pair, the cost is
the resumed slot's figure over the paused one's, minus 1, in percent (positive:
the monitor made the job slower). Reported per monitor: the mean over pairs and
its 95 % interval (1.96 standard errors; every monitor here has far more than
30 pairs), the spread of single pairs, and the units per slot.

  analyze.py --workload batch1 --job batch1.bin --slots batch1-slots.tsv \\
      [--ticks record-100ms=1234 ...] [--per-slot batch1-per-slot.tsv]
  analyze.py --workload batch1 --summary batch1-per-slot.tsv   (the same table again)
"""
import argparse
import array
import math
import statistics
import sys
from collections import defaultdict


def read_units(path):
    spans = array.array("q")
    with open(path, "rb") as f:
        spans.frombytes(f.read())
    if sys.byteorder != "little":
        spans.byteswap()
    return [(spans[i], spans[i + 1]) for i in range(0, len(spans) - 1, 2)]


def read_slots(path):
    slots = []
    with open(path) as f:
        for line in f:
            pair, name, state, t0, t1 = line.split("\t")
            slots.append((int(pair), name, state, int(t0), int(t1)))
    return slots


def quantile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def slot_figures(units, slots, guard_ns):
    """Per slot (same order): the sorted durations of the units inside it."""
    figures = []
    i = 0
    for _, _, _, t0, t1 in slots:
        while i < len(units) and units[i][0] < t0 + guard_ns:
            i += 1
        durations = []
        j = i
        while j < len(units) and units[j][1] <= t1:
            durations.append(units[j][1] - units[j][0])
            j += 1
        figures.append(sorted(durations))
    return figures


def interval(costs):
    mean = statistics.fmean(costs)
    half = 1.96 * statistics.stdev(costs) / math.sqrt(len(costs)) if len(costs) > 1 else float("inf")
    return mean, half


def summarize(durations):
    return {"units": len(durations), "p50": quantile(durations, 0.5), "p99": quantile(durations, 0.99),
            "mean": statistics.fmean(durations)} if durations else {"units": 0}


SUMMARY_FIELDS = ["pair", "monitor", "state", "start_ns", "end_ns", "units", "p50", "p99", "mean"]


def read_summary(path):
    """A --per-slot file back: the slots and each one's figures."""
    slots, figures = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            row = dict(zip(SUMMARY_FIELDS, line.rstrip("\n").split("\t")))
            slots.append((int(row["pair"]), row["monitor"], row["state"], int(row["start_ns"]),
                          int(row["end_ns"])))
            figures.append({"units": int(row["units"])} | {k: float(row[k]) for k in ("p50", "p99", "mean")
                                                          if row.get(k)})
    return slots, figures


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", required=True)
    p.add_argument("--job", help="the job's unit timings (job.py --out)")
    p.add_argument("--slots", help="alternate.py's slots")
    p.add_argument("--summary", help="read a --per-slot file instead of --job and --slots")
    p.add_argument("--per-slot", help="write each slot's figures here (TSV; small enough to keep)")
    p.add_argument("--guard", type=float, default=5, help="ms skipped at the start of each slot")
    p.add_argument("--min-units", type=int, default=5, help="a slot with fewer units drops its pair")
    p.add_argument("--ticks", action="append", default=[], metavar="NAME=COUNT",
                   help="ticks a monitor took in the whole run, to report ticks per resumed second "
                   "(an upper bound: the ticks before the first pause count too)")
    p.add_argument("--header", action="store_true")
    a = p.parse_args()

    if a.summary:
        slots, figs = read_summary(a.summary)
    elif a.job and a.slots:
        slots = read_slots(a.slots)
        figs = [summarize(d) for d in slot_figures(read_units(a.job), slots, int(a.guard * 1e6))]
    else:
        p.error("give --job and --slots, or --summary")
    if a.per_slot:
        with open(a.per_slot, "w") as out:
            out.write("# " + "\t".join(SUMMARY_FIELDS) + " (unit times in ns)\n")
            for slot, fig in zip(slots, figs):
                values = [str(v) for v in slot] + [str(fig["units"])]
                values += [f"{fig[k]:.0f}" if k in fig else "" for k in ("p50", "p99", "mean")]
                out.write("\t".join(values) + "\n")
    metrics = ["mean"] if a.workload == "gemm" else ["p50", "p99"]

    pairs = defaultdict(dict)  # (monitor, pair) -> state -> figures
    slot_s = defaultdict(float)
    for (pair, name, state, t0, t1), fig in zip(slots, figs):
        pairs[(name, pair)][state] = fig
        if state == "on":
            slot_s[name] += (t1 - t0) / 1e9
    ticks = dict(spec.split("=", 1) for spec in a.ticks)

    if a.header:
        print(f"{'workload':8} {'monitor':14} {'pairs':>5} {'metric':>6} {'cost %':>8} {'95% +-':>7} "
              f"{'pair sd':>7} {'min..max %':>17} {'unit ms':>8} {'units/slot':>10} {'ticks/s on':>10}")
    for name in sorted({n for n, _ in pairs}, key=lambda n: (n != "none", n)):
        both = [v for (n, _), v in sorted(pairs.items()) if n == name and len(v) == 2
                and min(v["on"]["units"], v["off"]["units"]) >= a.min_units]
        if len(both) < 2:
            print(f"{a.workload:8} {name:14} too few pairs with {a.min_units}+ units per slot")
            continue
        per_slot = statistics.median(v["on"]["units"] + v["off"]["units"] for v in both) / 2
        tick_rate = f"{int(ticks[name]) / slot_s[name]:.2f}" if name in ticks else "-"
        for metric in metrics:
            costs = [(v["on"][metric] / v["off"][metric] - 1) * 100 for v in both]
            mean, half = interval(costs)
            unit_ms = statistics.median(v["off"][metric] for v in both) / 1e6
            print(f"{a.workload:8} {name:14} {len(both):5d} {metric:>6} {mean:+8.3f} {half:7.3f} "
                  f"{statistics.stdev(costs):7.2f} {min(costs):+8.1f}..{max(costs):+7.1f} "
                  f"{unit_ms:8.3f} {per_slot:10.0f} {tick_rate:>10}")


if __name__ == "__main__":
    main()
