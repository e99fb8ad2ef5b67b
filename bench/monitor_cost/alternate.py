# SPDX-License-Identifier: Apache-2.0
"""Measures what monitors cost a running job by pausing and resuming them.

Every monitor starts once, in its own process group, and initialises while the
job warms up (its start-up is not what a long-running monitor costs). Then all
are paused (SIGSTOP) and time is cut into slots of --slot seconds, taken in
pairs: for each monitor in a shuffled order, one slot with that monitor resumed
(SIGCONT) and one with every monitor paused, in a random order within the pair.
The job's speed in the two slots of a pair is compared: neighbouring slots share
whatever drifts slowly (clocks, temperature, other tenants), so the difference
is the monitor's. A monitor named `none` is resumed by nobody: its pairs are an
A/A control whose interval shows the method's own noise and must contain 0.

A paused monitor misses ticks; on resuming, the gpulens sampler takes the tick it
is late for at once and then keeps its grid, so a monitor with a tick longer
than the slot works more often while resumed than it would running freely. Its
measured cost is then an upper bound; analyze.py reports ticks per resumed
second where the monitor's own output shows them.

Writes the slots as TSV lines: pair monitor state start_ns end_ns (CLOCK_MONOTONIC).

  alternate.py --slot 0.5 --seconds 300 --slots slots.tsv \\
      --monitor none= --monitor 'record-100ms=gpulens record -q -o t.jsonl --interval 0.1' \\
      --job-ready ready.flag -- python3 job.py --workload batch1 --out job.bin --ready ready.flag
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import time


def sleep_until(t_ns):
    while True:
        left = t_ns - time.monotonic_ns()
        if left <= 0:
            return
        time.sleep(min(left / 1e9, 0.05))


def processes():
    """(pid, ppid, pgid, CPU ticks) of every process, from /proc/PID/stat. The
    ticks include the children it has waited for (cutime, cstime), so the work
    of short-lived helpers (a scraper's `cat`) counts too."""
    table = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            table.append((int(entry), int(fields[1]), int(fields[2]),
                          sum(int(x) for x in fields[11:15])))
    return table


def descendants_outside_group(root):
    """Processes under `root` that left its process group: `script` starts its
    child in a session of its own, which a signal to the group would miss."""
    children = {}
    for pid, ppid, pgid, _ in processes():
        children.setdefault(ppid, []).append((pid, pgid))
    found, todo = [], [root]
    while todo:
        for pid, pgid in children.get(todo.pop(), []):
            todo.append(pid)
            if pgid != root:
                found.append(pid)
    return found


def cpu_seconds(root, extra):
    """CPU time so far of the monitor's processes: its group and `extra`."""
    ticks = sum(t for pid, _, pgid, t in processes() if pgid == root or pid in extra)
    return ticks / os.sysconf("SC_CLK_TCK")


def group_signal(proc, sig, extra=()):
    for target in [-proc.pid, *extra]:
        try:
            os.kill(target, sig)
        except ProcessLookupError:
            pass


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--monitor", action="append", default=[], metavar="NAME=COMMAND",
                   help="a monitor and its shell command; an empty command is the A/A control")
    p.add_argument("--slot", type=float, default=0.5, help="seconds per slot")
    p.add_argument("--seconds", type=float, required=True, help="seconds of alternation")
    p.add_argument("--settle", type=float, default=5, help="seconds the monitors run before the first pause")
    p.add_argument("--slots", required=True, help="TSV file of the slots")
    p.add_argument("--job-ready", required=True, help="file the job creates once warmed up")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cpu", help="file for each monitor's CPU seconds while resumed")
    p.add_argument("job", nargs=argparse.REMAINDER, help="-- then the job's command")
    a = p.parse_args()
    job_cmd = a.job[1:] if a.job[:1] == ["--"] else a.job
    if not job_cmd or not a.monitor:
        p.error("give at least one --monitor and the job's command after --")
    rng = random.Random(a.seed)

    if os.path.exists(a.job_ready):
        os.unlink(a.job_ready)
    job = subprocess.Popen(job_cmd)
    while not os.path.exists(a.job_ready):
        if job.poll() is not None:
            sys.exit(f"alternate.py: the job exited ({job.returncode}) before it was ready")
        time.sleep(0.1)

    monitors, extra = {}, {}
    for spec in a.monitor:
        name, _, cmd = spec.partition("=")
        monitors[name] = (subprocess.Popen(["bash", "-c", cmd], start_new_session=True,
                                           stdin=subprocess.DEVNULL) if cmd else None)
    try:
        time.sleep(a.settle)
        for name, proc in monitors.items():
            if proc is not None and proc.poll() is not None:
                sys.exit(f"alternate.py: monitor {name} exited ({proc.returncode}) before the run")
            if proc is not None:
                extra[name] = descendants_outside_group(proc.pid)
                group_signal(proc, signal.SIGSTOP, extra[name])
        time.sleep(1)
        cpu_before = {name: cpu_seconds(proc.pid, extra[name])
                      for name, proc in monitors.items() if proc is not None}

        slot_ns = int(a.slot * 1e9)
        t = time.monotonic_ns()
        end = t + int(a.seconds * 1e9)
        pair = 0
        names = list(monitors)
        with open(a.slots, "w") as out:
            while t < end:
                rng.shuffle(names)
                for name in names:
                    proc = monitors[name]
                    for state in rng.sample(["on", "off"], 2):
                        if state == "on" and proc is not None:
                            group_signal(proc, signal.SIGCONT, extra[name])
                        sleep_until(t + slot_ns)
                        if state == "on" and proc is not None:
                            group_signal(proc, signal.SIGSTOP, extra[name])
                        out.write(f"{pair}\t{name}\t{state}\t{t}\t{t + slot_ns}\n")
                        t += slot_ns
                    pair += 1
        print(f"alternate.py: {pair} pairs of {a.slot} s slots", file=sys.stderr)
        if a.cpu:
            with open(a.cpu, "w") as out:
                for name, proc in monitors.items():
                    if proc is not None:
                        used = cpu_seconds(proc.pid, extra[name]) - cpu_before[name]
                        out.write(f"{name}\t{used:.3f}\t{pair / len(monitors) * a.slot:.1f}\n")
    finally:
        for name, proc in monitors.items():
            if proc is not None:
                group_signal(proc, signal.SIGCONT, extra.get(name, ()))
                group_signal(proc, signal.SIGTERM, extra.get(name, ()))
        for name, proc in monitors.items():
            if proc is not None:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
                # Whatever outlived its shell (script waits on a pty nobody reads) goes too.
                group_signal(proc, signal.SIGKILL, extra.get(name, ()))
        job.send_signal(signal.SIGUSR1)
        job.wait()
    if job.returncode != 0:
        sys.exit(f"alternate.py: the job exited with {job.returncode}")


if __name__ == "__main__":
    main()
