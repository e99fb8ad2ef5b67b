# SPDX-License-Identifier: Apache-2.0
"""The marks writer: the exact bytes, the no-op without $GPULENS_MARKS, threads,
fork, I/O errors; and the real `gpulens run` reading what it wrote."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import unittest
from unittest import mock

import gpulens
from gpulens import marks

from . import support


def read_lines(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")


class FakeScalar:
    """A numpy/torch scalar as json cannot write it: it has .item()."""

    def __init__(self, value):
        self.value = value

    def item(self):
        return self.value


class MarksFormat(support.TempDirTest):
    def test_lines_are_the_ones_gpulens_reads(self):
        path = self.path("m.jsonl")
        w = gpulens.MarksWriter(path)
        self.assertTrue(w.mark("train:start", t=1795289341, flops_per_step=2e14, batch=16))
        self.assertTrue(w.step(flops=2e14, t=1795289342.5))
        self.assertTrue(w.step(flops=4e14, steps=2, t=1795289343))
        self.assertTrue(w.mark("train:end", t=1795289344))
        self.assertEqual(read_lines(path), [
            b'{"t":1795289341.0,"mark":"train:start","flops_per_step":200000000000000.0,'
            b'"batch":16}',
            b'{"t":1795289342.5,"mark":"step","flops":200000000000000.0}',
            b'{"t":1795289343.0,"mark":"step","flops":400000000000000.0,"steps":2}',
            b'{"t":1795289344.0,"mark":"train:end"}',
            b"",
        ])

    def test_phase_marks_start_and_end_even_when_the_block_raises(self):
        path = self.path("m.jsonl")
        w = gpulens.MarksWriter(path)
        with self.assertRaises(KeyError):
            with w.phase("eval", split="val"):
                raise KeyError("the job's own error passes through")
        lines = [json.loads(x) for x in read_lines(path) if x]
        self.assertEqual([x["mark"] for x in lines], ["eval:start", "eval:end"])
        self.assertEqual(lines[0]["split"], "val")
        self.assertNotIn("split", lines[1])
        self.assertLessEqual(lines[0]["t"], lines[1]["t"])

    def test_time_defaults_to_now(self):
        path = self.path("m.jsonl")
        with mock.patch.object(marks.time, "time", return_value=1795289350.25):
            gpulens.MarksWriter(path).step()
        self.assertEqual(read_lines(path)[0], b'{"t":1795289350.25,"mark":"step"}')

    def test_nan_and_infinity_are_written_as_null(self):
        # json.dumps would write NaN, which is not JSON: gpulens would count the
        # whole line as bad and lose the mark.
        path = self.path("m.jsonl")
        w = gpulens.MarksWriter(path)
        w.mark("step", t=1, flops=float("nan"), loss=[1.5, float("inf")])
        self.assertEqual(read_lines(path)[0],
                         b'{"t":1.0,"mark":"step","flops":null,"loss":[1.5,null]}')

    def test_scalars_of_array_libraries_are_written_as_numbers(self):
        path = self.path("m.jsonl")
        gpulens.MarksWriter(path).mark("step", t=2, loss=FakeScalar(0.5), tokens=FakeScalar(7))
        self.assertEqual(read_lines(path)[0], b'{"t":2.0,"mark":"step","loss":0.5,"tokens":7}')

    def test_step_takes_a_flops_scalar(self):
        path = self.path("m.jsonl")
        gpulens.MarksWriter(path).step(flops=FakeScalar(3e12), t=3)
        gpulens.MarksWriter(path).step(flops=12, t=4)
        self.assertEqual(read_lines(path)[:2], [b'{"t":3.0,"mark":"step","flops":3000000000000.0}',
                                                b'{"t":4.0,"mark":"step","flops":12.0}'])

    def test_contrib_shim_writes_the_same_bytes(self):
        # contrib/gpulens_marks.py, run the way scripts use it: its directory on
        # sys.path, the package not installed (loaded from ../python).
        path = self.path("m.jsonl")
        script = textwrap.dedent("""
            import sys
            sys.path.insert(0, %r)
            import gpulens_marks as gm
            assert gm.enabled()
            with gm.phase("train", flops_per_step=2e14):
                gm.step(2e14)
            gm.mark("note", t=5, text="caf\\u00e9")
            print(sys.modules["gpulens"].__file__)
        """) % os.path.join(support.REPO, "contrib")
        out = subprocess.run([sys.executable, "-c", script], cwd=self.tmp, check=True,
                             env=dict(os.environ, GPULENS_MARKS=path, PYTHONPATH=""),
                             stdout=subprocess.PIPE).stdout.decode()
        self.assertEqual(os.path.realpath(out.strip()),
                         os.path.realpath(os.path.join(support.PYTHON_DIR, "gpulens",
                                                       "__init__.py")))
        lines = read_lines(path)
        self.assertEqual([json.loads(x)["mark"] for x in lines if x],
                         ["train:start", "step", "train:end", "note"])
        self.assertEqual(lines[3], b'{"t":5.0,"mark":"note","text":"caf\\u00e9"}')

    def test_command_line_writes_one_mark(self):
        path = self.path("m.jsonl")
        for argv in (["-m", "gpulens", "mark", "step", "--flops", "6.1e12"],
                     [os.path.join(support.REPO, "contrib", "gpulens_marks.py"), "eval:start"]):
            subprocess.run([sys.executable] + argv, check=True, cwd=support.PYTHON_DIR,
                           env=dict(os.environ, GPULENS_MARKS=path))
        lines = [json.loads(x) for x in read_lines(path) if x]
        self.assertEqual([(x["mark"], x.get("flops")) for x in lines],
                         [("step", 6.1e12), ("eval:start", None)])

    def test_command_line_fails_when_the_mark_cannot_be_written(self):
        r = subprocess.run([sys.executable, "-m", "gpulens", "mark", "step"], cwd=support.PYTHON_DIR,
                           env=dict(os.environ, GPULENS_MARKS=self.path("no/such/dir/m.jsonl")),
                           stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"cannot write marks", r.stderr)


class MarksWithoutGpulens(support.TempDirTest):
    def test_every_call_is_a_no_op_without_the_variable(self):
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop(marks.ENV, None)
            self.assertFalse(gpulens.enabled())
            with mock.patch.object(marks.os, "open", side_effect=AssertionError("opened")):
                self.assertFalse(gpulens.step(flops=1e12))
                self.assertFalse(gpulens.mark("x"))
                with gpulens.phase("eval"):
                    pass
            self.assertEqual(gpulens.write_errors(), 0)

    def test_an_empty_variable_is_unset(self):
        with mock.patch.dict(os.environ, {marks.ENV: ""}):
            self.assertFalse(gpulens.enabled())
            self.assertFalse(gpulens.step())

    def test_the_variable_is_read_at_each_call(self):
        path = self.path("late.jsonl")
        w = gpulens.MarksWriter()
        with mock.patch.dict(os.environ, {marks.ENV: path}):
            self.assertTrue(w.enabled())
            self.assertTrue(w.mark("late", t=1))
        w.close()
        self.assertEqual(read_lines(path)[0], b'{"t":1.0,"mark":"late"}')


class MarksUnderLoad(support.TempDirTest):
    def test_threads_never_interleave_lines(self):
        path = self.path("m.jsonl")
        w = gpulens.MarksWriter(path)
        payload = "x" * 3000  # long lines: a torn write would show

        def worker(n):
            for i in range(200):
                w.mark("step", t=i, thread=n, payload=payload)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        lines = [json.loads(x) for x in read_lines(path) if x]
        self.assertEqual(len(lines), 1600)
        for n in range(8):
            self.assertEqual(sorted(x["t"] for x in lines if x["thread"] == n),
                             [float(i) for i in range(200)])

    @unittest.skipUnless(hasattr(os, "fork"), "POSIX only")
    def test_forked_processes_append_to_the_same_file(self):
        path = self.path("m.jsonl")
        w = gpulens.MarksWriter(path)
        w.mark("parent", t=0)  # the parent's descriptor is open across the fork
        pids = []
        for n in range(4):
            pid = os.fork()
            if pid == 0:  # child: its own lock and descriptor
                code = 0
                try:
                    for i in range(100):
                        if not w.mark("child", t=i, rank=n):
                            code = 3
                finally:
                    os._exit(code)
            pids.append(pid)
        for pid in pids:
            _, status = os.waitpid(pid, 0)
            self.assertEqual(os.waitstatus_to_exitcode(status) if hasattr(
                os, "waitstatus_to_exitcode") else status >> 8, 0)
        w.mark("parent", t=1)
        lines = [json.loads(x) for x in read_lines(path) if x]
        self.assertEqual(len(lines), 402)
        self.assertEqual([x["t"] for x in lines if x["mark"] == "parent"], [0.0, 1.0])

    def test_io_errors_are_counted_and_logged_once_never_raised(self):
        w = gpulens.MarksWriter(self.path("missing-dir/m.jsonl"))
        with self.assertLogs("gpulens", level="WARNING") as logs:
            for _ in range(5):
                self.assertFalse(w.step(flops=1e12))
        self.assertEqual(w.write_errors(), 5)
        self.assertEqual(len(logs.records), 1)
        self.assertIn("missing-dir/m.jsonl", logs.output[0])

    def test_bad_values_are_counted_never_raised(self):
        path = self.path("m.jsonl")
        w = gpulens.MarksWriter(path)
        loop = []
        loop.append(loop)  # json cannot write a list that holds itself
        with self.assertLogs("gpulens", level="WARNING") as logs:
            self.assertFalse(w.step(flops="lots"))
            self.assertFalse(w.mark("x", t="noon"))
            self.assertFalse(w.mark("x", t=1, history=loop))
        self.assertIn("flops 'lots' is not a number", logs.output[0])
        self.assertEqual(w.write_errors(), 3)
        self.assertTrue(w.mark("fine", t=1))
        self.assertEqual(read_lines(path), [b'{"t":1.0,"mark":"fine"}', b""])

    def test_a_failing_write_is_counted_and_the_next_mark_retries(self):
        path = self.path("m.jsonl")
        w = gpulens.MarksWriter(path)
        with self.assertLogs("gpulens", level="WARNING"):
            with mock.patch.object(marks.os, "write", side_effect=OSError(28, "No space left")):
                self.assertFalse(w.mark("lost", t=1))
        self.assertTrue(w.mark("kept", t=2))
        self.assertEqual(w.write_errors(), 1)
        self.assertEqual(read_lines(path), [b'{"t":2.0,"mark":"kept"}', b""])


# The job of RunReadsPythonMarks: gpulens' replayed recording runs from
# 1795289312 to 1795289390, so the marks carry times inside it. phase() and
# step() stamp marks with time.time(); the job moves that clock instead of
# passing t, so that the calls a training job makes are the ones tested.
JOB = """
import time
import gpulens

