# SPDX-License-Identifier: Apache-2.0
"""bench/monitor_cost/analyze.py on a synthetic run whose answer is known: a job
whose units take 2 % longer while monitor `slow` is resumed, with noise and a
slow drift that the pairing must cancel. The analysis must find +2 % for `slow`
(its interval excluding 0), an interval containing 0 for the A/A control and for
a monitor that costs nothing, and the same table again from its --per-slot file."""
import array
import os
import random
import subprocess
import sys
import tempfile
import unittest

ANALYZE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench", "monitor_cost",
                       "analyze.py")


def synthetic_run(directory, slot_ns=250_000_000, rounds=150):
    rng = random.Random(7)
    slots, units, t, pair = [], array.array("q"), 0, 0
    for _ in range(rounds):
        names = ["none", "free", "slow"]
        rng.shuffle(names)
        for name in names:
            for state in rng.sample(["on", "off"], 2):
                slots.append(f"{pair}\t{name}\t{state}\t{t}\t{t + slot_ns}\n")
                factor = 1.02 if (name, state) == ("slow", "on") else 1.0
                x = t
                while x < t + slot_ns:
                    drift = 1 + 0.2 * ((x / 1e9) % 30) / 30  # 20 % over 30 s, then back
                    d = int(180_000 * factor * drift * rng.lognormvariate(0, 0.05))
                    units.extend([x, x + d])
                    x += d + 2_000
                t += slot_ns
            pair += 1
    with open(os.path.join(directory, "slots.tsv"), "w") as f:
        f.writelines(slots)
    with open(os.path.join(directory, "job.bin"), "wb") as f:
        units.tofile(f)


def rows(output):
    """(monitor, metric) -> (cost, half-width)"""
    out = {}
    for line in output.splitlines():
        f = line.split()
        if len(f) >= 6 and f[3] in ("p50", "p99", "mean"):
            out[(f[1], f[3])] = (float(f[4]), float(f[5]))
    return out


class MonitorCostAnalysis(unittest.TestCase):
    def test_recovers_a_known_cost_and_reads_its_summary(self):
        with tempfile.TemporaryDirectory() as d:
            synthetic_run(d)
            per_slot = os.path.join(d, "per-slot.tsv")
            run = [sys.executable, ANALYZE, "--workload", "batch1g"]
            first = subprocess.run(run + ["--job", os.path.join(d, "job.bin"), "--slots",
                                          os.path.join(d, "slots.tsv"), "--per-slot", per_slot],
                                   capture_output=True, text=True, check=True).stdout
            table = rows(first)
            for metric in ("p50", "p99"):
                cost, half = table[("slow", metric)]
                self.assertLess(abs(cost - 2.0), max(half, 0.3), first)
                self.assertGreater(cost - half, 0, first)
                for name in ("none", "free"):
                    cost, half = table[(name, metric)]
                    self.assertLess(abs(cost), half, first)
            again = subprocess.run(run + ["--summary", per_slot], capture_output=True, text=True,
                                   check=True).stdout
            self.assertEqual(rows(again), table)

    def test_refuses_without_input(self):
        r = subprocess.run([sys.executable, ANALYZE, "--workload", "gemm"], capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--summary", r.stderr)


if __name__ == "__main__":
    unittest.main()
