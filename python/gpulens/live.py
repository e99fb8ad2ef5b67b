# SPDX-License-Identifier: Apache-2.0
"""The GPUs of this machine from inside a job or notebook: devices, their live
readings, the processes on them, and a collector of a block's means.

    import gpulens

    for d in gpulens.devices():                  # NVML directly (ctypes)
        print(d.index, d.name, d.reading())      # {"gpu_util": 97.0, "power_w": 612.4, ...}
    gpulens.processes()                          # [{"gpu", "pid", "used_mib", "name"}]

    with gpulens.collect(interval=0.5) as c:     # sampled on a background thread
        train_one_epoch()
    wandb.log(c.metrics())                       # {"gpu0/gpu_util_mean": 93.1, ...}

    gpulens.devices(agent="http://127.0.0.1:9401")   # the node agent's readings instead:
                                                     # sm_active, tensor_active... (DCGM/GPM)

Readings use gpulens' metric keys (docs/trace-format.md); a key absent was not
measured. NVML gives gpu_util, mem_util, mem_used_mib, power_w, temp_c and the
clocks; the agent gives whatever it samples, the activity counters too.
"""

import collections
import math
import threading
import time

from . import nvml as _nvml
from .client import Client

__all__ = ["Device", "devices", "processes", "readings", "collect", "Collector"]


class _NvmlSource:
    name = "nvml"

    def __init__(self):
        self.lib = _nvml.library()

    def identities(self):
        return [self.lib.identity(i) for i in range(self.lib.count())]

    def readings(self):
        return {i: self.lib.reading(i) for i in range(self.lib.count())}

    def reading(self, index):
        return self.lib.reading(index)

    def processes(self):
        out = []
        for gpu in range(self.lib.count()):
            for pid, used in self.lib.processes(gpu):
                out.append({"gpu": gpu, "pid": pid,
                            "used_mib": None if used is None else used / (1 << 20),
                            "name": _process_name(pid)})
        return out


class _AgentSource:
    name = "agent"

    def __init__(self, agent, timeout):
        self.client = agent if isinstance(agent, Client) else Client(agent, timeout=timeout)

    def identities(self):
        # The agent says more (architecture, SM count, PCIe, NVLink): kept, with
        # the keys NVML's identities use for what both say.
        out = []
        for d in self.client.devices().get("devices", []):
            entry = dict(d)
            entry["index"] = d["gpu"]
            if "mem_total_mib" in d:
                entry["memory_total_mib"] = d["mem_total_mib"]
            out.append(entry)
        return out

    def readings(self):
        return {g["gpu"]: {k: v for k, v in g.get("metrics", {}).items()
                           if isinstance(v, (int, float)) and not isinstance(v, bool)}
                for g in self.client.latest().get("gpus", [])}

    def reading(self, index):
        return self.readings().get(index, {})

    def processes(self):
        out = []
        for g in self.client.latest().get("gpus", []):
            for p in g.get("processes", []) or []:
                out.append({"gpu": g["gpu"], "pid": p.get("pid"), "used_mib": p.get("used_mib"),
                            "name": p.get("name")})
        return out


def _source(agent=None, timeout=5.0):
    """The agent at `agent` (a URL or a Client) when given, else NVML."""
    if agent is not None:
        return _AgentSource(agent, timeout)
    return _NvmlSource()


def _process_name(pid):
    try:
        with open("/proc/%d/comm" % pid, encoding="utf-8", errors="replace") as f:
            return f.read().strip() or None
    except OSError:  # gone, or another namespace's
        return None


class Device:
    """One GPU: `index`, `name`, `uuid` and what the source says of its limits
    (`info`); reading() and processes() ask the source again each call."""

    def __init__(self, source, info):
        self._source = source
        self.info = info
        self.index = info["index"]
        self.name = info.get("name")
        self.uuid = info.get("uuid")

    def reading(self):
        """{metric: value} now; absent keys were not measured."""
        return self._source.reading(self.index)

    def processes(self):
        return [p for p in self._source.processes() if p["gpu"] == self.index]

    def __repr__(self):
        return "Device(%d, %r)" % (self.index, self.name)


def devices(agent=None, timeout=5.0):
    """The GPUs, as Device objects. Raises gpulens.NvmlError without NVML (no
    driver) and gpulens.AgentUnreachable when the agent does not answer
    within `timeout` seconds."""
    source = _source(agent, timeout)
    return [Device(source, info) for info in source.identities()]


