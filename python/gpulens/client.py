# SPDX-License-Identifier: Apache-2.0
"""A client of the node agent's JSON API (`gpulens serve`, /api/v1; docs/serve.md).

    import gpulens

    agent = gpulens.Client("http://127.0.0.1:9401")
    for gpu in agent.latest()["gpus"]:
        print(gpu["gpu"], gpu["state"]["id"], gpu["metrics"].get("sm_active"))
    day = agent.history(from_="-24h", step="1m", metrics=["gpu_util", "sm_active"])

    # TLS and basic auth (web config): the agent's CA, a user of basic_auth_users
    agent = gpulens.Client("https://gpu-node-1:9401", ca_file="ca.crt",
                           username="prometheus", password=open("pass").read().strip())

One method per route of the agent's API (/api/v1/: index(), version(), ...,
slurm_job()) and one for /metrics; the dashboard's own pages have none. Each
returns the decoded JSON answer (dicts and lists), but metrics() (the Prometheus
text, a str) and slurm_job() (a gpulens.Trace, or the gpu-trace's bytes). An answer other than 2xx raises AgentError with the HTTP status and the
agent's own message ({"error": "..."}); no answer at all (refused, timed out,
TLS failure) raises AgentUnreachable. Times are Unix seconds (int/float; a
negative number is seconds before now), a datetime, or the agent's own text
("now", "-15m", "now-1h", RFC 3339); "now" is the newest sample's time;
durations are seconds, a timedelta, or text ("60", "15s", "1m").
Standard library only (urllib, ssl).
"""

import base64
import datetime
import http.client
import io
import json
import numbers
import socket
import ssl
import threading
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Client", "AgentError", "AgentUnreachable"]

DEFAULT_URL = "http://127.0.0.1:9401"


class AgentError(Exception):
    """The agent answered with an error: `status` (HTTP code, 0 when there was
    no answer), `message` (the agent's {"error"} text, or what went wrong), `url`."""

    def __init__(self, status, message, url, body=None):
        self.status = status
        self.message = message
        self.url = url
        self.body = body
        if status:
            text = "%s: HTTP %d: %s" % (url, status, message)
        else:
            text = "%s: %s" % (url, message)
        super().__init__(text)


class AgentUnreachable(AgentError):
    """No HTTP answer: connection refused, timeout, name or TLS failure."""

    def __init__(self, message, url):
        super().__init__(0, message, url)


def _time_param(name, value):
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.astimezone()  # a naive datetime is local time, as Python means it
        return "%.6f" % value.timestamp()
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        # Fixed notation, as the agent reads it; a negative number is seconds
        # before now (-900 = "-900", 15 minutes before the newest sample).
        return "%.6f" % float(value)
    if isinstance(value, str):
        return value
    raise TypeError("%s: Unix seconds, a datetime or text such as '-1h', not %s" % (
        name, type(value).__name__))


def _duration_param(name, value):
    if value is None:
        return None
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if not value > 0:
            raise ValueError("%s: a duration above 0 seconds, not %r" % (name, value))
        return "%.6f" % float(value)
    if isinstance(value, str):
        return value
    raise TypeError("%s: seconds, a timedelta or text such as '1m', not %s" % (
        name, type(value).__name__))


def _gpus_param(value):
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = [value]
    try:
        gpus = list(value)
    except TypeError:
        raise TypeError("gpus: a GPU index or a list of them, not %s" % type(value).__name__)
    for g in gpus:
        if not isinstance(g, numbers.Integral) or isinstance(g, bool) or g < 0:
            raise ValueError("gpus: GPU indexes (0, 1, ...), not %r" % (g,))
    if not gpus:
        raise ValueError("gpus: an empty list selects nothing; leave it out for every GPU")
    return ",".join(str(int(g)) for g in gpus)


def _metrics_param(value):
    if value is None:
        return None
    names = [value] if isinstance(value, str) else list(value)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError("metrics: metric keys such as 'sm_active', not %r" % (value,))
    return ",".join(names)


