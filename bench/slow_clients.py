#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Scrape latency of `gpulens serve` while slow and idle clients hold connections.

Starts the agent on a recording (no history), opens SLOW connections that send a
request head one byte every --drip seconds and never finish it (slowloris), and
IDLE connections that send nothing, then scrapes /metrics --scrapes times, one
after another, each with a 30 s limit. Prints scrapes answered, p50, p99 and max
latency in ms. Run it against two binaries to compare (docs/reliability.md):

  bench/slow_clients.py --gpulens build/debug/gpulens --slow 200 --idle 16

--nofile SOFT starts the agent with that soft open-files limit (the hard one
stays), as most systems start a service: `--slow 0 --idle 2000 --nofile 1024`
is the descriptor row (an agent that raises its soft limit is not bound by it);
add --nofile-hard 1024 to hold it there (then the oldest waiting connection
makes room for each new one).
"""
import argparse
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

from scrape_bench import free_port, get_metrics, latency_summary, stop_agent, wait_up


def scrape(port, limit_s):
    t0 = time.perf_counter()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=limit_s)
        ok = get_metrics(s, limit_s).startswith(b"HTTP/1.1 200")
    except OSError:
        ok = False
    return ok, (time.perf_counter() - t0) * 1000.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulens", default="build/debug/gpulens")
    ap.add_argument("--trace", default="examples/calibration-h100.trace.jsonl")
    ap.add_argument("--slow", type=int, default=200)
    ap.add_argument("--idle", type=int, default=16)
    ap.add_argument("--drip", type=float, default=1.0)
    ap.add_argument("--scrapes", type=int, default=40)
    ap.add_argument("--limit", type=float, default=30.0)
    ap.add_argument("--concurrent", type=int, default=1,
                    help="scrapes sent at once in each round (1,000: the connection-flood row)")
    ap.add_argument("--nofile", type=int, default=0,
                    help="the agent's soft open-files limit at start (0: this shell's)")
    ap.add_argument("--nofile-hard", type=int, default=0,
                    help="the agent's hard open-files limit too (0: this shell's): it cannot raise past it")
    a = ap.parse_args()
    # This script's own sockets: one per client, beside the agent's.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    def agent_limit():
        if a.nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (a.nofile, a.nofile_hard or hard))
        else:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    port = free_port()
    agent = subprocess.Popen(
        [a.gpulens, "serve", "--replay", a.trace, "--speed", "1", "--no-history",
         "--listen", f"127.0.0.1:{port}", "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=agent_limit)
    try:
        if not wait_up(port, time.time() + 30):
            print("the agent did not start", file=sys.stderr)
            return 1
        stop = threading.Event()
        socks = []

        def slow_client():
            head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10000
            while not stop.is_set():
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=5)
                except OSError:
                    time.sleep(0.2)
                    continue
                try:
                    for b in head:
                        if stop.is_set():
                            break
                        s.send(bytes([b]))
                        time.sleep(a.drip)
                except OSError:
                    pass  # refused or timed out by the server: come back, as an attacker would
                s.close()

        def idle_client():
            while not stop.is_set():
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=5)
                    socks.append(s)
                    s.settimeout(60)
                    s.recv(1)  # until the server closes it
                    s.close()
                except OSError:
                    time.sleep(0.2)

        threads = [threading.Thread(target=slow_client, daemon=True) for _ in range(a.slow)]
        threads += [threading.Thread(target=idle_client, daemon=True) for _ in range(a.idle)]
        for t in threads:
            t.start()
        time.sleep(3)  # let them take their places
        results = []
        for _ in range(a.scrapes):
            if a.concurrent == 1:
                results.append(scrape(port, a.limit))
                continue
            batch = [None] * a.concurrent
            def one(i):
                batch[i] = scrape(port, a.limit)
            ts = [threading.Thread(target=one, args=(i,)) for i in range(a.concurrent)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            results.extend(batch)
        stop.set()
        lat = sorted(ms for ok, ms in results if ok)
        print(f"slow={a.slow} idle={a.idle} nofile={a.nofile or soft}:{a.nofile_hard or hard} "
              f"scrapes={len(results)} {latency_summary(lat)}")
        if lat:
            print(f"mean_ms={statistics.mean(lat):.1f}")
        return 0
    finally:
        stop_agent(agent)


if __name__ == "__main__":
    sys.exit(main())