clock = [1795289341.0]
time.time = lambda: clock[0]
assert gpulens.enabled()
with gpulens.phase("py_train", flops_per_step=2e14, note="caf\\u00e9"):
    for _ in range(3):
        clock[0] += 1.0
        gpulens.step(flops=2e14)
    clock[0] += 0.5
gpulens.mark("checkpoint", t=1795289350, path="/ckpt/step3")
assert gpulens.write_errors() == 0
"""


class RunReadsPythonMarks(support.TempDirTest):
    """`gpulens run --replay` with a Python job: the C++ side follows the marks
    file the package wrote, merges it into the recording, and the report's MFU
    and phases come from those marks."""

    def test_step_and_phase_marks_reach_the_report(self):
        job = self.write("job.py", JOB)
        report, trace = self.path("report.json"), self.path("trace.jsonl")
        env = dict(os.environ, PYTHONPATH=support.PYTHON_DIR)
        r = subprocess.run(
            [support.gpulens_bin(), "run", "-q", "--replay", support.CALIBRATION, "--speed", "0",
             "--trace", trace, "-o", report, "--", sys.executable, job],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        with open(report) as f:
            verdict = json.load(f)
        model = verdict["mfu"]["model"]
        self.assertIsNotNone(model, verdict["mfu"])
        self.assertEqual(model["source"], "step marks")
        self.assertEqual(model["steps"], 2)  # steps 2..3 over step 1's end to step 3's
        self.assertAlmostEqual(model["mfu"], 2e14 / 989.4e12, places=4)
        phase = [p for p in verdict["phases"] if p["name"] == "py_train"]
        self.assertEqual(len(phase), 1, [p["name"] for p in verdict["phases"]])
        self.assertAlmostEqual(phase[0]["start"], 1795289341.0, places=3)
        self.assertAlmostEqual(phase[0]["end"], 1795289344.5, places=3)

        # The recording holds the marks as written, read back by this package.
        recorded = gpulens.read_trace(trace)
        ours = [m for m in recorded.marks if m.name in
                ("py_train:start", "step", "py_train:end", "checkpoint")]
        self.assertEqual([(m.name, m.t) for m in ours], [
            ("py_train:start", 1795289341.0), ("step", 1795289342.0), ("step", 1795289343.0),
            ("step", 1795289344.0), ("py_train:end", 1795289344.5), ("checkpoint", 1795289350.0)])
        self.assertEqual(ours[0].fields, {"flops_per_step": 2e14, "note": "caf\u00e9"})
        self.assertEqual(ours[1].fields, {"flops": 2e14})
        self.assertEqual(ours[-1].fields, {"path": "/ckpt/step3"})
        self.assertEqual([m.name for m in recorded.marks if m.name.startswith("job_")],
                         ["job_start", "job_end"])
        self.assertEqual(recorded.warnings, [])


if __name__ == "__main__":
    unittest.main()
