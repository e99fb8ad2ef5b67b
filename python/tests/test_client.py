# SPDX-License-Identifier: Apache-2.0
"""The /api/v1 client against the real agent: gpulens-serve replaying the
calibration recording on a free loopback port, its answers checked against the
recording itself (read with this package)."""

import datetime
import http.server
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import gpulens

from . import support


def recording():
    if not hasattr(recording, "cached"):
        recording.cached = gpulens.read_trace(support.CALIBRATION)
    return recording.cached


# A route's query parameter (api_index.cpp's names) -> (Client keyword, a value).
_ROUTE_ARGUMENTS = {
    "from": ("from_", "-1h"), "to": ("to", "now"), "step": ("step", "1m"),
    "gpu": ("gpus", [0]), "metrics": ("metrics", ["sm_active"]), "stats": ("min_max", True),
    "limit": ("limit", 5), "pid": ("pids", [1234]), "top": ("top", 3), "id": ("id", 4242),
}


class ClientOnReplay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpulens-py-agent-")
        cls.agent = support.Agent(
            ["--replay", support.CALIBRATION, "--speed", "0", "--kube-log-dir", "",
             "--history", os.path.join(cls.tmp, "history.db"),
             "--kernels-socket", os.path.join(cls.tmp, "kernels.sock")], cls.tmp)
        cls.client = gpulens.Client(cls.agent.url, timeout=10)
        samples = len(recording().samples)

        def replayed_and_stored():
            h = cls.client.health()
            return (h["source"]["ended"] and h["history"]["samples_written"] >= samples and
                    h["history"]["backlog"] == 0)

        try:
            support.wait_until("the replay ending and its samples stored", replayed_and_stored)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.agent.stop()
        shutil.rmtree(cls.tmp, True)

    def test_version(self):
        v = self.client.version()
        self.assertEqual(v, {"name": "gpulens", "version": gpulens.__version__, "api": "v1"})

    def test_health(self):
        h = self.client.health()
        self.assertEqual(h["status"], "ok")
        self.assertFalse(h["source"]["live"])
        self.assertTrue(h["history"]["enabled"])

    def test_devices_are_the_recording_header(self):
        d = self.client.devices()
        header = recording().header
        self.assertEqual(d["driver"], header["driver"])
        self.assertEqual(d["hostname"], header["host"])
        self.assertEqual([(x["gpu"], x["uuid"], x["name"]) for x in d["devices"]],
                         [(x["index"], x["uuid"], x["name"]) for x in header["devices"]])

    def test_latest_is_the_last_sample(self):
        latest = self.client.latest()
        last = recording().samples_of(0)[-1]
        gpu = latest["gpus"][0]
        self.assertEqual(gpu["gpu"], 0)
        self.assertAlmostEqual(gpu["t"], last.t, places=3)
        self.assertEqual(set(gpu["metrics"]), set(last.metrics))
        for key, value in last.metrics.items():
            self.assertAlmostEqual(gpu["metrics"][key], value, places=6, msg=key)
        self.assertIn("id", gpu["state"])

    def test_history_means_are_the_recording_means(self):
        rec = recording()
        times, sm = rec.series("sm_active", gpu=0)
        start = float(int(times[0])) + 10  # whole seconds: buckets align to the step
        h = self.client.history(from_=start, to=start + 30, step=1, gpus=[0],
                                metrics=["sm_active", "gpu_util"], min_max=True)
        self.assertEqual(h["step"], 1)
        self.assertEqual(len(h["series"]), 1)
        series = h["series"][0]
        self.assertEqual(series["gpu"], 0)
        self.assertEqual(sorted(series["metrics"]), ["gpu_util", "sm_active"])
        self.assertGreater(len(series["t"]), 20)
        checked = 0
        for i, bucket in enumerate(series["t"]):
            inside = [v for t, v in zip(times, sm) if bucket <= t < bucket + 1]
            if not inside:
                continue
            means = series["metrics"]["sm_active"]
            # Stored in hundredths of a percent, each sample rounded.
            self.assertAlmostEqual(means["mean"][i], sum(inside) / len(inside), delta=0.01)
            self.assertAlmostEqual(means["max"][i], max(inside), delta=0.01)
            self.assertAlmostEqual(means["min"][i], min(inside), delta=0.01)
            checked += 1
        self.assertGreater(checked, 20)

    def test_history_takes_datetimes_and_text(self):
        last = recording().samples[-1].t
        to = datetime.datetime.fromtimestamp(last, datetime.timezone.utc)
        h = self.client.history(from_=to - datetime.timedelta(seconds=20), to=to,
                                step=datetime.timedelta(seconds=5), metrics="power_w")
        self.assertAlmostEqual(h["to"], last, places=3)
        self.assertAlmostEqual(h["from"], last - 20, places=3)
        self.assertEqual(h["step"], 5)
        relative = self.client.history(from_="-20s", step="5s", metrics="power_w")
        self.assertAlmostEqual(relative["from"], h["from"], places=3)
        self.assertEqual(relative["series"], h["series"])
        negative = self.client.history(from_=-20, step=5, metrics="power_w")
        self.assertEqual(negative["series"], h["series"])

    def test_timeline(self):
        tl = self.client.timeline(from_="-1h", gpus=0)
        self.assertTrue(tl["runs"])
        for run in tl["runs"]:
            self.assertEqual(run["gpu"], 0)
            self.assertLessEqual(run["start"], run["end"])
            self.assertIsInstance(run["state"], str)

    def test_alerts(self):
        a = self.client.alerts(from_="-1h", limit=1)
        self.assertIn(a["events_source"], ("history", "memory"))
        self.assertLessEqual(len(a["events"]), 1)
        self.assertIsInstance(a["firing"], list)
        none = self.client.alerts(gpus=[7])
        self.assertEqual((none["firing"], none["events"]), ([], []))

    def test_metrics_text(self):
        text = self.client.metrics()
        self.assertIn("gpulens_sm_active_ratio{", text)
        self.assertIn('gpulens_build_info{version="%s"}' % gpulens.__version__, text)

    def test_the_agents_error_message_is_raised(self):
        with self.assertRaises(gpulens.AgentError) as caught:
            self.client.history(from_="yesterday-ish")
        e = caught.exception
        self.assertEqual(e.status, 400)
        self.assertTrue(e.message.startswith("from: 'yesterday-ish' is not a time"), e.message)
        self.assertIn("HTTP 400", str(e))
        self.assertIn("/api/v1/history?from=yesterday-ish", e.url)
        with self.assertRaises(gpulens.AgentError) as caught:
            self.client.history(metrics=["sm_active", "nope"])
        self.assertEqual(caught.exception.message, "metrics: unknown key 'nope'")
        with self.assertRaises(gpulens.AgentError) as caught:
            self.client._json("/api/v1/nope")
        self.assertEqual(caught.exception.status, 404)
        self.assertNotIsInstance(caught.exception, gpulens.AgentUnreachable)

    def test_every_route_of_the_agents_index_has_a_method(self):
        # The agent's own index (src/exposition/api_index.cpp) is the list: a
        # route added there without a method here, or a parameter the method
        # cannot send, fails this test. Each method is called with every
        # parameter its route takes, and the request it would make is checked.
        routes = self.client.index()["routes"]
        self.assertGreaterEqual(len(routes), 10)
        spy = gpulens.Client(self.agent.url)
        asked = []

        class Asked(Exception):
            pass

        def record(path, params=None, accept=()):
            asked.append((path, sorted(k for k, v in (params or {}).items() if v is not None)))
            raise Asked()

        spy._get = record
        for route in routes:
            path, params = route["path"], route["params"]
            with self.subTest(path):
                self.assertTrue(path.startswith("/api/v1/"), path)
                name = path[len("/api/v1/"):].replace("/", "_")
                method = getattr(spy, name, None)
                self.assertTrue(callable(method), "no Client.%s() for %s" % (name, path))
                unknown = [p for p in params if p not in _ROUTE_ARGUMENTS]
                self.assertEqual(unknown, [], "parameters of %s this test cannot fill" % path)
                del asked[:]
                with self.assertRaises(Asked):
                    method(**dict(_ROUTE_ARGUMENTS[p] for p in params))
                self.assertEqual(asked, [(path, sorted(params))])

    def test_kernels_routes(self):
        # No job sends summaries to this agent: both routes answer, empty.
        k = self.client.kernels(from_="-1h", gpus=[0], pids=[1234], limit=10)
        self.assertEqual((k["windows"], k["truncated"]), ([], False))
        s = self.client.kernels_summary(from_="-1h", top=3)
        self.assertEqual((s["processes"], s["top"]), ([], 3))

    def test_a_slurm_job_the_history_never_saw_is_404(self):
        with self.assertRaises(gpulens.AgentError) as caught:
            self.client.slurm_job(4242)
        self.assertEqual(caught.exception.status, 404)
        for bad in ("", "42;rm", "../x"):
            with self.assertRaises(ValueError):
                self.client.slurm_job(bad)

    def test_parameters_are_checked_before_asking(self):
        for call in (lambda: self.client.alerts(limit=0),
                     lambda: self.client.alerts(limit=1001),
                     lambda: self.client.history(gpus=[]),
                     lambda: self.client.history(gpus=[-1]),
                     lambda: self.client.history(gpus=["0"]),
                     lambda: self.client.history(step=0),
                     lambda: self.client.history(metrics=[]),
                     lambda: self.client.kernels(limit=10001),
                     lambda: self.client.kernels(pids=[0]),
                     lambda: self.client.kernels_summary(top=33),
                     lambda: self.client.kernels_summary(pids=[])):
            with self.assertRaises(ValueError):
                call()
        with self.assertRaises(TypeError):
            self.client.history(from_=object())