def readings(agent=None, timeout=5.0):
    """{gpu index: {metric: value}} of every GPU, now."""
    return _source(agent, timeout).readings()


def processes(agent=None, timeout=5.0):
    """[{"gpu", "pid", "used_mib", "name"}] of the compute processes on the GPUs."""
    return _source(agent, timeout).processes()


class _Stats:
    __slots__ = ("n", "total", "low", "high")

    def __init__(self):
        self.n, self.total, self.low, self.high = 0, 0.0, math.inf, -math.inf

    def add(self, v):
        self.n += 1
        self.total += v
        self.low = min(self.low, v)
        self.high = max(self.high, v)


class Collector:
    """Samples every GPU's readings every `interval` seconds on a daemon thread
    while started, and keeps per GPU and metric the count, sum, min and max
    (memory stays flat however long it runs) and the newest `keep` samples
    (a bounded deque). metrics() is the window's summary as one flat dict, for
    W&B, TensorBoard or a log line; reset() starts a new window.

    The first reading is taken in start(), so that a failing source (no NVML,
    an agent that is down) raises there, in words, instead of leaving an empty
    summary; later failures are counted in `errors` (the newest in
    `last_error`) and never raise into the job."""

    def __init__(self, interval=0.5, gpus=None, agent=None, keep=1000, timeout=None):
        if not interval > 0:
            raise ValueError("interval: seconds above 0, not %r" % (interval,))
        if not (isinstance(keep, int) and keep >= 0):
            raise ValueError("keep: how many samples to keep (0 or more), not %r" % (keep,))
        self.interval = float(interval)
        self.gpus = None if gpus is None else set([gpus] if isinstance(gpus, int) else gpus)
        # An agent's answer must come within the interval (and a second), or the
        # thread would fall behind; stop() waits no longer than that either.
        self._source = _source(agent, timeout or max(1.0, self.interval + 1.0))
        self._samples = collections.deque(maxlen=keep)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self.errors = 0
        self.last_error = None
        self._reset_window()

    def _reset_window(self):
        self._stats = {}
        self._ticks = 0
        self._window_start = time.monotonic()
        self._window_end = None

    def start(self):
        if self._thread is not None:
            raise RuntimeError("the collector is already running")
        with self._lock:
            self._reset_window()
        self._sample(raise_errors=True)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="gpulens-collect", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        """Stops sampling (after one last reading) and returns metrics()."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self._sample(raise_errors=False)
            with self._lock:
                self._window_end = time.monotonic()
        return self.metrics()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def reset(self):
        """Starts a new window (a Lightning/Trainer logging step); returns the
        summary of the window that ended."""
        with self._lock:
            summary = self._summary()
            self._reset_window()
        return summary

    def metrics(self):
        """{"gpu0/gpu_util_mean": ..., "gpu0/gpu_util_min", "gpu0/gpu_util_max",
        ..., "gpulens/samples": ticks, "gpulens/seconds": window length}."""
        with self._lock:
            return self._summary()

    def samples(self):
        """The newest samples kept: [(unix time, gpu, {metric: value})]."""
        with self._lock:
            return list(self._samples)

    def _summary(self):
        out = {}
        for (gpu, metric), s in sorted(self._stats.items()):
            out["gpu%d/%s_mean" % (gpu, metric)] = s.total / s.n
            out["gpu%d/%s_min" % (gpu, metric)] = s.low
            out["gpu%d/%s_max" % (gpu, metric)] = s.high
        end = self._window_end if self._window_end is not None else time.monotonic()
        out["gpulens/samples"] = self._ticks
        out["gpulens/seconds"] = end - self._window_start
        return out

    def _run(self):
        while not self._stop.wait(self.interval):
            self._sample(raise_errors=False)

    def _sample(self, raise_errors):
        try:
            now, read = time.time(), self._source.readings()
        except Exception as e:
            if raise_errors:
                raise
            with self._lock:
                self.errors += 1
                self.last_error = e
            return
        with self._lock:
            self._ticks += 1
            for gpu, values in read.items():
                if self.gpus is not None and gpu not in self.gpus:
                    continue
                for metric, v in values.items():
                    if isinstance(v, (int, float)) and math.isfinite(v):
                        self._stats.setdefault((gpu, metric), _Stats()).add(float(v))
                self._samples.append((now, gpu, dict(values)))


def collect(interval=0.5, gpus=None, agent=None, keep=1000):
    """A Collector: `with gpulens.collect() as c: ...` then c.metrics()."""
    return Collector(interval=interval, gpus=gpus, agent=agent, keep=keep)

