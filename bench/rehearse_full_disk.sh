#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rehearsal (docs/reliability.md): the history disk fills up under the agent, then
# space comes back. Needs root (it mounts a 2 MiB tmpfs), so it is not in ctest.
# Checks: the agent keeps serving /metrics and live data while writes fail,
# health says degraded, nothing it reported committed is lost, and it writes
# again once there is space. Prints one line of figures.
#   sudo GPULENS=build/debug/gpulens bench/rehearse_full_disk.sh
set -euo pipefail
source "$(dirname "$0")/../tests/e2e/lib.sh"
need curl "Debian: apt-get install curl"
need python3 "Debian: apt-get install python3"
[[ $(id -u) -eq 0 ]] || skip "needs root to mount a small tmpfs"

disk="$E2E_TMP/disk"
mkdir -p "$disk"
mount -t tmpfs -o size=2m tmpfs "$disk" || skip "cannot mount a tmpfs here"
# lib.sh's cleanup (agents, the temporary folder) runs after the unmount.
trap 'umount -l "$disk" 2>/dev/null || true; e2e_cleanup' EXIT

# The calibration recording repeated with shifted times: more samples than 2 MiB holds.
long_recording "$REPO/examples/calibration-h100.trace.jsonl" "$E2E_TMP/long.jsonl" 64
db="$disk/h.db"
start_agent "$E2E_TMP/agent.log" --replay "$E2E_TMP/long.jsonl" --speed 50 --history "$db"
health() { curl -sf "$AGENT_URL/api/v1/health"; }
field() { health | python3 -c "import json,sys; h=json.load(sys.stdin); print($1)"; }
degraded() { [[ $(field 'h["status"]') == degraded ]]; }
wait_for 120 degraded || fail "the disk filled without health saying degraded"
committed=$(field 'h["history"]["samples_written"]')

# While degraded: scrapes answered, live data served; their latency.
lat=$(python3 - "$AGENT_URL" <<'PY'
import sys, time, urllib.request
t = []
for _ in range(50):
    s = time.perf_counter()
    body = urllib.request.urlopen(sys.argv[1] + "/metrics", timeout=5).read()
    t.append((time.perf_counter() - s) * 1000)
    assert b"gpulens_store_up 0" in body, "store_up is not 0 while the disk is full"
t.sort()
print(f"{t[len(t) // 2]:.1f} {t[int(len(t) * 0.99) - 1]:.1f}")
PY
) || fail "scrapes failed while the disk was full"
curl -sf "$AGENT_URL/api/v1/latest" | grep -q '"sm_active"' || fail "live data not served while the disk was full"

# Space comes back: the agent writes again.
rm -f "$disk"/filler
mount -o remount,size=64m "$disk"
healthy() { [[ $(field 'h["history"]["healthy"]') == True ]]; }
wait_for 120 healthy || { tail -5 "$E2E_TMP/agent.log" >&2; fail "history did not recover once space came back"; }
after=$(field 'h["history"]["samples_written"]')
kill -TERM "$AGENT_PID"
wait "$AGENT_PID" || fail "the agent did not stop cleanly"
sql() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$db" "$1"; }
[[ $(sql 'PRAGMA integrity_check') == ok ]] || fail "integrity_check failed"
rows=$(sql 'SELECT COUNT(*) FROM samples')
((rows >= committed)) || fail "$rows rows, but $committed were reported committed when the disk filled"
read -r p50 p99 <<<"$lat"
echo "full disk: degraded, 50 scrapes while full p50 ${p50} ms p99 ${p99} ms, live data served;" \
  "recovered and wrote on ($committed -> $after samples reported, $rows rows, integrity ok)"
