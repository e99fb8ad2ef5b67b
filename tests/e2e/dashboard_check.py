#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Loads the agent's dashboard in headless Chromium over the DevTools protocol, waits
for the cards, the timeline and the charts, compares the cards with the trace's last
values and the agent's state text, fails on any console error, and keeps a screenshot.

The protocol runs over a pipe (--remote-debugging-pipe: NUL-terminated JSON on the
browser's fds 3 and 4), so nothing beyond Python's standard library is needed.

Usage: dashboard_check.py URL EXPECTED.json SHOT.png
"""
import base64
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

TIMEOUT_S = 60


class Browser:
    """Headless Chromium and one page, driven over the debugging pipe."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="gpulens-chromium-")
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def wire_fds():  # in the child: its fd 3 reads commands, fd 4 writes replies
            r = os.dup(to_browser_r)
            w = os.dup(from_browser_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [os.environ.get("CHROMIUM", "chromium"), "--headless=new", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--disable-sync",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             "--window-size=1440,1100", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=wire_fds, close_fds=False)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.deadline = time.monotonic() + TIMEOUT_S
        self.buffer = b""
        self.next_id = 1
        self.session = None
        self.events = []

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self):
        while b"\0" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from Chromium within {TIMEOUT_S} s")
            ready, _, _ = select.select([self.from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"Chromium closed the debugging pipe: {err}")
            self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        return json.loads(message)

    def send(self, method, params=None, session=True):
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        self.next_id += 1
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == msg["id"]:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def open_page(self):
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget",
                                 {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]

    def evaluate(self, expression):
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return r["result"].get("value")


def page_problems(events):
    """Every error the page reported: console.error, uncaught exceptions, failed
    loads, CSP violations."""
    out = []
    for e in events:
        method, p = e["method"], e.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
            out.append(f"console.{p['type']}: {args}")
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            out.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            entry = p["entry"]
            out.append(f"log ({entry['source']}): {entry['text']} {entry.get('url', '')}")
    return out


READY = """(() => {
  const cards = document.querySelectorAll("article.card");
  const charts = document.querySelectorAll("#charts canvas");
  const runs = document.querySelectorAll("#timeline .tl-run");
  return cards.length > 0 && charts.length > 0 && runs.length > 0 &&
    !document.querySelector('[data-field="state"]').textContent.includes("unknown");
})()"""

CARDS = """[...document.querySelectorAll("article.card")].map((c) => {
  const f = (name) => (c.querySelector('[data-field="' + name + '"]') || {}).textContent || "";
  return { gpu: c.dataset.gpu, gpu_util: f("gpu_util"), sm_active: f("sm_active"),
    state: f("state"), summary: f("summary"), power: f("power"), memory: f("memory"),
    fix: f("fix") };
})"""


def number(text):
    """The first number in a card's text ("12.5 %" -> 12.5); NaN when none."""
    m = re.search(r"-?\d+(?:\.\d+)?", text)
    return float(m.group()) if m else float("nan")


def compare(cards, expected, latest):
    problems = []
    for gpu, sample in expected["last"].items():
        card = next((c for c in cards if c["gpu"] == gpu), None)
        if card is None:
            problems.append(f"no card for GPU {gpu}")
            continue
        # Cards round to one decimal (0 decimals at 0 and 100 %).
        for key in ("gpu_util", "sm_active"):
            if not abs(number(card[key]) - sample[key]) <= 0.051:
                problems.append(f'GPU {gpu} {key}: card shows "{card[key]}", '
                                f"the trace says {sample[key]}")
        if not abs(number(card["power"]) - sample["power_w"]) <= 0.51:
            problems.append(f'GPU {gpu} power: card shows "{card["power"]}", '
                            f"the trace says {sample['power_w']} W")
        api = next(g for g in latest["gpus"] if str(g["gpu"]) == gpu)
        if card["summary"] != api["state"]["summary"]:
            problems.append(f'GPU {gpu} state text: card "{card["summary"]}", '
                            f'agent "{api["state"]["summary"]}"')
        if not card["state"] or "unknown" in card["state"]:
            problems.append(f"GPU {gpu}: no state shown")
        fixes = api["state"]["fixes"]
        if fixes and fixes[0] not in card["fix"]:
            problems.append(f"GPU {gpu}: the fix is not shown")
    return problems


def main():
    url, expected_path, shot_path = sys.argv[1:4]
    with open(expected_path) as f:
        expected = json.load(f)
    browser = Browser()
    try:
        browser.open_page()
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            browser.send(domain)
        browser.send("Page.navigate", {"url": url})
        ready = False
        for _ in range(100):
            ready = browser.evaluate(READY)
            if ready:
                break
            time.sleep(0.2)
        problems = [] if ready else [
            "the dashboard did not render cards, charts and a timeline within 20 s"]
        cards = browser.evaluate(CARDS) or []
        with urllib.request.urlopen(url.rstrip("/") + "/api/v1/latest", timeout=10) as r:
            latest = json.load(r)
        problems += compare(cards, expected, latest)
        shot = browser.send("Page.captureScreenshot",
                            {"format": "png", "captureBeyondViewport": True})
        with open(shot_path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        problems = page_problems(browser.events) + problems
    except (TimeoutError, RuntimeError, OSError, StopIteration) as e:
        print(f"FAIL: {e!r}")
        return 1
    finally:
        browser.close()
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems) + f"\n(screenshot: {shot_path})")
        return 1
    print(f"dashboard e2e: {len(cards)} card(s) match the trace, no console errors; "
          f"screenshot {shot_path}")
    for c in cards:
        print(f"  GPU {c['gpu']}: util {c['gpu_util']}, SM {c['sm_active']}, "
              f"{c['state']}: {c['summary']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