def _pids_param(value):
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = [value]
    try:
        pids = list(value)
    except TypeError:
        raise TypeError("pids: a process id or a list of them, not %s" % type(value).__name__)
    if not pids or not all(isinstance(p, numbers.Integral) and not isinstance(p, bool) and p > 0
                           for p in pids):
        raise ValueError("pids: process ids (positive integers), not %r" % (value,))
    return ",".join(str(int(p)) for p in pids)


def _count_param(name, value, most):
    if value is None:
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or not 1 <= value <= most:
        raise ValueError("%s: a number from 1 to %d, not %r" % (name, most, value))
    return str(int(value))


class Client:
    """The agent at `url` (scheme, host and port; default http://127.0.0.1:9401).

    username/password: basic auth (sent with every request). ca_file: PEM
    certificates to trust for https (else the system's); cert_file/key_file: a
    client certificate, for agents that ask for one (client_auth_type);
    verify=False accepts any certificate (tests only). timeout: seconds for
    the whole request, connecting, redirects and the answer included (an agent
    that trickles its answer a byte at a time cannot hold it longer). use_proxy: honour $https_proxy/$http_proxy
    (off: an agent is usually reached directly, and a job's proxy settings are
    meant for the internet)."""

    def __init__(self, url=DEFAULT_URL, username=None, password=None, ca_file=None,
                 cert_file=None, key_file=None, verify=True, timeout=10.0, use_proxy=False):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError("url: http://HOST:PORT or https://HOST:PORT, not %r" % url)
        if (username is None) != (password is None):
            raise ValueError("basic auth needs both username and password")
        self.url = "%s://%s%s" % (parts.scheme, parts.netloc, parts.path.rstrip("/"))
        self.timeout = timeout
        self._auth = None
        if username is not None:
            token = base64.b64encode(("%s:%s" % (username, password)).encode("utf-8"))
            self._auth = "Basic " + token.decode("ascii")
        handlers = [urllib.request.ProxyHandler(None if use_proxy else {}), _HttpHandler()]
        if parts.scheme == "https":
            context = ssl.create_default_context(cafile=ca_file)
            if not verify:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            if cert_file is not None:
                context.load_cert_chain(cert_file, key_file)
            handlers.append(_HttpsHandler(context=context))
        elif ca_file is not None or cert_file is not None:
            raise ValueError("ca_file and cert_file are for https:// URLs")
        handlers.append(_AuthStaysHome())
        self._opener = urllib.request.build_opener(*handlers)

    # -- the routes ---------------------------------------------------------

    def version(self):
        """{"name": "gpulens", "version", "api": "v1"}"""
        return self._json("/api/v1/version")

    def health(self):
        """{"status": "ok"|"degraded"|"failing", "uptime_s", "source", "history"}.
        A failing agent answers 503 with this same body: it is returned, not raised."""
        return self._json("/api/v1/health", accept=(503,))

    def devices(self):
        """Host, driver and per GPU its identity, limits and unsupported metrics."""
        return self._json("/api/v1/devices")

    def latest(self):
        """Per GPU the newest sample's metrics, diagnosis state, processes, alerts."""
        return self._json("/api/v1/latest")

    def history(self, from_=None, to=None, step=None, gpus=None, metrics=None,
                min_max=False):
        """Stored series: {"from", "to", "step", "source", "series": [{"gpu", "t",
        "metrics": {key: {"mean", ["min", "max"]}}}]}. Defaults: the last hour of
        data time, about 300 points, every GPU and metric; min_max adds min/max."""
        return self._json("/api/v1/history", {
            "from": _time_param("from_", from_),
            "to": _time_param("to", to),
            "step": _duration_param("step", step),
            "gpu": _gpus_param(gpus),
            "metrics": _metrics_param(metrics),
            "stats": "all" if min_max else None,
        })

    def timeline(self, from_=None, to=None, gpus=None):
        """Runs of one diagnosis state: {"source", "from", "to", "runs": [{"gpu",
        "start", "end", "state", "throttled_share"}]}."""
        return self._json("/api/v1/timeline", {
            "from": _time_param("from_", from_),
            "to": _time_param("to", to),
            "gpu": _gpus_param(gpus),
        })

    def alerts(self, from_=None, to=None, gpus=None, limit=None):
        """{"firing": [...], "events": [...], "events_source"}; from_ defaults to
        24 h before the newest sample, limit (1-1000) to 200 events."""
        return self._json("/api/v1/alerts", {
            "from": _time_param("from_", from_),
            "to": _time_param("to", to),
            "gpu": _gpus_param(gpus),
            "limit": _count_param("limit", limit, 1000),
        })

    def kubernetes_pods(self, from_=None, to=None, gpus=None, limit=None):
        """The pods that held each GPU by the kubelet's pod-resources API, from
        the agent's history, whether they ran anything or not
        (docs/kubernetes.md): {"from", "to", "pods": [{"namespace", "pod", "gpu",
        "first", "last", "held_s"}]}, the latest first; limit (1-1000, default
        200). An agent without history answers 503 (AgentError)."""
        return self._json("/api/v1/kubernetes/pods", {
            "from": _time_param("from_", from_),
            "to": _time_param("to", to),
            "gpu": _gpus_param(gpus),
            "limit": _count_param("limit", limit, 1000),
        })

    def kernels(self, from_=None, to=None, gpus=None, pids=None, limit=None):
        """Kernel summary windows of jobs that opted in (docs/kernels-agent.md):
        {"from", "to", "source", "truncated", "windows": [{"gpu", "pid", "start",
        "end", "kernels": [...], "collectives", "copies", ...}]}, oldest first;
        limit (1-10000, default 1000) keeps the newest. An agent without
        --kernels-socket answers 503 (AgentError)."""
        return self._json("/api/v1/kernels", {
            "from": _time_param("from_", from_),
            "to": _time_param("to", to),
            "gpu": _gpus_param(gpus),
            "pid": _pids_param(pids),
            "limit": _count_param("limit", limit, 10000),
        })

    def kernels_summary(self, from_=None, to=None, gpus=None, pids=None, top=None):
        """Every kernel window of the range summed per GPU and process, kernels
        merged by name: {"from", "to", "source", "top", "processes": [{"gpu",
        "pid", "process", "kernels": [...], "other", "idle_share", ...}]}; top
        (1-32, default 6) kernels named, the rest folded into "other"."""
        return self._json("/api/v1/kernels/summary", {
            "from": _time_param("from_", from_),
            "to": _time_param("to", to),
            "gpu": _gpus_param(gpus),
            "pid": _pids_param(pids),
            "top": _count_param("top", top, 32),
        })

    def slurm_job(self, id, raw=False):
        """This node's part of Slurm job `id` from the agent's history, as a
        gpulens.Trace (the header's "x_slurm_job" says node, job, GPUs, span);
        raw=True returns the gpu-trace's bytes (JSON lines) as the agent sent
        them, for `gpulens report --slurm-job ID --part FILE`. 404 (AgentError)
        when this node's history never saw the job."""
        job = str(id)
        if not job or not all(c.isalnum() or c in "_.+" for c in job):
            raise ValueError("id: a Slurm job id such as 4242 or 4242_7, not %r" % (id,))
        _, body, url = self._get("/api/v1/slurm/job", {"id": job})
        if raw:
            return body
        from .trace import TraceError, read_trace  # the client alone needs no reader
        stream = io.BytesIO(body)
        stream.name = url
        try:
            return read_trace(stream)
        except TraceError as e:
            raise AgentError(200, "the answer is not a gpu-trace: %s" % e.reason, url,
                             body) from None

    def index(self):
        """The agent's own list of its routes: {"name", "version", "api", "docs",
        "routes": [{"path", "params", "returns"}]} (GET /api/v1/)."""
        return self._json("/api/v1/")

    def metrics(self):
        """The Prometheus text of /metrics, as a str."""
        status, body, _ = self._get("/metrics")
        return body.decode("utf-8")

    # -- plumbing -------------------------------------------------------------

    def _json(self, path, params=None, accept=()):
        status, body, url = self._get(path, params, accept)
        try:
            return json.loads(body.decode("utf-8"))
        except ValueError:
            raise AgentError(status, "the answer is not JSON: %r" % body[:200], url,
                             body) from None

    def _get(self, path, params=None, accept=()):
        query = {k: v for k, v in (params or {}).items() if v is not None}
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        if self._auth:
            request.add_header("Authorization", self._auth)
        deadline = _Deadline(self.timeout)
        _current.deadline = deadline
        try:
            with self._opener.open(request, timeout=self.timeout) as answer:
                status, body = answer.status, answer.read()
            if deadline.expired:  # cut short by the deadline: not the whole answer
                raise AgentUnreachable("no answer within %g s" % self.timeout, url)
            return status, body, url
        except urllib.error.HTTPError as e:
            body = _read_quietly(e)
            if deadline.expired:
                raise AgentUnreachable("no answer within %g s" % self.timeout, url) from None
            if e.code in accept:
                return e.code, body, url
            raise AgentError(e.code, _error_text(e, body), url, body) from None
        except AgentUnreachable:
            raise
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, ssl.SSLError,
                OSError) as e:
            if deadline.expired or isinstance(e, (socket.timeout, TimeoutError)):
                raise AgentUnreachable("no answer within %g s" % self.timeout, url) from None
            reason = e.reason if isinstance(e, urllib.error.URLError) else e
            raise AgentUnreachable(_reason(reason), url) from None
        finally:
            deadline.cancel()
            _current.deadline = None


