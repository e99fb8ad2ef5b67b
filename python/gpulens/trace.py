# SPDX-License-Identifier: Apache-2.0
"""Read gpu-trace v1 recordings (`gpulens record`, `gpulens run --trace`).

The rules are gpulens' own (docs/trace-format.md, src/core/trace_reader.cpp):
line 1 is the header; then samples ({"t", "gpu", metric: value, ...}), marks
({"t", "mark", ...}) and `x_kernels` records, one JSON object per line. A
malformed line is a TraceError naming the file and line (`run.jsonl:812: not
valid JSON`) unless lenient=True, which skips and counts it. A truncated last
line (a recording cut off by a crash) is skipped with a warning in both modes.

    import gpulens

    trace = gpulens.read_trace("run.trace.jsonl")
    for gpu, (t, sm) in trace.series("sm_active").items():
        print(gpu, sum(sm) / len(sm))

    with gpulens.open_trace("big.trace.jsonl") as reader:   # streaming
        for event in reader:                                # Sample or Mark
            ...
"""

import json
import os
import pkgutil
import stat

__all__ = [
    "METRICS", "RANGES", "TraceError", "Sample", "Mark", "TraceReader", "Trace", "open_trace",
    "read_trace", "checked_reading",
]

def _load_rules():
    """data/trace_rules.json, shipped in the package as trace_rules.json (a
    link to data/ in a checkout): the one table of metric keys, ranges and
    limits that gpulens' own reader holds too (its test checks they agree)."""
    # Through the package's loader, so that the wheel also works unpacked
    # nowhere (on sys.path as a zip).
    return json.loads(pkgutil.get_data(__name__.rpartition(".")[0] or "gpulens",
                                       "trace_rules.json").decode("utf-8"))


RULES = _load_rules()
# The metric keys of src/core/metric.cpp, in its order: a sample's value for
# one of these must be a number (or null, "not measured").
METRICS = tuple(m["key"] for m in RULES["metrics"])
_METRIC_SET = frozenset(METRICS)
# Each metric's physical range (docs/trace-format.md, "Ranges"): (min, max,
# tolerance). A reading within the tolerance outside is clamped; further out
# it is dropped and counted, as gpulens does.
RANGES = {m["key"]: (float(m["min"]), float(m["max"]), float(m["tolerance"]))
          for m in RULES["metrics"]}
EARLIEST_TIME = float(RULES["time"]["earliest"])  # 1900-01-01, Unix seconds
LATEST_TIME = float(RULES["time"]["latest"])      # 2200-01-01
# src/core/input_limits.hpp: gpulens refuses longer lines, more devices, more processes.
MAX_LINE_BYTES = RULES["limits"]["max_line_bytes"]
MAX_DEVICES = RULES["limits"]["max_devices"]
MAX_PROCS_PER_SAMPLE = RULES["limits"]["max_procs_per_sample"]
MAX_JSON_DEPTH = RULES["limits"]["max_json_depth"]


def nesting_exceeds(text, max_depth=MAX_JSON_DEPTH):
    """True when `text` nests arrays/objects deeper than max_depth (brackets in
    strings do not count): src/core/input_limits.cpp's json_nesting_exceeds.
    A line with no more brackets than that cannot, and is not scanned."""
    if text.count("[") + text.count("{") <= max_depth:
        return False
    depth, i, n = 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "[{":
            depth += 1
            if depth > max_depth:
                return True
        elif c in "]}" and depth > 0:
            depth -= 1
        i += 1
    return False


def checked_reading(metric, value):
    """`value` clamped into the metric's range, or None when outside by more
    than its tolerance (src/core/value_ranges.cpp's checked_reading)."""
    low, high, tolerance = RANGES[metric]
    if value != value or value < low - tolerance or value > high + tolerance:
        return None
    return min(max(value, low), high)


def plausible_time(t):
    return EARLIEST_TIME <= t < LATEST_TIME


def _number_text(v):
    """A number as gpulens' messages print it (fmt's shortest form: 200, not 200.0)."""
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


