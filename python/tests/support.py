# SPDX-License-Identifier: Apache-2.0
"""Shared by the tests: where the repository and the binaries are, and an
agent (gpulens-serve --replay) started on a free loopback port."""

import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(PYTHON_DIR)
CALIBRATION = os.path.join(REPO, "examples", "calibration-h100.trace.jsonl")
MULTI_GPU = os.path.join(REPO, "tests", "fixtures", "traces", "multi-gpu-h200x2.trace.jsonl")


def binary(env_name, build_name):
    """The binary named by $env_name (ctest passes both); without it, the debug
    build's. A test that needs it fails when it is missing, it never skips:
    the marks and client tests exist to run against the real binaries."""
    path = os.environ.get(env_name) or os.path.join(REPO, "build", "debug", build_name)
    if not os.access(path, os.X_OK):
        raise AssertionError(
            "%s: not an executable (%s); build it (cmake --build --preset debug --target %s) or "
            "set $%s" % (path, env_name, build_name, env_name))
    return path


def gpulens_bin():
    return binary("GPULENS_BIN", "gpulens")


def serve_bin():
    return binary("GPULENS_SERVE_BIN", "gpulens-serve")


class TempDirTest(unittest.TestCase):
    """A fresh directory per test, removed afterwards."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpulens-py-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write(self, name, text):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text)
        return self.path(name)


def wait_until(what, predicate, timeout_s=60.0, every_s=0.1):
    """Polls predicate() until it returns something true, within timeout_s."""
    deadline = time.monotonic() + timeout_s
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except Exception as e:  # not ready yet: retried until the deadline
            last_error = e
        time.sleep(every_s)
    raise AssertionError("%s: not within %g s (last error: %s)" % (what, timeout_s, last_error))


class Agent:
    """gpulens-serve on 127.0.0.1, port 0 (the kernel picks a free one, which
    the agent logs): no race with other tests for a port. `url` once it listens."""

    def __init__(self, args, workdir):
        self.log_path = os.path.join(workdir, "agent-%d.log" % len(os.listdir(workdir)))
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [serve_bin(), "--listen", "127.0.0.1:0", "--log-level", "info"] + list(args),
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.url = None
        try:
            self.url = wait_until("the agent announcing its address", self._announced, 30)
        except BaseException:
            self.stop()
            raise

    def _announced(self):
        if self.proc.poll() is not None:
            raise AssertionError("the agent exited (%s):\n%s" % (self.proc.returncode,
                                                                 self.log()))
        found = re.search(r" on (https?://127\.0\.0\.1:\d+) \(TLS", self.log())
        return found.group(1) if found else None

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()


def gpulens_version():
    """The project's version, from CMakeLists.txt."""
    with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(gpulens VERSION ([0-9.]+)", f.read()).group(1)
