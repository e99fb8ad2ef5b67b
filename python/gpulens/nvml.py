# SPDX-License-Identifier: Apache-2.0
"""NVML through ctypes: what the in-process API (gpulens.devices(),
gpulens.collect()) reads when it reads the GPUs itself, with no compiled
extension and no package beyond the standard library.

The library is found as gpulens' own agent finds it (src/sources/nvml/
nvml_api.cpp): libnvidia-ml.so.1, then libnvidia-ml.so, through the dynamic
loader, so $LD_LIBRARY_PATH (set before Python starts) points both at another
one; the tests point both at the fake of tests/fakes/nvml_fake_lib.cpp. A
function the driver lacks, or a reading it answers NOT_SUPPORTED for, is a
reading absent ("not measured"), never a zero.

Readings carry gpulens' metric keys (docs/trace-format.md): gpu_util and
mem_util (%), mem_used_mib, power_w, temp_c, sm_clock_mhz, mem_clock_mhz.
"""

import ctypes
import threading

__all__ = ["NvmlError", "Nvml", "library"]

LIBRARY_NAMES = ("libnvidia-ml.so.1", "libnvidia-ml.so")

_SUCCESS = 0
_INSUFFICIENT_SIZE = 7
_NOT_AVAILABLE = 0xFFFFFFFFFFFFFFFF  # NVML_VALUE_NOT_AVAILABLE in a process's memory
_CLOCK_SM, _CLOCK_MEM = 1, 2
_TEMPERATURE_GPU = 0
_MIB = 1 << 20


