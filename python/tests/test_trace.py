# SPDX-License-Identifier: Apache-2.0
"""The recording reader: the reference recordings, every malformed case, and
the same verdict as gpulens' own reader (file and line) on each."""

import io
import json
import os
import subprocess
import threading

import gpulens
from gpulens import trace as trace_module

from . import support

HEADER = json.dumps({"format": "gpu-trace", "version": 1, "interval_s": 1,
                     "devices": [{"index": 0, "uuid": "GPU-a", "name": "NVIDIA H100"},
                                 {"index": 1, "uuid": "GPU-b", "name": "NVIDIA H100"}]})
S0 = '{"t": 100.0, "gpu": 0, "gpu_util": 90, "sm_active": 41.5}'
S1 = '{"t": 100.0, "gpu": 1, "gpu_util": 10, "sm_active": null, "x_error": "timeout"}'
M0 = '{"t": 100.5, "mark": "train:start", "batch": 16}'
S2 = '{"t": 101.0, "gpu": 0, "gpu_util": 95, "sm_active": 43.0, "procs": [{"pid": 7, "name": "python"}]}'
M1 = '{"t": 101.5, "mark": "train:end"}'
K0 = '{"x_kernels": 3, "pid": 7, "kernels": []}'
GOOD = [HEADER, S0, S1, M0, S2, K0, M1]


def lines(*rows):
    return "\n".join(rows) + "\n"


