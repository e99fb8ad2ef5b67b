#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`gpulens top --mouse` on a pseudo-terminal: it turns on xterm mouse reporting,
and a click (SGR 1006 report) on the PID heading sorts by PID. tmux cannot send
mouse events to a pane, so this drives the pty directly."""
import fcntl
import os
import pty
import re
import select
import struct
import sys
import termios
import time

binary = os.environ["GPULENS_BIN"]
src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
trace = os.path.join(src, "tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl")

pid, fd = pty.fork()
if pid == 0:
    os.environ.update(TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="C.UTF-8", TZ="UTC")
    os.environ.pop("NO_COLOR", None)
    os.execv(binary, [binary, "top", "--mouse", "--replay", trace, "--speed", "0",
                      "--count", "300"])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))


def read_for(seconds):
    out = b""
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out


def wait_for(needle, seconds):
    out = b""
    end = time.time() + seconds
    while time.time() < end:
        out += read_for(0.1)
        if needle in out:
            return out
    return out


failures = []
first = wait_for("end of recording".encode(), 20)
modes = re.findall(rb"\x1b\[\?([0-9;]*)h", first)
if not any(b"1000" in m for m in modes):
    failures.append(f"mouse reporting not turned on (modes set: {modes})")
# The heading row depends on the layout: click down the screen until one sorts.
sorted_at = None
for y in range(1, 30):
    os.write(fd, f"\x1b[<0;4;{y}M\x1b[<0;4;{y}m".encode())
    if "PID▼".encode() in wait_for("PID▼".encode(), 0.3):
        sorted_at = y
        break
if sorted_at is None:
    failures.append("no click on the PID heading sorted by PID")
os.write(fd, b"q")
read_for(0.5)
_, status = os.waitpid(pid, 0)
if os.WEXITSTATUS(status) != 0:
    failures.append(f"exit status {os.WEXITSTATUS(status)} after q")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
if failures:
    sys.exit(1)
print(f"mouse: click on row {sorted_at} sorted by PID")