# The deadline of the request this thread is making (one Client may serve threads).
_current = threading.local()


class _Deadline:
    """One request's time limit: when it passes, the sockets opened for the
    request (a redirect opens another) are shut down, so that a read blocked on
    an agent that trickles its answer returns at once. urllib's own timeout
    bounds each read only."""

    def __init__(self, seconds):
        self.expired = False
        self._socks = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock):
        with self._lock:
            self._socks.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def cancel(self):
        self._timer.cancel()

    def _expire(self):
        with self._lock:
            self.expired = True
            socks = list(self._socks)
        for sock in socks:
            _shut(sock)


def _shut(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _watched(connection_class):
    class Watched(connection_class):
        def connect(self):
            super().connect()
            deadline = getattr(_current, "deadline", None)
            if deadline is not None and self.sock is not None:
                deadline.watch(self.sock)

    return Watched


_WatchedHttp = _watched(http.client.HTTPConnection)
_WatchedHttps = _watched(http.client.HTTPSConnection)


class _HttpHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_WatchedHttp, req)


class _HttpsHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_WatchedHttps, req, context=self._context)


def _origin(url):
    parts = urllib.parse.urlsplit(url)
    default = 443 if parts.scheme == "https" else 80
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default


class _AuthStaysHome(urllib.request.HTTPRedirectHandler):
    """Redirects are followed as urllib does, but the basic-auth credentials go
    only to the agent's own origin (scheme, host and port): urllib copies every
    header to wherever a redirect points, so a redirect to another port or host
    was handed the password."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and _origin(new.full_url) != _origin(req.full_url):
            new.remove_header("Authorization")
        return new


def _read_quietly(http_error):
    try:
        return http_error.read()
    except Exception:
        return b""


def _error_text(http_error, body):
    """The agent's {"error": "..."} message, else the reason phrase and body."""
    try:
        message = json.loads(body.decode("utf-8")).get("error")
        if isinstance(message, str) and message:
            return message
    except Exception:
        pass
    text = body.decode("utf-8", "replace").strip()[:200]
    return "%s%s" % (http_error.reason, (": " + text) if text else "")


def _reason(reason):
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return "no answer in time (%s)" % (reason or "timed out")
    if isinstance(reason, BaseException):
        text = getattr(reason, "strerror", None) or str(reason)
        return text or type(reason).__name__
    return str(reason)
