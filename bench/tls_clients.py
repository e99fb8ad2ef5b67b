#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Scrape latency of `gpulens serve` with TLS and basic auth while hostile clients
hold TLS connections, and while password guessers hammer it.

Starts the agent on a recording (no history) with a self-signed certificate and
one user, then opens IDLE connections that send nothing after connecting and
PARTIAL ones that send the first bytes of a ClientHello and stop, plus GUESSERS
that send wrong passwords as fast as they are answered; then scrapes /metrics
--scrapes times, one after another, each on a new TLS connection with the right
password (remembered after the first). Prints scrapes answered, p50, p99 and max
latency in ms. Run it against two binaries to compare (docs/reliability.md):

  bench/tls_clients.py --gpulens build/debug/gpulens --idle 32 --partial 32
  bench/tls_clients.py --gpulens build/debug/gpulens --idle 0 --partial 0 --guessers 32
"""
import argparse
import base64
import multiprocessing
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

from scrape_bench import free_port, get_metrics, latency_summary, stop_agent, wait_up


def tls_context():
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # the benchmark's own self-signed certificate
    return ctx


def request(port, authorization, limit_s, ctx):
    """One HTTPS GET /metrics on a new connection: (status line ok, ms, status)."""
    t0 = time.perf_counter()
    status = 0
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=limit_s)
        s = ctx.wrap_socket(raw, server_hostname="localhost")
        data = get_metrics(s, limit_s, b"Authorization: " + authorization + b"\r\n")
        if data.startswith(b"HTTP/1.1 "):
            status = int(data[9:12])
    except (OSError, ValueError):
        pass
    return status, (time.perf_counter() - t0) * 1000.0


def guesser(port, wrong, halt, guesses, busy):
    ctx = tls_context()
    while not halt.is_set():
        status, _ = request(port, wrong, 10, ctx)
        with guesses.get_lock():
            guesses.value += 1
        if status == 429:
            with busy.get_lock():
                busy.value += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpulens", default="build/debug/gpulens")
    ap.add_argument("--trace", default="examples/calibration-h100.trace.jsonl")
    ap.add_argument("--idle", type=int, default=32, help="connections that send nothing")
    ap.add_argument("--partial", type=int, default=32, help="connections that send half a ClientHello")
    ap.add_argument("--guessers", type=int, default=0, help="clients sending wrong passwords")
    ap.add_argument("--guess-cost", type=int, default=10, help="bcrypt cost of the guessed user")
    ap.add_argument("--scrapes", type=int, default=40)
    ap.add_argument("--limit", type=float, default=30.0)
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="gpulens-tls-bench.")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-keyout", f"{tmp}/tls.key", "-out", f"{tmp}/tls.crt"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def make_hash(password):
        out = subprocess.run([a.gpulens, "serve", "--hash-password"], input=password + "\n",
                             capture_output=True, text=True, check=True).stdout
        return out.strip().splitlines()[-1]

    scrape_hash = make_hash("pw")
    # The guessed user's hash at the requested cost: its cost digits rewritten
    # would not verify, so it is made with Python's crypt where needed.
    guess_hash = make_hash("right")
    if a.guess_cost != 10:
        import crypt  # deprecated, still in Debian 12's Python 3.11
        guess_hash = crypt.crypt("right", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=2 ** a.guess_cost))
    with open(f"{tmp}/web.yml", "w") as f:
        f.write("tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
                f"basic_auth_users:\n  prometheus: {scrape_hash}\n  alice: {guess_hash}\n")

    port = free_port()
    agent = subprocess.Popen(
        [a.gpulens, "serve", "--replay", a.trace, "--speed", "1", "--no-history",
         "--listen", f"127.0.0.1:{port}", "--web-config", f"{tmp}/web.yml", "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx = tls_context()
    good = b"Basic " + base64.b64encode(b"prometheus:pw")
    wrong = b"Basic " + base64.b64encode(b"alice:wrong")
    try:
        if not wait_up(port, time.time() + 30):
            print("the agent did not start", file=sys.stderr)
            return 1
        request(port, good, a.limit, ctx)  # the password is remembered from here on
        stop = threading.Event()
        counts = {"guesses": 0, "429": 0}

        def hostile(partial):
            # Reconnects whenever the server closes it, as an attacker would.
            while not stop.is_set():
                try:
                    s = socket.create_connection(("127.0.0.1", port), timeout=5)
                    if partial:
                        s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
                    s.settimeout(60)
                    s.recv(1)
                    s.close()
                except OSError:
                    time.sleep(0.2)

        # Guessers are processes, not threads: 32 Python threads doing TLS
        # would hold the interpreter's lock from the scraping thread and
        # measure the client, not the agent.
        halt = multiprocessing.Event()
        guesses = multiprocessing.Value("i", 0)
        busy = multiprocessing.Value("i", 0)
        guessers = [multiprocessing.Process(target=guesser, args=(port, wrong, halt, guesses, busy),
                                            daemon=True) for _ in range(a.guessers)]
        for g in guessers:
            g.start()

        threads = [threading.Thread(target=hostile, args=(False,), daemon=True) for _ in range(a.idle)]
        threads += [threading.Thread(target=hostile, args=(True,), daemon=True) for _ in range(a.partial)]
        for t in threads:
            t.start()
        time.sleep(2)  # let them take their places
        results = [request(port, good, a.limit, ctx) for _ in range(a.scrapes)]
        stop.set()
        halt.set()
        for g in guessers:
            g.join(15)
        counts["guesses"], counts["429"] = guesses.value, busy.value
        lat = sorted(ms for status, ms in results if status == 200)
        print(f"idle={a.idle} partial={a.partial} guessers={a.guessers} scrapes={len(results)} "
              f"{latency_summary(lat)}")
        if a.guessers:
            print(f"guesses_answered={counts['guesses']} of_them_429={counts['429']}")
        return 0
    finally:
        stop_agent(agent)
        for name in os.listdir(tmp):
            os.remove(os.path.join(tmp, name))
        os.rmdir(tmp)


if __name__ == "__main__":
    sys.exit(main())