class ReferenceRecordings(support.TempDirTest):
    def test_calibration_recording_reads_as_its_lines_say(self):
        with open(support.CALIBRATION, encoding="utf-8") as f:
            raw = [json.loads(line) for line in f if line.strip()]
        trace = gpulens.read_trace(support.CALIBRATION)
        self.assertEqual(trace.header, raw[0])
        self.assertEqual(trace.gpus, [0])
        self.assertEqual(trace.warnings, [])
        self.assertEqual(trace.skipped, 0)
        raw_samples = [r for r in raw[1:] if "gpu" in r and "mark" not in r]
        raw_marks = [r for r in raw[1:] if "mark" in r]
        self.assertEqual(len(trace.samples), len(raw_samples))
        self.assertEqual(len(trace.samples), 734)
        self.assertEqual(len(trace.marks), len(raw_marks))
        for sample, line in zip(trace.samples, raw_samples):
            expected = {k: v for k, v in line.items() if v is not None}
            self.assertEqual(sample.as_dict(), expected)
        self.assertEqual([m.as_dict() for m in trace.marks], raw_marks)
        times, sm = trace.series("sm_active", gpu=0)
        self.assertEqual(len(times), 734)
        self.assertEqual(sm, [r["sm_active"] for r in raw_samples if "sm_active" in r])
        self.assertEqual(trace.series("sm_active"), {0: (times, sm)})
        self.assertEqual(trace.sample_dicts(0)[0], {k: v for k, v in raw_samples[0].items()
                                                    if v is not None})
        names = [p[0] for p in trace.phases()]
        self.assertEqual(names[:3], ["idle", "one_sm", "quarter_sm"])
        self.assertTrue(all(end is not None and end > start for _, start, end in trace.phases()))

    def test_steps_and_phases_of_a_training_recording(self):
        trace = gpulens.read_trace(support.REPO + "/examples/train-good.trace.jsonl")
        steps = trace.steps()
        self.assertEqual(len(steps), 884)
        self.assertTrue(all("flops" in s.fields for s in steps))
        self.assertEqual([p[0] for p in trace.phases()], ["train"])

    def test_two_gpus(self):
        trace = gpulens.read_trace(support.MULTI_GPU)
        self.assertEqual(trace.gpus, [0, 1])
        series = trace.series("power_w")
        self.assertEqual(sorted(series), [0, 1])
        self.assertEqual(len(series[0][0]), len(trace.samples_of(0)))

    def test_kernel_records_are_kept_raw_and_not_yielded(self):
        path = support.REPO + "/tests/fixtures/kernels/train-good-h100.trace.jsonl"
        trace = gpulens.read_trace(path)
        self.assertEqual(len(trace.kernel_records), 1)
        self.assertEqual(trace.kernel_records[0]["x_kernels"], 1)  # this fixture: version 1
        self.assertIn("kernels", trace.kernel_records[0])

    def test_streaming_in_file_order(self):
        path = self.write("t.jsonl", lines(*GOOD))
        with gpulens.open_trace(path) as reader:
            self.assertEqual(reader.header["devices"][1]["uuid"], "GPU-b")
            events = list(reader)
            self.assertEqual(reader.kernel_record_count, 1)
        self.assertEqual([type(e).__name__ for e in events],
                         ["Sample", "Sample", "Mark", "Sample", "Mark"])
        self.assertEqual(events[1].metrics, {"gpu_util": 10})  # null: not measured
        self.assertEqual(events[1].extra, {"x_error": "timeout"})
        self.assertEqual(events[2].fields, {"batch": 16})
        self.assertEqual(events[3].procs, [{"pid": 7, "name": "python"}])

    def test_streaming_keeps_no_kernel_lines_unless_asked(self):
        # Issue 47, 13: open_trace kept every kernel line while streaming (a 48 MB
        # recording held 1.15 GB). Streaming counts them; read_trace keeps them.
        head = lines(*GOOD).splitlines()[0]
        record = json.dumps({"x_kernels": 4, "record": "chunk", "seq": 1, "kernels": []})
        path = self.write("k.jsonl", "\n".join([head] + [record] * 1000) + "\n")
        with gpulens.open_trace(path) as reader:
            self.assertEqual(list(reader), [])
            self.assertEqual(reader.kernel_records, [])
            self.assertEqual(reader.kernel_record_count, 1000)
        with gpulens.open_trace(path, keep_kernel_records=True) as reader:
            list(reader)
            self.assertEqual(len(reader.kernel_records), 1000)
        self.assertEqual(len(gpulens.read_trace(path).kernel_records), 1000)

    def test_file_objects_binary_and_text(self):
        text = lines(*GOOD)
        for f in (io.BytesIO(text.encode()), io.StringIO(text)):
            trace = gpulens.read_trace(f)
            self.assertEqual(len(trace.samples), 3)
            self.assertEqual(trace.name, "<stream>")

    def test_crlf_and_blank_lines(self):
        path = self.write("t.jsonl", "\r\n".join([HEADER, "", S0, "  ", M0]) + "\r\n\n")
        trace = gpulens.read_trace(path)
        self.assertEqual((len(trace.samples), len(trace.marks)), (1, 1))

    def test_metrics_list_is_gpulens_own(self):
        # src/core/metric.cpp is the single source of truth for metric keys.
        import re
        with open(support.REPO + "/src/core/metric.cpp", encoding="utf-8") as f:
            keys = re.findall(r'\{Metric::\w+, "(\w+)"', f.read())
        self.assertEqual(tuple(keys), gpulens.METRICS)