class TraceError(ValueError):
    """A recording gpulens would refuse. `path` and `line` (1-based, or None for
    the whole file) say where; str() is `path:line: reason` as gpulens prints it."""

    def __init__(self, path, line, reason):
        self.path = path
        self.line = line
        self.reason = reason
        where = path if line is None else "%s:%d" % (path, line)
        super().__init__("%s: %s" % (where, reason))


class Sample:
    """One GPU's readings over the interval that ends at `t` (Unix seconds).
    `metrics` holds only what was measured (an absent key was not measured),
    `procs` the process list or None, `extra` every other key (x_error, x_mig...)."""

    __slots__ = ("t", "gpu", "metrics", "procs", "extra")

    def __init__(self, t, gpu, metrics, procs=None, extra=None):
        self.t = t
        self.gpu = gpu
        self.metrics = metrics
        self.procs = procs
        self.extra = extra if extra is not None else {}

    def get(self, metric, default=None):
        return self.metrics.get(metric, default)

    def as_dict(self):
        """The sample as one flat dict, as in the file ({"t", "gpu", metric: value...})."""
        d = {"t": self.t, "gpu": self.gpu}
        d.update(self.metrics)
        if self.procs is not None:
            d["procs"] = self.procs
        d.update(self.extra)
        return d

    def __repr__(self):
        return "Sample(t=%r, gpu=%r, %d metrics)" % (self.t, self.gpu, len(self.metrics))