class NvmlError(RuntimeError):
    """NVML could not be loaded or answered with an error; the text says which
    call and what to do."""


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _MemoryV2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong),
                ("reserved", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


_MEMORY_V2_VERSION = ctypes.sizeof(_MemoryV2) | (2 << 24)


class _MemoryV1(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class _ProcessInfo(ctypes.Structure):
    # nvmlProcessInfo_v2_t, which the _v2 and _v3 calls fill (the unsuffixed
    # call fills an older, smaller struct: never asked for).
    _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]


class Nvml:
    """One loaded and initialised NVML. Thread-safe (NVML is); use library()."""

    def __init__(self, names=None):
        names = LIBRARY_NAMES if names is None else names
        errors = []
        self._lib = None
        for name in names:
            try:
                self._lib = ctypes.CDLL(name)
                self.path = name
                break
            except OSError as e:
                errors.append(str(e))
        if self._lib is None:
            raise NvmlError(
                "cannot load NVML (looked for %s: %s): this machine has no NVIDIA driver, "
                "or its library is not on the loader's path; install the driver, or read a "
                "machine's GPUs through its agent: gpulens.devices(agent=URL)" % (
                    " and ".join(names), "; ".join(errors)))
        init = self._function("nvmlInit_v2") or self._function("nvmlInit")
        if init is None:
            raise NvmlError("%s has no nvmlInit_v2: not an NVML library" % self.path)
        self._check(init(), "nvmlInit_v2")
        self._handles = {}

    # -- the calls ----------------------------------------------------------

    def driver_version(self):
        return self._string("nvmlSystemGetDriverVersion", None, 80)

    def count(self):
        n = ctypes.c_uint(0)
        self._check(self._call("nvmlDeviceGetCount_v2", ctypes.byref(n)), "nvmlDeviceGetCount_v2")
        return n.value

    def handle(self, index):
        if index not in self._handles:
            h = ctypes.c_void_p()
            rc = self._call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(index), ctypes.byref(h))
            self._check(rc, "nvmlDeviceGetHandleByIndex_v2(%d)" % index)
            self._handles[index] = h
        return self._handles[index]

    def identity(self, index):
        """{"index", "name", "uuid", "memory_total_mib", "power_limit_w"}; what
        NVML does not say is absent."""
        h = self.handle(index)
        out = {"index": index}
        for key, fn in (("name", "nvmlDeviceGetName"), ("uuid", "nvmlDeviceGetUUID")):
            value = self._string(fn, h, 96)
            if value is not None:
                out[key] = value
        memory = self._memory(h)
        if memory is not None:
            out["memory_total_mib"] = memory[0] / _MIB
        limit = self._uint("nvmlDeviceGetEnforcedPowerLimit", h)
        if limit is not None:
            out["power_limit_w"] = limit / 1000.0
        return out

    def reading(self, index):
        """One GPU's readings now, by gpulens' metric keys; absent: not measured."""
        h = self.handle(index)
        out = {}
        util = _Utilization()
        if self._ok(self._call("nvmlDeviceGetUtilizationRates", h, ctypes.byref(util))):
            out["gpu_util"] = float(util.gpu)
            out["mem_util"] = float(util.memory)
        memory = self._memory(h)
        if memory is not None:
            out["mem_used_mib"] = memory[1] / _MIB
        power = self._uint("nvmlDeviceGetPowerUsage", h)
        if power is not None:
            out["power_w"] = power / 1000.0
        temp = self._uint("nvmlDeviceGetTemperature", h, ctypes.c_int(_TEMPERATURE_GPU))
        if temp is not None:
            out["temp_c"] = float(temp)
        for key, clock in (("sm_clock_mhz", _CLOCK_SM), ("mem_clock_mhz", _CLOCK_MEM)):
            value = self._uint("nvmlDeviceGetClockInfo", h, ctypes.c_int(clock))
            if value is not None:
                out[key] = float(value)
        return out

    def processes(self, index):
        """[(pid, used bytes or None)] of the compute processes on GPU `index`."""
        h = self.handle(index)
        for fn in ("nvmlDeviceGetComputeRunningProcesses_v3",
                   "nvmlDeviceGetComputeRunningProcesses_v2"):
            if self._function(fn) is None:
                continue
            size = 16
            for _ in range(4):  # the list may grow between the two calls: ask again
                count = ctypes.c_uint(size)
                infos = (_ProcessInfo * size)()
                rc = self._call(fn, h, ctypes.byref(count), infos)
                if rc == _INSUFFICIENT_SIZE:
                    size = max(count.value, size) * 2
                    continue
                if not self._ok(rc):
                    return []
                return [(p.pid, None if p.usedGpuMemory == _NOT_AVAILABLE else p.usedGpuMemory)
                        for p in infos[:count.value]]
            return []
        return []

    # -- plumbing -------------------------------------------------------------

    def _function(self, name):
        try:
            fn = getattr(self._lib, name)
        except AttributeError:
            return None
        fn.restype = ctypes.c_int
        return fn

    def _call(self, name, *args):
        fn = self._function(name)
        if fn is None:
            return None  # the driver lacks it: the reading is absent
        return fn(*args)

    def _error_text(self, rc):
        fn = getattr(self._lib, "nvmlErrorString", None)
        if fn is None:
            return "error %d" % rc
        fn.restype = ctypes.c_char_p
        text = fn(ctypes.c_int(rc))
        return text.decode("utf-8", "replace") if text else "error %d" % rc

    def _check(self, rc, what):
        if rc is None:
            raise NvmlError("%s: this NVML (%s) lacks it" % (what, self.path))
        if rc != _SUCCESS:
            raise NvmlError("%s: %s (NVML error %d)" % (what, self._error_text(rc), rc))

    @staticmethod
    def _ok(rc):
        # Missing (None), not supported, not permitted: not measured. A lost
        # GPU too: no readings for it rather than an exception every tick.
        return rc == _SUCCESS

    def _uint(self, name, handle, *extra):
        value = ctypes.c_uint(0)
        rc = self._call(name, handle, *(extra + (ctypes.byref(value),)))
        return value.value if self._ok(rc) else None

    def _string(self, name, handle, size):
        buf = ctypes.create_string_buffer(size)
        args = (buf, ctypes.c_uint(size)) if handle is None else (handle, buf, ctypes.c_uint(size))
        rc = self._call(name, *args)
        return buf.value.decode("utf-8", "replace") if self._ok(rc) else None

    def _memory(self, handle):
        """(total, used) bytes: the _v2 call (which counts the driver's
        reservation apart), else the first one; None when neither answers."""
        m2 = _MemoryV2(version=_MEMORY_V2_VERSION)
        if self._ok(self._call("nvmlDeviceGetMemoryInfo_v2", handle, ctypes.byref(m2))):
            return m2.total, m2.used
        m1 = _MemoryV1()
        if self._ok(self._call("nvmlDeviceGetMemoryInfo", handle, ctypes.byref(m1))):
            return m1.total, m1.used
        return None


_lock = threading.Lock()
_loaded = None


def library():
    """The process's NVML, loaded and initialised on first use (NvmlError when
    it cannot be: no driver, no GPU, a driver/library mismatch)."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = Nvml()
        return _loaded
