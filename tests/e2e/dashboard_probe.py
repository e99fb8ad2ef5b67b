#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Loads a page in headless Chromium at an exact viewport through the DevTools
protocol (python3's standard library only: a minimal WebSocket client), then
prints what it measured as one JSON line, saves a screenshot, and exits 1
(saying why on stderr) when the dashboard fails a check.

Chromium's --window-size cannot go below 500 px wide, so a phone's 390 px needs
Emulation.setDeviceMetricsOverride; --dump-dom cannot see console errors, so
they are collected from Runtime and Log events.

  dashboard_probe.py CHROME URL WIDTH HEIGHT SHOT.png CARDS [wall] [kernels=GPU:PID,...]

Checks: no sideways scroll (scrollWidth <= viewport), CARDS GPU cards, a legend
on each of the four charts, a process row (held between process reads), one
colour per distinct state, the blocks of Where the time went (kernels=), none
wider than its panel, no console message, error or failed load; with
`wall`: the cards fill their row and the first chart ends above the fold.
"""
import base64
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
from urllib.parse import urlparse

# What the page reports about itself once it has rendered.
MEASURE = """JSON.stringify((() => {
  const d = document.documentElement;
  const chart = document.querySelector('#charts .chart');
  const cards = [...document.querySelectorAll('#cards .card')];
  const r = (n) => n ? n.getBoundingClientRect() : null;
  return {
    scrollWidth: d.scrollWidth, clientWidth: d.clientWidth, innerHeight: window.innerHeight,
    cards: cards.length,
    // How much of the cards' own row the cards cover: empty grid tracks lower it.
    cardsFill: cards.length ? (Math.max(...cards.map((c) => r(c).right)) - Math.min(...cards.map((c) => r(c).left)))
      / r(document.getElementById('cards')).width : 0,
    firstChartBottom: chart ? r(chart).bottom + window.scrollY : null,
    legends: document.querySelectorAll('#charts .u-legend').length,
    processRows: document.querySelectorAll('#procs tbody tr:not(.none)').length,
    // Where the time went: blocks per GPU and process, their named kernels, and
    // any kernel name wider than its block (it must be cut with an ellipsis).
    kernelBlocks: [...document.querySelectorAll('#kernels .kproc')].map((b) => `${b.dataset.gpu}:${b.dataset.pid}`),
    kernelRows: document.querySelectorAll('#kernels .krow:not(.other)').length,
    kernelOverflow: [...document.querySelectorAll('#kernels .kproc')].filter((b) => b.scrollWidth > b.clientWidth).length,
    states: cards.map((c) => c.dataset.state),
    stateColours: cards.map((c) => getComputedStyle(c.querySelector('.badge.state')).backgroundColor),
  };
})())"""


class WebSocket:
    def __init__(self, url):
        u = urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise RuntimeError("DevTools closed the connection during the handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"DevTools refused the WebSocket: {head[:80]!r}")

    def _exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            buf += chunk
        return bytes(buf)

    def send(self, text):
        data = text.encode()
        n = len(data)
        if n < 126:
            head = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + masked)

    def recv(self):
        message = bytearray()
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._exact(8))[0]
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 8:
                raise RuntimeError("DevTools closed the WebSocket")
            if opcode in (9, 10):  # ping, pong: not part of a message
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Page:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def pump(self, seconds):
        """Collects events for this long (wall time: the page polls its agent)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.ws.sock.settimeout(max(0.05, end - time.monotonic()))
            try:
                msg = json.loads(self.ws.recv())
            except (socket.timeout, TimeoutError):
                break
            if "method" in msg:
                self.events.append(msg)
        self.ws.sock.settimeout(60)


def console_problems(events):
    out = []
    for e in events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.consoleAPICalled":
            out.append(f"console.{p.get('type')}: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("uncaught: " + str(d.get("exception", {}).get("description", d.get("text", ""))))
        elif m == "Log.entryAdded":
            entry = p.get("entry", {})
            if entry.get("level") in ("error", "warning"):
                out.append(f"log {entry.get('level')}: {entry.get('text')} {entry.get('url', '')}")
    return out


def problems(r, width, cards, wall, kernel_blocks):
    bad = []
    if r["clientWidth"] != width:
        bad.append(f"the viewport is {r['clientWidth']} px, not {width}")
    if r["scrollWidth"] > r["clientWidth"]:
        bad.append(f"the page is {r['scrollWidth']} px wide in a {r['clientWidth']} px viewport: it scrolls sideways")
    if r["cards"] != cards:
        bad.append(f"{r['cards']} GPU cards, expected {cards}")
    if r["legends"] != 4:
        bad.append(f"{r['legends']} chart legends, expected 4")
    if r["processRows"] < 1:
        bad.append("no process row: the last process list was not held")
    if len(r["kernelBlocks"]) != len(kernel_blocks) or sorted(r["kernelBlocks"]) != sorted(kernel_blocks):
        bad.append(f"kernel blocks {r['kernelBlocks']}, expected {kernel_blocks}")
    if kernel_blocks and r["kernelRows"] < 1:
        bad.append("no named kernel in Where the time went")
    if r["kernelOverflow"]:
        bad.append(f"{r['kernelOverflow']} kernel block(s) wider than their panel")
    if len(set(r["stateColours"])) != len(set(r["states"])):
        bad.append(f"states {r['states']} drawn in {r['stateColours']}")
    if wall:
        if r["cardsFill"] < 0.97:
            bad.append(f"the cards cover {100 * r['cardsFill']:.0f} % of their row (empty columns)")
        if r["firstChartBottom"] is None or r["firstChartBottom"] > r["innerHeight"]:
            bad.append(f"the first chart ends at {r['firstChartBottom']} px, below the fold ({r['innerHeight']} px)")
    return bad + ["console: " + c for c in r["console"]]


def main():
    chrome, url, width, height, shot = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    cards = int(sys.argv[6])
    wall = "wall" in sys.argv[7:]
    # kernels=GPU:PID,...: the blocks Where the time went must show (default none).
    kernel_blocks = next((a.split("=", 1)[1].split(",") for a in sys.argv[7:] if a.startswith("kernels=")), [])
    kernel_blocks = [k for k in kernel_blocks if k]
    settle = 4.0  # wall seconds: the page polls its agent every second
    profile = tempfile.mkdtemp(prefix="gpulens-probe-")
    browser = subprocess.Popen([chrome, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                                f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        for _ in range(300):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.1)
        port = int(open(port_file).read().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30))
        target = next(t for t in targets if t.get("type") == "page")
        page = Page(WebSocket(target["webSocketDebuggerUrl"]))
        page.call("Runtime.enable")
        page.call("Log.enable")
        page.call("Page.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=width < 600)
        page.call("Page.navigate", url=url)
        page.pump(settle)
        value = page.call("Runtime.evaluate", expression=MEASURE, returnByValue=True)["result"]["value"]
        result = json.loads(value)
        png = page.call("Page.captureScreenshot", format="png")["data"]
        with open(shot, "wb") as f:
            f.write(base64.b64decode(png))
        page.pump(0.2)
        result["console"] = console_problems(page.events)
        print(json.dumps(result))
        bad = problems(result, width, cards, wall, kernel_blocks)
        for b in bad:
            print(f"{width}x{height}: {b}", file=sys.stderr)
        return 1 if bad else 0
    finally:
        browser.terminate()
        try:
            browser.wait(10)
        except subprocess.TimeoutExpired:
            browser.kill()
        subprocess.run(["rm", "-rf", profile], check=False)


if __name__ == "__main__":
    sys.exit(main())