class Mark:
    """A mark: `name` ("train:start", "train:end", "step", "xid", "job_start"...),
    its time `t` and its other `fields` (e.g. {"flops": 6.1e12})."""

    __slots__ = ("t", "name", "fields")

    def __init__(self, t, name, fields=None):
        self.t = t
        self.name = name
        self.fields = fields if fields is not None else {}

    def as_dict(self):
        d = {"t": self.t, "mark": self.name}
        d.update(self.fields)
        return d

    def __repr__(self):
        return "Mark(t=%r, name=%r, fields=%r)" % (self.t, self.name, self.fields)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_integer(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _loads(text, on_non_finite):
    # gpulens reads NaN/Infinity (which Python's json writes) as null: "not measured".
    def constant(token):
        on_non_finite()
        return None

    return json.loads(text, parse_constant=constant)


def _refuse_constant(token):
    raise ValueError("%s is not JSON" % token)


def _check_header(obj):
    """The header as a dict, or the reason gpulens refuses it."""
    if not isinstance(obj, dict):
        return "the header is not a JSON object"
    if obj.get("format") != "gpu-trace":
        return 'not a gpu-trace file (the header\'s "format" must be "gpu-trace")'
    version = obj.get("version")
    if not _is_integer(version) or version != 1:
        shown = "(missing)" if "version" not in obj else json.dumps(version)
        return "unsupported gpu-trace version %s (this gpulens reads version 1)" % shown
    devices = obj.get("devices", [])
    if not isinstance(devices, list):
        return 'the header\'s "devices" is not a list'
    if len(devices) > MAX_DEVICES:
        return "the header lists %d devices (at most %d)" % (len(devices), MAX_DEVICES)
    for d in devices:
        if not isinstance(d, dict):
            return "a device entry is not an object"
        if not _is_number(d.get("index")):
            return 'a device entry has no numeric "index"'
    return None


class TraceReader:
    """Streams a recording: `header` (a dict) is read on opening, iteration
    yields Sample and Mark objects in file order. `kernel_records` collects the
    `x_kernels` lines (raw dicts, docs/kernels.md) as they are passed when
    `keep_kernel_records` (read_trace's way); `kernel_record_count` counts them
    either way. Streaming (open_trace) keeps none by default: a 48 MB recording
    of kernel lines held 1.15 GB as dicts. `warnings` and `skipped` are complete
    once iteration ends.

    `source` is a path or a binary/text file object (its `name` is used in
    messages)."""

    def __init__(self, source, lenient=False, keep_kernel_records=True):
        self.lenient = lenient
        self.kernel_records = []
        self.kernel_record_count = 0
        self._keep_kernel_records = keep_kernel_records
        self.warnings = []
        self.skipped = 0
        self._warned_non_finite = False
        self._reported_skips = False
        self._out_of_range = 0
        self._first_out_of_range = None
        self._bad_times = 0
        self._first_bad_time = None
        self._line_no = 0
        if hasattr(source, "readline"):
            self._file = source
            self._owns = False
            self.name = str(getattr(source, "name", "<stream>"))
        else:
            self.name = os.fspath(source)
            self._file = _open_regular(self.name)
            self._owns = True
        try:
            self.header = self._read_header()
            self.devices = [d["index"] for d in self.header.get("devices", [])]
        except BaseException:
            self.close()
            raise
        self._pending = self._next_raw()

    def close(self):
        if self._owns and self._file is not None:
            self._file.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _readline(self):
        line = self._file.readline(MAX_LINE_BYTES + 1)
        if isinstance(line, str):
            line = line.encode("utf-8")
        return line

    def _next_raw(self):
        """The next physical line (bytes, with its newline) or b"" at the end;
        a line past MAX_LINE_BYTES comes back as None after its rest was read."""
        line = self._readline()
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:
                rest = self._readline()
                if not rest or rest.endswith(b"\n"):
                    break
            return None
        return line

    def _read_header(self):
        first = self._next_raw()
        if first == b"":
            raise TraceError(self.name, None, "empty (expected a gpu-trace header on line 1)")
        self._line_no = 1
        if first is None:
            raise TraceError(self.name, 1, "the header is longer than %d bytes" % MAX_LINE_BYTES)
        try:
            header = json.loads(_text(first), parse_constant=_refuse_constant)
        except (ValueError, RecursionError) as e:
            raise TraceError(self.name, 1, "the header is not valid JSON (%s)" % e) from None
        problem = _check_header(header)
        if problem:
            raise TraceError(self.name, 1, problem)
        return header

    def __iter__(self):
        return self

    def __next__(self):
        while True:
            line = self._pending
            if line == b"":
                if not self._reported_skips:
                    self._reported_skips = True
                    self._report_dropped()
                raise StopIteration
            self._line_no += 1
            self._pending = self._next_raw()
            if line is None:
                self._skip_or_fail("longer than %d bytes" % MAX_LINE_BYTES)
                continue
            try:
                text = _text(line)
            except UnicodeDecodeError:
                self._skip_or_fail("not valid UTF-8")
                continue
            if not text.strip(" \t"):
                continue
            event = self._parse(text, last_line=self._pending == b"")
            if event is not None:
                return event

    def _report_dropped(self):
        # In gpulens' words and order (src/core/trace_reader.cpp, report_dropped).
        if self._out_of_range:
            self.warnings.append(
                "%s: %d reading(s) out of range dropped (first: %s); the ranges are in "
                "docs/trace-format.md" % (self.name, self._out_of_range, self._first_out_of_range))
        if self._bad_times:
            self.warnings.append(
                "%s: %d line(s) with a time outside 1900..2200 dropped (first: %s)" % (
                    self.name, self._bad_times, self._first_bad_time))
        if self.lenient and self.skipped:
            self.warnings.append("%s: %d malformed line(s) skipped" % (self.name, self.skipped))

    def _drop_for_time(self, t):
        if not self._bad_times:
            self._first_bad_time = "line %d, t %s" % (self._line_no, _number_text(t))
        self._bad_times += 1
        return None

    def _parse(self, text, last_line):
        if nesting_exceeds(text):
            return self._skip_or_fail("nested deeper than %d levels" % MAX_JSON_DEPTH)
        non_finite = []
        try:
            obj = _loads(text, lambda: non_finite.append(True))
        except (ValueError, RecursionError) as e:
            if last_line:
                self.warnings.append("%s:%d: truncated last line skipped" % (self.name,
                                                                             self._line_no))
                return None
            return self._skip_or_fail("not valid JSON (%s)" % e)
        if non_finite and not self._warned_non_finite:
            self._warned_non_finite = True
            self.warnings.append("%s:%d: NaN/Infinity read as not measured" % (self.name,
                                                                               self._line_no))
        if not isinstance(obj, dict):
            return self._skip_or_fail("not a JSON object")
        if "mark" in obj:
            if not isinstance(obj["mark"], str) or not _is_number(obj.get("t")):
                return self._skip_or_fail('a mark needs a string "mark" and a numeric "t"')
            if not plausible_time(obj["t"]):
                return self._drop_for_time(obj["t"])
            fields = {k: v for k, v in obj.items() if k not in ("t", "mark")}
            return Mark(obj["t"], obj["mark"], fields)
        if "x_kernels" in obj:
            self.kernel_record_count += 1
            if self._keep_kernel_records:
                self.kernel_records.append(obj)
            return None
        if "gpu" in obj:
            sample, problem = self._sample(obj)
            if problem:
                return self._skip_or_fail(problem)
            if not plausible_time(sample.t):
                return self._drop_for_time(sample.t)
            self._drop_out_of_range(sample.metrics)
            return sample
        return self._skip_or_fail('neither a sample (no "gpu") nor a mark (no "mark")')

    def _drop_out_of_range(self, metrics):
        for key in METRICS:  # gpulens' order, so that "first" names the same reading
            if key not in metrics:
                continue
            value = metrics[key]
            ok = checked_reading(key, value)
            if ok is None:
                del metrics[key]
                if not self._out_of_range:
                    self._first_out_of_range = "line %d, %s %s" % (self._line_no, key,
                                                                   _number_text(value))
                self._out_of_range += 1
            elif ok != value:
                metrics[key] = ok

    def _sample(self, obj):
        t = obj.get("t")
        if not _is_number(t):
            return None, 'missing numeric "t"'
        gpu = obj["gpu"]
        if not _is_integer(gpu):
            return None, 'missing integer "gpu"'
        metrics, extra, procs = {}, {}, None
        for key, value in obj.items():
            if key in ("t", "gpu"):
                continue
            if key == "procs":
                if value is None:
                    continue
                if not isinstance(value, list):
                    return None, '"procs" is not a list'
                if len(value) > MAX_PROCS_PER_SAMPLE:
                    return None, '"procs" lists %d processes (at most %d)' % (
                        len(value), MAX_PROCS_PER_SAMPLE)
                for p in value:
                    if not isinstance(p, dict):
                        return None, 'a "procs" entry is not an object'
                    pid = p.get("pid")
                    if not _is_number(pid) or pid < 0:
                        return None, 'a "procs" entry has no valid "pid"'
                procs = value
            elif key in _METRIC_SET:
                if value is None:
                    continue  # "not measured", as some writers say it
                if not _is_number(value):
                    return None, '"%s" must be a number, got %s' % (key, json.dumps(value))
                metrics[key] = value
            else:
                extra[key] = value  # unknown keys are kept, never an error
        if self.devices:
            if gpu not in self.devices:
                return None, "a sample for GPU %d, which the header does not describe" % gpu
        elif not 0 <= gpu < MAX_DEVICES:
            return None, "GPU %d is outside 0..%d" % (gpu, MAX_DEVICES - 1)
        return Sample(t, gpu, metrics, procs, extra), None

    def _skip_or_fail(self, reason):
        if self.lenient:
            self.skipped += 1
            return None
        raise TraceError(self.name, self._line_no, reason)


_KIND_TESTS = {"a FIFO": stat.S_ISFIFO, "a character device": stat.S_ISCHR,
               "a block device": stat.S_ISBLK, "a directory": stat.S_ISDIR,
               "a socket": stat.S_ISSOCK}
# The table's kinds, in its order (gpulens' own); a kind this module cannot
# test for fails the import, not a recording later.
_FILE_KINDS = tuple((_KIND_TESTS[k], k) for k in RULES["refused_file_kinds"])


def _open_regular(name):
    """`name` opened for reading if it is a regular file (a link to one is fine),
    else a TraceError naming its kind, as gpulens's own reader says it
    (core/regular_file.cpp): /dev/zero would be read for ever and a FIFO would
    block the open until a writer came. Opened without blocking, so a FIFO is
    refused at once."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise TraceError(name, None, "cannot open: %s" % (e.strerror or e)) from e
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((k for test, k in _FILE_KINDS if test(mode)), "not a file")
            raise TraceError(name, None, "not a regular file (%s)" % kind)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _text(line):
    text = line.decode("utf-8")
    if text.endswith("\n"):
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    return text


class Trace:
    """A whole recording in memory: `header` (dict), `samples` (Sample, file
    order), `marks` (Mark), `kernel_records` (raw x_kernels dicts), `warnings`
    (truncated last line, NaN read as not measured, lenient skips) and
    `skipped` (malformed lines skipped with lenient=True)."""

    def __init__(self, header, samples, marks, kernel_records, warnings, skipped, name):
        self.header = header
        self.samples = samples
        self.marks = marks
        self.kernel_records = kernel_records
        self.warnings = warnings
        self.skipped = skipped
        self.name = name

    @property
    def devices(self):
        """The header's device entries (dicts with index, uuid, name, ...)."""
        return self.header.get("devices", [])

    @property
    def gpus(self):
        """GPU indexes: the header's, else those the samples name."""
        listed = [d["index"] for d in self.devices]
        return listed if listed else sorted({s.gpu for s in self.samples})

    def samples_of(self, gpu):
        return [s for s in self.samples if s.gpu == gpu]

    def sample_dicts(self, gpu=None):
        """Samples as flat dicts (as in the file), of one GPU or all."""
        return [s.as_dict() for s in self.samples if gpu is None or s.gpu == gpu]

    def series(self, metric, gpu=None):
        """{gpu: (times, values)} of one metric, only where it was measured; with
        `gpu`, that GPU's (times, values) alone."""
        if gpu is not None:
            times, values = [], []
            for s in self.samples:
                if s.gpu == gpu and metric in s.metrics:
                    times.append(s.t)
                    values.append(s.metrics[metric])
            return times, values
        out = {}
        for s in self.samples:
            if metric in s.metrics:
                times, values = out.setdefault(s.gpu, ([], []))
                times.append(s.t)
                values.append(s.metrics[metric])
        return out

    def marks_named(self, name):
        return [m for m in self.marks if m.name == name]

    def phases(self):
        """[(name, start, end)] from NAME:start/NAME:end pairs, in start order; a
        phase never ended has end None."""
        open_at, done = {}, []
        for m in sorted(self.marks, key=lambda m: m.t):
            if m.name.endswith(":start"):
                open_at.setdefault(m.name[:-6], []).append(m.t)
            elif m.name.endswith(":end"):
                starts = open_at.get(m.name[:-4])
                if starts:
                    done.append((m.name[:-4], starts.pop(0), m.t))
        for name, starts in open_at.items():
            done.extend((name, t, None) for t in starts)
        return sorted(done, key=lambda p: p[1])

    def steps(self):
        """The step marks, in time order."""
        return sorted(self.marks_named("step"), key=lambda m: m.t)


def open_trace(source, lenient=False, keep_kernel_records=False):
    """A TraceReader over a path or file object (use it in a `with`). Its memory
    does not grow with the recording: the `x_kernels` lines are counted
    (`kernel_record_count`), not kept, unless `keep_kernel_records`."""
    return TraceReader(source, lenient=lenient, keep_kernel_records=keep_kernel_records)


def read_trace(source, lenient=False):
    """The whole recording as a Trace; raises TraceError where gpulens would refuse it."""
    with TraceReader(source, lenient=lenient) as reader:
        samples, marks = [], []
        for event in reader:
            (samples if isinstance(event, Sample) else marks).append(event)
        return Trace(reader.header, samples, marks, reader.kernel_records, reader.warnings,
                     reader.skipped, reader.name)