class ClientWithoutHistory(support.TempDirTest):
    def test_history_answers_503_with_the_reason(self):
        agent = support.Agent(["--replay", support.CALIBRATION, "--speed", "0", "--no-history",
                               "--kube-log-dir", ""], self.tmp)
        self.addCleanup(agent.stop)
        client = gpulens.Client(agent.url)
        with self.assertRaises(gpulens.AgentError) as caught:
            client.history()
        self.assertEqual(caught.exception.status, 503)
        self.assertEqual(caught.exception.message, "history is disabled (--no-history)")
        self.assertFalse(client.health()["history"]["enabled"])


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers 302 to `self.server.redirect` when set, else {} as JSON; records
    the Authorization header of each request."""

    def do_GET(self):
        self.server.seen.append(self.headers.get("Authorization"))
        if self.server.redirect:
            self.send_response(302)
            self.send_header("Location", self.server.redirect + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _recording_server(redirect=None):
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen, server.redirect = [], redirect
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d" % server.server_address[1]


class _Fixed(http.server.BaseHTTPRequestHandler):
    """Answers every GET with `self.server.body` (bytes), and records the path."""

    def do_GET(self):
        self.server.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, *args):
        pass


class ClientSlurmJob(unittest.TestCase):
    """/api/v1/slurm/job answers a gpu-trace (JSON lines), not JSON: read as a
    gpulens.Trace, or the bytes as sent. A body in this shape stands in for an
    agent whose history saw a job (tests/e2e/slurm_multinode.sh has real ones)."""

    PART = (b'{"format": "gpu-trace", "version": 1, "devices": [{"index": 0}], '
            b'"x_slurm_job": {"node": "n1", "job": "4242", "gpus": [0]}}\n'
            b'{"t": 1700000000.5, "gpu": 0, "sm_active": 40.5}\n'
            b'{"t": 1700000001.5, "gpu": 0, "sm_active": 41.5}\n')

    def serve(self, body):
        server = http.server.HTTPServer(("127.0.0.1", 0), _Fixed)
        server.seen, server.body = [], body
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return server, gpulens.Client("http://127.0.0.1:%d" % server.server_address[1])

    def test_a_part_reads_as_a_trace_or_as_bytes(self):
        server, client = self.serve(self.PART)
        trace = client.slurm_job("4242_7")
        self.assertEqual(trace.header["x_slurm_job"]["job"], "4242")
        self.assertEqual(trace.series("sm_active", gpu=0)[1], [40.5, 41.5])
        self.assertEqual(client.slurm_job(4242, raw=True), self.PART)
        self.assertEqual(server.seen, ["/api/v1/slurm/job?id=4242_7", "/api/v1/slurm/job?id=4242"])

    def test_an_answer_that_is_no_trace_is_an_agent_error(self):
        _, client = self.serve(b"<html>a proxy's page</html>\n")
        with self.assertRaises(gpulens.AgentError) as caught:
            client.slurm_job(4242)
        self.assertIn("the answer is not a gpu-trace", caught.exception.message)


class ClientRedirects(unittest.TestCase):
    """Issue 47, 13: the Client sent its basic-auth credentials to wherever a
    redirect pointed, another port included."""

    def test_credentials_never_follow_a_redirect_to_another_origin(self):
        elsewhere, elsewhere_url = _recording_server()
        agent, agent_url = _recording_server(redirect=elsewhere_url)
        try:
            gpulens.Client(agent_url, username="alice", password="secret", timeout=10).version()
        finally:
            for server in (agent, elsewhere):
                server.shutdown()
                server.server_close()
        self.assertTrue(agent.seen[0].startswith("Basic "))
        self.assertEqual(elsewhere.seen, [None])

    def test_a_redirect_within_the_agent_keeps_them(self):
        agent, agent_url = _recording_server()
        agent.redirect = agent_url + "/moved"
        try:
            with self.assertRaises(gpulens.AgentError):  # it redirects for ever: urllib stops
                gpulens.Client(agent_url, username="alice", password="secret", timeout=10).version()
        finally:
            agent.shutdown()
            agent.server_close()
        self.assertGreater(len(agent.seen), 1)
        self.assertTrue(all(a and a.startswith("Basic ") for a in agent.seen))


class ClientNoAnswer(unittest.TestCase):
    def test_nothing_listening(self):
        # A bound socket that does not listen: connections to it are refused,
        # and no other test can take the port meanwhile.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            url = "http://127.0.0.1:%d" % s.getsockname()[1]
            with self.assertRaises(gpulens.AgentUnreachable) as caught:
                gpulens.Client(url, timeout=5).version()
        self.assertEqual(caught.exception.status, 0)
        self.assertIn("refused", caught.exception.message.lower())

    def test_a_silent_server_times_out(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(4)  # accepted by the kernel, never answered
            url = "http://127.0.0.1:%d" % s.getsockname()[1]
            with self.assertRaises(gpulens.AgentUnreachable) as caught:
                gpulens.Client(url, timeout=0.5).version()
        self.assertIn("no answer", caught.exception.message)

    def test_an_answer_trickled_a_byte_at_a_time_is_cut_at_the_timeout(self):
        # Issue 47, 13: the timeout bounded each read, so a server sending a byte
        # every 0.2 s held the client as long as it liked (here 60 s of headers).
        # Now the whole request: asserted well under the trickle's 60 s.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            url = "http://127.0.0.1:%d" % s.getsockname()[1]
            stop = threading.Event()

            def trickle():
                conn, _ = s.accept()
                with conn:
                    conn.sendall(b"HTTP/1.1 200 OK\r\n")
                    for _ in range(300):
                        if stop.wait(0.2):
                            return
                        try:
                            conn.sendall(b"X")
                        except OSError:
                            return

            server = threading.Thread(target=trickle, daemon=True)
            server.start()
            started = time.monotonic()
            try:
                with self.assertRaises(gpulens.AgentUnreachable) as caught:
                    gpulens.Client(url, timeout=1).version()
            finally:
                stop.set()
            took = time.monotonic() - started
        self.assertIn("no answer within 1 s", caught.exception.message)
        self.assertLess(took, 30)

    def test_bad_urls_and_options(self):
        for kwargs in ({"url": "127.0.0.1:9401"}, {"url": "ftp://x"},
                       {"username": "u"}, {"ca_file": "ca.crt"}):
            with self.assertRaises(ValueError):
                gpulens.Client(**kwargs)


class ClientTlsAndAuth(support.TempDirTest):
    def setUp(self):
        super().setUp()
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
             "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout",
             self.path("tls.key"), "-out", self.path("tls.crt")],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        digest = subprocess.run([support.serve_bin(), "--hash-password"], input=b"s3cret\n",
                                stdout=subprocess.PIPE, check=True, timeout=60).stdout
        digest = digest.decode().strip()
        self.assertTrue(digest.startswith("$2"), digest)
        self.write("web.yml", "tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\n"
                   "basic_auth_users:\n  trainer: '%s'\n" % digest)
        self.agent = support.Agent(["--replay", support.CALIBRATION, "--speed", "0",
                                    "--no-history", "--kube-log-dir", "", "--web-config",
                                    self.path("web.yml")], self.tmp)
        self.addCleanup(self.agent.stop)
        self.assertTrue(self.agent.url.startswith("https://"), self.agent.url)

    def test_https_with_the_ca_and_the_password(self):
        client = gpulens.Client(self.agent.url, username="trainer", password="s3cret",
                                ca_file=self.path("tls.crt"))
        self.assertEqual(client.version()["version"], gpulens.__version__)
        self.assertEqual(client.devices()["devices"][0]["gpu"], 0)

    def test_a_wrong_password_is_401(self):
        for user, password in (("trainer", "wrong"), ("nobody", "s3cret")):
            client = gpulens.Client(self.agent.url, username=user, password=password,
                                    ca_file=self.path("tls.crt"))
            with self.assertRaises(gpulens.AgentError) as caught:
                client.latest()
            self.assertEqual(caught.exception.status, 401)
        with self.assertRaises(gpulens.AgentError) as caught:
            gpulens.Client(self.agent.url, ca_file=self.path("tls.crt")).latest()
        self.assertEqual(caught.exception.status, 401)

    def test_an_unknown_certificate_is_refused_unless_told(self):
        with self.assertRaises(gpulens.AgentUnreachable) as caught:
            gpulens.Client(self.agent.url, username="trainer", password="s3cret").version()
        self.assertIn("certificate", caught.exception.message.lower())
        insecure = gpulens.Client(self.agent.url, username="trainer", password="s3cret",
                                  verify=False)
        self.assertEqual(insecure.version()["api"], "v1")


if __name__ == "__main__":
    unittest.main()
