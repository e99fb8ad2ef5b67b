# SPDX-License-Identifier: Apache-2.0
"""Issue 47's API attack on a real `gpulens-serve`: a day of 8 GPUs' kernel
windows in memory (34,560, ten 120-byte names each, read back from the history
on start), a job on GPU 0 sending one summary every 1.1 s, 8 clients looping
GET /api/v1/kernels?from=-100d&limit=10000, and a scraper of /metrics every
0.5 s. Prints the scrapes' p50/p99/max, the job's summaries sent / accepted /
refused, the clients' answers and sizes, and the agent's RSS (peak sampled and
VmHWM).

  python3 bench/agent_kernels/hostile_api.py [--serve build/debug/gpulens-serve]
      [--clients 8] [--seconds 40]
"""
import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(REPO, "tests/fixtures/multi_gpu/h200x4-main/multi.trace.jsonl")
WINDOWS_PER_GPU = 4320


def eight_gpu_trace(path, sender_pid, seconds=30):
    """The first SECONDS of a 4-GPU recording as 8 GPUs (4-7 copies of 0-3), the
    sender listed on GPU 0."""
    t0 = None
    with open(SOURCE) as lines, open(path, "w") as out:
        header = json.loads(next(lines))
        extra = []
        for d in header["devices"]:
            e = dict(d)
            e["index"] = d["index"] + 4
            e["uuid"] = d["uuid"] + "-copy"
            extra.append(e)
        header["devices"] += extra
        out.write(json.dumps(header) + "\n")
        for line in lines:
            d = json.loads(line)
            t = d.get("t")
            if t is not None:
                t0 = t if t0 is None else t0
                if t - t0 > seconds:
                    break
            if "gpu" not in d:
                out.write(line)
                continue
            if d["gpu"] == 0 and "procs" in d:
                d["procs"] = d["procs"] + [{"pid": sender_pid, "name": "python", "used_mib": 900}]
            out.write(json.dumps(d) + "\n")
            if t is not None:
                copy = dict(d)
                copy["gpu"] = d["gpu"] + 4
                out.write(json.dumps(copy) + "\n")


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def fill_history(db_path, now_ns):
    """A day of windows per GPU, as store/kernel_windows.cpp writes them."""
    db = sqlite3.connect(db_path)
    names = []
    for n in range(40):
        name = ("void at::native::elementwise_kernel_%d<" % n).ljust(120, "T")
        cur = db.execute("INSERT INTO kernel_names (name, last_ms) VALUES (?, ?)",
                         (name, now_ns // 1_000_000))
        names.append(cur.lastrowid)
    rows = []
    for i in range(WINDOWS_PER_GPU):
        end = now_ns - (WINDOWS_PER_GPU - i) * 20_000_000_000
        for gpu in range(8):
            top = bytearray([1]) + varint(10)
            for k in range(10):
                top += varint(names[(i + k) % 40]) + varint(40) + varint(10_000_000 * (k + 1))
            rows.append((end, gpu, 4000 + gpu, end - 2_000_000_000, 0, 1000, "python3",
                         "ml-training", "llama-finetune-7b-0", "trainer", 1, 1_800_000_000,
                         200_000_000, bytes(top), 25, 300, 90_000_000, 12, 0, 150_000_000, 30,
                         1 << 20, 4_000_000, 0, 0, 0, 0, 0))
    db.executemany("INSERT INTO kernel_windows VALUES (%s)" % ",".join("?" * 28), rows)
    db.commit()
    db.close()
    return len(rows)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=60):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read()


def health(base):
    return json.loads(get(base + "/api/v1/health"))


def start(serve, trace, db, sock, port, log):
    proc = subprocess.Popen([serve, "--replay", trace, "--speed", "100", "--listen",
                             "127.0.0.1:%d" % port, "--history", db, "--kernels-socket", sock],
                            stdout=log, stderr=log)
    base = "http://127.0.0.1:%d" % port
    for _ in range(600):
        try:
            if health(base).get("replay", {}).get("ended") or '"ended": true' in json.dumps(
                    health(base)):
                return proc, base
        except OSError:
            pass
        if proc.poll() is not None:
            sys.exit("gpulens-serve exited; see %s" % log.name)
        time.sleep(0.2)
    sys.exit("the replay did not end")


def rss_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--serve", default=os.path.join(REPO, "build/debug/gpulens-serve"))
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=40)
    args = ap.parse_args()
    # The recording is committed as .xz; a GPU machine's copy of the tree has no
    # build that restored it (scripts/fixtures.sh).
    subprocess.run([os.path.join(REPO, "scripts", "fixtures.sh")], check=True, stdout=subprocess.DEVNULL)
    work = tempfile.mkdtemp(prefix="gpulens-hostile-api-")
    sock_path = os.path.join(work, "kernels.sock")
    db = os.path.join(work, "history.db")
    log = open(os.path.join(work, "serve.log"), "w")

    # The job: a child that waits for the go, then sends a summary every 1.1 s.
    go = threading.Event()
    sender_ready = os.path.join(work, "go")
    job = subprocess.Popen([sys.executable, "-c", """
import json, os, socket, sys, time
path, go, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
while not os.path.exists(go): time.sleep(0.05)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sent = dropped = 0
until = time.monotonic() + seconds
while time.monotonic() < until:
    end = time.time_ns()
    d = {"x_kernel_summary": 1, "seq": sent, "start_unix_ns": end - 2_000_000_000,
         "end_unix_ns": end, "window": True, "cupti_dropped": 0, "summaries_dropped": 0,
         "devices": [{"device": 0, "busy_ns": 1_500_000_000, "idle_ns": 500_000_000,
                      "top": [{"name": "gemm", "launches": 40, "ns": 1_200_000_000}],
                      "other": {"kernels": 1, "launches": 2, "ns": 1000},
                      "collectives": {"count": 0, "ns": 0},
                      "copies": {"count": 0, "ns": 0, "bytes": 0},
                      "memsets": {"count": 0, "ns": 0, "bytes": 0}}]}
    try:  # as the library sends: never waiting (a full queue drops it)
        s.sendto(json.dumps(d).encode(), socket.MSG_DONTWAIT, path)
        sent += 1
    except OSError:
        dropped += 1
    time.sleep(1.1)
print(sent, dropped)
""", sock_path, sender_ready, str(args.seconds)], stdout=subprocess.PIPE, text=True)

    trace = os.path.join(work, "eight.trace.jsonl")
    eight_gpu_trace(trace, job.pid)
    # First start: the history file made; then a day of windows put in it.
    proc, base = start(args.serve, trace, db, sock_path, free_port(), log)
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    stored = fill_history(db, time.time_ns())
    proc, base = start(args.serve, trace, db, sock_path, free_port(), log)
    before = health(base)["kernels"]
    rss_start = rss_kib(proc.pid, "VmRSS")

    stop = threading.Event()
    answers, sizes, truncated, scrapes = [], [], [], []
    peak = [rss_start]

    def hostile():
        while not stop.is_set():
            t = time.monotonic()
            try:
                body = get(base + "/api/v1/kernels?from=-100d&limit=10000", timeout=120)
                answers.append(time.monotonic() - t)
                sizes.append(len(body))
                truncated.append(b'"truncated":true' in body)
            except OSError:
                pass

    def scraper():
        while not stop.is_set():
            t = time.monotonic()
            try:
                get(base + "/metrics", timeout=30)
                scrapes.append((time.monotonic() - t) * 1000)
            except OSError:
                scrapes.append(float("inf"))
            stop.wait(0.5)

    def watch_rss():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_kib(proc.pid, "VmRSS"))
            stop.wait(0.2)

    threads = [threading.Thread(target=hostile) for _ in range(args.clients)]
    threads += [threading.Thread(target=scraper), threading.Thread(target=watch_rss)]
    for th in threads:
        th.start()
    open(sender_ready, "w").close()
    sent, dropped = (int(v) for v in job.communicate(timeout=args.seconds + 60)[0].split())
    time.sleep(1)
    stop.set()
    for th in threads:
        th.join(180)
    after = health(base)["kernels"]
    hwm = rss_kib(proc.pid, "VmHWM")
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)

    lat = sorted(scrapes)

    def pct(p):
        return lat[min(len(lat) - 1, int(len(lat) * p / 100))] if lat else float("nan")

    accepted = after["accepted"] - before["accepted"]
    refused = {k: after["refused"][k] - before["refused"][k] for k in after["refused"]}
    print("windows in history: %d, loaded: %d, stored in memory: %d" %
          (stored, after["history"]["loaded"], after["windows_stored"]))
    print("hostile clients: %d, answers: %d, mean %.2f s, size %.1f MB max, truncated %d of %d" %
          (args.clients, len(answers), sum(answers) / max(len(answers), 1),
           max(sizes or [0]) / 1e6, sum(truncated), len(truncated)))
    print("scrapes of /metrics: %d, p50_ms=%.1f p99_ms=%.1f max_ms=%.1f" %
          (len(lat), pct(50), pct(99), lat[-1] if lat else float("nan")))
    print("the job's summaries: sent %d, dropped on its side %d, accepted %d, refused %s" %
          (sent, dropped, accepted, refused))
    print("agent RSS: %.0f MB at start, %.0f MB peak sampled, VmHWM %.0f MB" %
          (rss_start / 1024, peak[0] / 1024, hwm / 1024))


if __name__ == "__main__":
    main()
