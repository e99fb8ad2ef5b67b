#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Soak test of `gpulens serve`: 24 simulated hours of an N-GPU node (a trace
# made from the H100 calibration recording, 1 sample per second per GPU)
# replayed as fast as the agent goes, with history on and clients scraping
# /metrics all along. Reports the agent's RSS after the day, its peak, the
# history size, replay speed and the scrapes per second sustained meanwhile.
# Usage: bench/serve_soak.sh [BINARY] [GPUS] [HOURS] [SPEED]
#        (defaults: build/release/gpulens 8 24 2000, i.e. the day in about 43 s)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/gpulens}
gpus=${2:-8}
hours=${3:-24}
speed=${4:-2000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-soak.XXXXXX")
agent=""
cleanup() {
  [[ -n $agent ]] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

python3 - examples/calibration-h100.trace.jsonl "$tmp/day.jsonl" "$gpus" "$hours" <<'PY'
import json, sys
src, dst, gpus, hours = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
lines = open(src).read().splitlines()
header = json.loads(lines[0])
samples = [json.loads(l) for l in lines[1:] if '"gpu"' in l]
device = header["devices"][0]
header["devices"] = [dict(device, index=g, uuid=f"{device['uuid'][:-2]}{g:02d}") for g in range(gpus)]
header["interval_s"] = 1.0
t0 = 1.7e9
with open(dst, "w") as out:
    out.write(json.dumps(header) + "\n")
    for s in range(int(hours * 3600)):
        for g in range(gpus):
            o = dict(samples[(s * 7 + g * 131) % len(samples)], t=t0 + s, gpu=g)
            out.write(json.dumps(o, separators=(",", ":")) + "\n")
PY

started=$(date +%s.%N)
"$bin" serve --replay "$tmp/day.jsonl" --speed "$speed" --history "$tmp/h.db" --listen 127.0.0.1:0 \
  >"$tmp/agent.log" 2>&1 &
agent=$!
url=""
for _ in $(seq 100); do
  url=$(sed -n 's/.* on \(http:\/\/127\.0\.0\.1:[0-9]*\) (TLS.*/\1/p' "$tmp/agent.log" | head -1)
  [[ -n $url ]] && break
  sleep 0.1
done
[[ -n $url ]] || { cat "$tmp/agent.log"; echo "the agent did not start" >&2; exit 1; }

python3 - "$url" "$agent" "$gpus" "$started" "$speed" <<'PY'
import http.client, json, threading, time, sys, urllib.parse
url, pid, gpus, started = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
host = urllib.parse.urlparse(url)
stop, counts, rss = threading.Event(), [0] * 4, []

def status(field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
    return 0

def scraper(i):
    conn = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
    while not stop.is_set():
        conn.request("GET", "/metrics")
        r = conn.getresponse()
        r.read()
        if r.status == 200:
            counts[i] += 1

def health():
    c = http.client.HTTPConnection(host.hostname, host.port, timeout=10)
    c.request("GET", "/api/v1/health")
    return json.loads(c.getresponse().read())

threads = [threading.Thread(target=scraper, args=(i,), daemon=True) for i in range(len(counts))]
start = time.time()
for t in threads:
    t.start()
while True:
    time.sleep(1)
    rss.append(status("VmRSS"))
    h = health()
    if h["source"]["ended"] and h["history"]["backlog"] == 0:
        break
    if time.time() - start > 3600:
        break
replay_wall = time.time() - started
time.sleep(10)  # keep scraping a while after the day ends: RSS must stay flat
elapsed = time.time() - start
stop.set()
h = health()
print(json.dumps({
    "simulated_hours": h["source"]["last_sample_t"] and round((h["source"]["last_sample_t"] - 1.7e9) / 3600, 2),
    "gpus": gpus,
    "speed": float(sys.argv[5]) if len(sys.argv) > 5 else None,
    "replay_wall_s": round(replay_wall, 1),
    "ticks": h["source"]["ticks"],
    "samples_written": h["history"]["samples_written"],
    "dropped_samples": h["history"]["dropped_samples"],
    "history_file_mib": round(h["history"]["file_bytes"] / 2**20, 1),
    "rss_mib_end": round(status("VmRSS") / 2**20, 1),
    "rss_mib_peak": round(status("VmHWM") / 2**20, 1),
    "rss_mib_median_during": round(sorted(rss)[len(rss) // 2] / 2**20, 1),
    "scrapes_per_s_sustained": round(sum(counts) / elapsed, 1),
    "scrape_clients": len(counts),
}, indent=2))
PY