class SharedRules(support.TempDirTest):
    """data/trace_rules.json is the one table of ranges and limits: this reader
    reads it (the package's trace_rules.json), gpulens' own holds the same as
    constants (tests/unit/core/trace_rules_test.cpp checks them against it).
    Here: this reader follows the table, and both readers drop the same."""

    def table(self):
        with open(os.path.join(support.REPO, "data", "trace_rules.json"), encoding="utf-8") as f:
            return json.load(f)

    def test_the_reader_uses_the_table(self):
        t = self.table()
        self.assertEqual(gpulens.METRICS, tuple(m["key"] for m in t["metrics"]))
        for m in t["metrics"]:
            self.assertEqual(trace_module.RANGES[m["key"]], (m["min"], m["max"], m["tolerance"]))
        self.assertEqual((trace_module.EARLIEST_TIME, trace_module.LATEST_TIME),
                         (t["time"]["earliest"], t["time"]["latest"]))
        self.assertEqual(
            (trace_module.MAX_LINE_BYTES, trace_module.MAX_JSON_DEPTH, trace_module.MAX_DEVICES,
             trace_module.MAX_PROCS_PER_SAMPLE),
            (t["limits"]["max_line_bytes"], t["limits"]["max_json_depth"],
             t["limits"]["max_devices"], t["limits"]["max_procs_per_sample"]))
        self.assertEqual([k for _, k in trace_module._FILE_KINDS], t["refused_file_kinds"])

    def test_out_of_range_readings_and_times_are_dropped_as_gpulens_drops_them(self):
        # Per metric, from the table: a reading at the edge of its tolerance
        # (clamped, kept) and one past it on each side (dropped); a sample and a
        # mark outside 1900..2200.
        rows, kept = [HEADER], []
        t = 1700000000.0
        for key, (low, high, tolerance) in trace_module.RANGES.items():
            step = max(1.0, abs(high) * 1e-3)
            for value in (high + tolerance, low - tolerance, high + tolerance + step,
                          low - tolerance - step):
                t += 1
                rows.append(json.dumps({"t": t, "gpu": 0, key: value}))
            kept += [(key, high), (key, low)]
        rows.append('{"t": 1e18, "gpu": 0, "gpu_util": 50}')
        rows.append('{"t": -3e9, "mark": "step"}')
        rows.append(json.dumps({"t": t + 1, "mark": "done"}))
        path = self.write("ranges.jsonl", lines(*rows))
        trace = gpulens.read_trace(path)
        got = [(k, v) for s in trace.samples for k, v in s.metrics.items()]
        self.assertEqual(got, kept)
        self.assertEqual([m.name for m in trace.marks], ["done"])
        n = 2 * len(trace_module.RANGES)
        self.assertEqual(trace.warnings, [
            "%s: %d reading(s) out of range dropped (first: line 4, gpu_util 101.5); the ranges "
            "are in docs/trace-format.md" % (path, n),
            "%s: 2 line(s) with a time outside 1900..2200 dropped (first: line %d, t 1e+18)"
            % (path, len(rows) - 2)])
        # gpulens' own reader, on the same file, says the same words.
        r = subprocess.run([support.gpulens_bin(), "report", "--format", "json", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        said = r.stdout.decode() + r.stderr.decode()
        for warning in trace.warnings:
            self.assertIn(warning, said)


# (name, lines, the 1-based line gpulens names, words of the reason)
MALFORMED = [
    ("bad_json", [HEADER, S0, "{not json", S2], 3, "not valid JSON"),
    ("cut_in_the_middle", [HEADER, S0, '{"t": 100.0, "gpu": 1, "gpu_ut', S2], 3,
     "not valid JSON"),
    ("array", [HEADER, "[1, 2]", S0], 2, "not a JSON object"),
    ("unknown_gpu", [HEADER, S0, '{"t": 1, "gpu": 2, "gpu_util": 1}', S2], 3,
     "which the header does not describe"),
    ("metric_text", [HEADER, '{"t": 1, "gpu": 0, "gpu_util": "90%"}', S2], 2,
     '"gpu_util" must be a number'),
    ("gpu_float", [HEADER, S0, S1, '{"t": 1, "gpu": 0.5}', S2], 4, 'integer "gpu"'),
    ("no_time", [HEADER, '{"gpu": 0, "gpu_util": 1}', S2], 2, 'numeric "t"'),
    ("mark_without_time", [HEADER, S0, '{"mark": "x"}', S2], 3, 'string "mark" and a numeric'),
    ("mark_not_text", [HEADER, '{"t": 1, "mark": 5}', S2], 2, 'string "mark"'),
    ("neither", [HEADER, S0, '{"t": 1, "note": "x"}', S2], 3, "neither a sample"),
    ("procs_not_list", [HEADER, '{"t": 1, "gpu": 0, "procs": {}}', S2], 2, '"procs" is not'),
    ("proc_without_pid", [HEADER, '{"t": 1, "gpu": 0, "procs": [{"name": "x"}]}', S2], 2,
     '"pid"'),
    ("nested_65", [HEADER, S0, '{"t": 1, "gpu": 0, "x_deep": %s%s}' % ("[" * 65, "]" * 65), S2],
     3, "nested deeper than 64 levels"),
]


class Malformed(support.TempDirTest):
    def test_each_case_names_file_and_line(self):
        for name, rows, line, reason in MALFORMED:
            with self.subTest(name):
                path = self.write(name + ".jsonl", lines(*rows))
                with self.assertRaises(gpulens.TraceError) as caught:
                    gpulens.read_trace(path)
                e = caught.exception
                self.assertEqual((e.path, e.line), (path, line))
                self.assertTrue(str(e).startswith("%s:%d: " % (path, line)), str(e))
                self.assertIn(reason, str(e))
                self.assertIsInstance(e, ValueError)

    def test_lenient_skips_and_counts(self):
        for name, rows, _, _ in MALFORMED:
            with self.subTest(name):
                path = self.write(name + ".jsonl", lines(*rows))
                trace = gpulens.read_trace(path, lenient=True)
                self.assertEqual(trace.skipped, 1)
                self.assertEqual(trace.warnings, ["%s: 1 malformed line(s) skipped" % path])
                self.assertEqual(len(trace.samples) + len(trace.marks), len(rows) - 2)

    def test_gpulens_refuses_the_same_line(self):
        # The C++ reader (gpulens report) on the same files: same file and line.
        gpulens_bin = support.gpulens_bin()
        for name, rows, line, _ in MALFORMED:
            with self.subTest(name):
                path = self.write(name + ".jsonl", lines(*rows))
                r = subprocess.run([gpulens_bin, "report", "--format", "json", path],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn("%s:%d: " % (path, line), r.stderr.decode())
                lenient = subprocess.run(
                    [gpulens_bin, "report", "--format", "json", "--lenient", path],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
                self.assertEqual(lenient.returncode, 0, lenient.stderr.decode())

    def test_truncated_last_line_is_a_warning_in_both_modes(self):
        cut = S2[:25]
        for ending in ("", "\n"):
            path = self.write("cut.jsonl", lines(HEADER, S0, M0)[:-1] + "\n" + cut + ending)
            for lenient in (False, True):
                trace = gpulens.read_trace(path, lenient=lenient)
                self.assertEqual(len(trace.samples), 1)
                self.assertEqual(trace.skipped, 0)
                self.assertEqual(trace.warnings, ["%s:4: truncated last line skipped" % path])
            r = subprocess.run([support.gpulens_bin(), "report", "--format", "json", path],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr.decode())
            self.assertIn("truncated last line skipped", r.stdout.decode() + r.stderr.decode())

    def test_a_cut_line_before_others_is_an_error(self):
        path = self.write("cut.jsonl", lines(HEADER, S0[:20], S2))
        with self.assertRaises(gpulens.TraceError) as caught:
            gpulens.read_trace(path)
        self.assertEqual(caught.exception.line, 2)

    def test_nan_reads_as_not_measured(self):
        path = self.write("nan.jsonl", lines(HEADER, '{"t": 1, "gpu": 0, "power_w": NaN, '
                                             '"temp_c": 40}', '{"t": 2, "mark": "step", '
                                             '"flops": Infinity}'))
        trace = gpulens.read_trace(path)
        self.assertEqual(trace.samples[0].metrics, {"temp_c": 40})
        self.assertEqual(trace.marks[0].fields, {"flops": None})
        self.assertEqual(trace.warnings, ["%s:2: NaN/Infinity read as not measured" % path])

    def test_invalid_utf8(self):
        path = self.path("bytes.jsonl")
        with open(path, "wb") as f:
            f.write(lines(HEADER, S0).encode() + b'{"t": 1, "mark": "\xff"}\n' + S2.encode() + b"\n")
        with self.assertRaises(gpulens.TraceError) as caught:
            gpulens.read_trace(path)
        self.assertEqual(caught.exception.line, 3)
        self.assertEqual(gpulens.read_trace(path, lenient=True).skipped, 1)

    def test_a_line_past_the_limit(self):
        path = self.path("long.jsonl")
        with open(path, "w") as f:
            f.write(lines(HEADER, S0))
            f.write('{"t": 1, "gpu": 0, "x_pad": "%s"}\n' % ("x" * trace_module.MAX_LINE_BYTES))
            f.write(lines(S2))
        with self.assertRaises(gpulens.TraceError) as caught:
            gpulens.read_trace(path)
        self.assertEqual(caught.exception.line, 3)
        self.assertIn("longer than", str(caught.exception))
        trace = gpulens.read_trace(path, lenient=True)
        self.assertEqual((trace.skipped, len(trace.samples)), (1, 2))


class NotRegularFiles(support.TempDirTest):
    """Issue 47, 13: read_trace("/dev/zero") spun for ever and a FIFO blocked the
    open; gpulens's own reader refuses both at once. Each read runs in a daemon
    thread, so that a regression fails here instead of hanging the suite."""

    def refused(self, path):
        outcome = []

        def read():
            try:
                gpulens.read_trace(path)
                outcome.append("read")
            except gpulens.TraceError as e:
                outcome.append(str(e))

        worker = threading.Thread(target=read, daemon=True)
        worker.start()
        worker.join(60)
        self.assertFalse(worker.is_alive(), "still reading %s after 60 s" % path)
        return outcome[0]

    def test_a_device_or_a_fifo_is_refused_at_once(self):
        self.assertIn("not a regular file (a character device)", self.refused("/dev/zero"))
        fifo = os.path.join(self.tmp, "trace.fifo")
        os.mkfifo(fifo)
        self.assertIn("not a regular file (a FIFO)", self.refused(fifo))
        self.assertIn("not a regular file (a directory)", self.refused(self.tmp))
        link = os.path.join(self.tmp, "zero.jsonl")
        os.symlink("/dev/zero", link)
        self.assertIn("not a regular file (a character device)", self.refused(link))


class Headers(support.TempDirTest):
    CASES = [
        ("empty", "", None, "empty (expected a gpu-trace header on line 1)"),
        ("not_json", "hello\n", 1, "the header is not valid JSON"),
        ("other_format", '{"format": "csv", "version": 1}\n', 1, "not a gpu-trace file"),
        ("version_2", '{"format": "gpu-trace", "version": 2}\n', 1,
         "unsupported gpu-trace version 2 (this gpulens reads version 1)"),
        ("no_version", '{"format": "gpu-trace"}\n', 1, "version (missing)"),
        ("devices_text", '{"format": "gpu-trace", "version": 1, "devices": "x"}\n', 1,
         '"devices" is not a list'),
        ("device_no_index", '{"format": "gpu-trace", "version": 1, "devices": [{}]}\n', 1,
         'numeric "index"'),
    ]

    def test_refused_headers(self):
        for name, text, line, reason in self.CASES:
            with self.subTest(name):
                path = self.write(name + ".jsonl", text)
                for lenient in (False, True):  # lenient never forgives the header
                    with self.assertRaises(gpulens.TraceError) as caught:
                        gpulens.read_trace(path, lenient=lenient)
                    self.assertEqual(caught.exception.line, line)
                    self.assertIn(reason, str(caught.exception))

    def test_missing_file(self):
        with self.assertRaises(gpulens.TraceError) as caught:
            gpulens.read_trace(self.path("nope.jsonl"))
        self.assertIn("nope.jsonl: cannot open: No such file", str(caught.exception))

    def test_no_devices_listed_accepts_any_index_below_1024(self):
        path = self.write("t.jsonl", lines('{"format": "gpu-trace", "version": 1}',
                                           '{"t": 1, "gpu": 5}', '{"t": 1, "gpu": 1024}'))
        with self.assertRaises(gpulens.TraceError) as caught:
            gpulens.read_trace(path)
        self.assertEqual(caught.exception.line, 3)
        self.assertEqual(gpulens.read_trace(path, lenient=True).gpus, [5])
