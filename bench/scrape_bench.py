# SPDX-License-Identifier: Apache-2.0
"""What the scrape-latency benchmarks under attack share (bench/slow_clients.py,
bench/tls_clients.py): the agent on a free loopback port, waited for and stopped,
a scrape of /metrics, and the latencies of the answered scrapes summed up the
same way, so that their rows in docs/reliability.md compare."""
import socket
import subprocess
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_up(port, deadline):
    """True once the port takes a connection; False at `deadline` (time.time())."""
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def get_metrics(s, limit_s, headers=b""):
    """GET /metrics on the connected socket `s` (plain or TLS) with `headers` (lines
    ending in CRLF), read until the agent closes it; the answer's bytes."""
    s.settimeout(limit_s)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers + b"\r\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def latency_summary(lat):
    """`answered=N p50_ms=... p99_ms=... max_ms=...` of the answered scrapes'
    latencies in ms, sorted; nan where none was answered."""
    def pct(p):
        return lat[min(len(lat) - 1, int(round(p / 100.0 * (len(lat) - 1))))] if lat else float("nan")
    return (f"answered={len(lat)} p50_ms={pct(50):.1f} p99_ms={pct(99):.1f} "
            f"max_ms={(lat[-1] if lat else float('nan')):.1f}")


def stop_agent(agent):
    """SIGTERM, then SIGKILL if the agent has not ended within 10 s."""
    agent.terminate()
    try:
        agent.wait(10)
    except subprocess.TimeoutExpired:
        agent.kill()
