# SPDX-License-Identifier: Apache-2.0
"""The in-process API (gpulens.devices(), processes(), collect()) and the
framework callbacks, on no GPU: against the fake libnvidia-ml.so.1 that the C++
tests build (tests/fakes/nvml_fake_lib.cpp), found as gpulens' agent finds NVML,
through the loader's $LD_LIBRARY_PATH. The loader reads that variable when a
process starts, so each case runs in a child Python started with it. The fake's
GPUs read busy (95 %, 550 W) while its process file lists a process on them,
idle (0 %, 70 W) otherwise; it lacks the clock calls, like an old driver.
Also: the agent as the source (gpulens-serve --replay), no NVML, an agent down.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import gpulens

from . import support

FAKE_TOTAL_MIB = 85520809984 / (1 << 20)


def fake_nvml_dir():
    """The directory of the fake libnvidia-ml.so.1 ($GPULENS_FAKE_NVML_DIR, as
    ctest passes it; else the debug build's). Missing fails: never a skip."""
    path = os.environ.get("GPULENS_FAKE_NVML_DIR") or os.path.join(
        support.REPO, "build", "debug", "fake-nvml")
    if not os.path.exists(os.path.join(path, "libnvidia-ml.so.1")):
        raise AssertionError("%s/libnvidia-ml.so.1: missing; build it (cmake --build --preset "
                             "debug --target gpulens_fake_nvml) or set $GPULENS_FAKE_NVML_DIR"
                             % path)
    return path


class FakeNvmlTest(support.TempDirTest):
    def child(self, code, gpus=2, procs=None, extra_env=None, timeout=60):
        """Runs `code` in a Python on the fake NVML; returns the JSON it printed
        last. `procs`: lines "GPU PID BYTES" of the fake's process file ("{pid}"
        is the child's own PID, known only once it runs: the code writes it)."""
        env = dict(os.environ, LD_LIBRARY_PATH=fake_nvml_dir(), GPULENS_FAKE_NVML_GPUS=str(gpus),
                   GPULENS_FAKE_NVML_PROCS=self.path("procs"), PYTHONPATH=support.PYTHON_DIR,
                   PYTHONDONTWRITEBYTECODE="1")
        env.pop("GPULENS_MARKS", None)
        env.update(extra_env or {})
        prelude = textwrap.dedent("""\
            import json, os, sys, time
            import gpulens
            PROCS = %r
            def procs(lines):
                with open(PROCS + ".tmp", "w") as f:
                    f.write("".join(l.format(pid=os.getpid()) + "\\n" for l in lines))
                os.replace(PROCS + ".tmp", PROCS)   # the fake never reads half a file
            procs(%r)
        """) % (self.path("procs"), list(procs or []))
        r = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        return json.loads(r.stdout.decode().strip().splitlines()[-1])


class DevicesOnFakeNvml(FakeNvmlTest):
    def test_devices_and_their_identity(self):
        got = self.child("""
            print(json.dumps([[d.index, d.name, d.uuid, d.info] for d in gpulens.devices()]))
        """, gpus=3)
        self.assertEqual([g[0] for g in got], [0, 1, 2])
        self.assertEqual({g[1] for g in got}, {"NVIDIA H100 80GB HBM3"})
        self.assertEqual(got[2][2], "GPU-fa4e0000-0000-0000-0000-000000000002")
        self.assertAlmostEqual(got[0][3]["memory_total_mib"], FAKE_TOTAL_MIB)
        self.assertEqual(got[0][3]["power_limit_w"], 700.0)

    def test_readings_follow_the_processes_and_absent_means_not_measured(self):
        got = self.child("""
            print(json.dumps(gpulens.readings()))
        """, procs=["1 {pid} 2147483648"])
        idle, busy = got["0"], got["1"]
        self.assertEqual((idle["gpu_util"], idle["power_w"], idle["temp_c"]), (0.0, 70.0, 55.0))
        self.assertEqual((busy["gpu_util"], busy["mem_util"], busy["power_w"]), (95.0, 40.0, 550.0))
        self.assertEqual(busy["mem_used_mib"], 512 + 2048)  # the driver's share and the job's
        # The fake has no nvmlDeviceGetClockInfo: no clock, rather than a 0 MHz one.
        self.assertNotIn("sm_clock_mhz", busy)
        self.assertTrue(set(busy) <= set(gpulens.METRICS), busy)

    def test_processes_with_their_names(self):
        got = self.child("""
            me = [p for p in gpulens.processes() if p["pid"] == os.getpid()]
            d1 = gpulens.devices()[1]
            print(json.dumps([me, d1.processes() == me, d1.reading()["gpu_util"]]))
        """, procs=["1 {pid} 1073741824", "0 999999999 5"])
        me, same, util = got
        self.assertEqual(me, [{"gpu": 1, "pid": me[0]["pid"], "used_mib": 1024.0,
                               "name": os.path.basename(sys.executable)[:15]}])
        self.assertTrue(same)
        self.assertEqual(util, 95.0)


class CollectorOnFakeNvml(FakeNvmlTest):
    def test_means_min_max_over_a_block_with_a_bounded_buffer(self):
        # GPU 1 idle for the first half of the block, busy for the second.
        got = self.child("""
            with gpulens.collect(interval=0.02, keep=5) as c:
                time.sleep(0.4)
                procs(["1 {pid} 1048576"])
                time.sleep(0.4)
            print(json.dumps([c.metrics(), len(c.samples()), c.errors]))
        """)
        m, kept, errors = got
        self.assertEqual(errors, 0)
        # About 40 ticks in 0.8 s at 20 ms; a loaded 2-core CI machine gives
        # fewer, but start() and stop() read once each: more is the thread's.
        self.assertGreaterEqual(m["gpulens/samples"], 4)
        self.assertGreaterEqual(m["gpulens/seconds"], 0.8)
        self.assertEqual(kept, 5)  # 2 GPUs x many ticks, the newest 5 kept
        self.assertEqual((m["gpu1/gpu_util_min"], m["gpu1/gpu_util_max"]), (0.0, 95.0))
        self.assertGreater(m["gpu1/gpu_util_mean"], 10.0)
        self.assertLess(m["gpu1/gpu_util_mean"], 85.0)
        self.assertEqual((m["gpu0/power_w_min"], m["gpu0/power_w_max"]), (70.0, 70.0))
        self.assertNotIn("gpu0/sm_clock_mhz_mean", m)

    def test_reset_starts_a_new_window_and_gpus_selects(self):
        got = self.child("""
            c = gpulens.collect(interval=0.02, gpus=[1]).start()
            time.sleep(0.2)
            first = c.reset()
            procs(["1 {pid} 1048576"])
            time.sleep(0.2)
            second = c.stop()
            print(json.dumps([first, second]))
        """)
        first, second = got
        self.assertEqual(first["gpu1/gpu_util_max"], 0.0)
        self.assertEqual(second["gpu1/gpu_util_max"], 95.0)
        self.assertFalse([k for k in first if k.startswith("gpu0/")])


class NoNvml(unittest.TestCase):
    def test_no_library_is_said_in_words(self):
        with self.assertRaises(gpulens.NvmlError) as caught:
            gpulens.nvml.Nvml(names=("libnvidia-ml-not-here.so.1",))
        text = str(caught.exception)
        self.assertIn("cannot load NVML", text)
        self.assertIn("install the driver", text)
        self.assertIn("agent=", text)

    def test_collect_raises_at_its_start_not_later(self):
        saved = gpulens.nvml.LIBRARY_NAMES
        gpulens.nvml.LIBRARY_NAMES = ("libnvidia-ml-not-here.so.1",)
        try:
            with self.assertRaises(gpulens.NvmlError):
                with gpulens.collect():
                    self.fail("the block ran without NVML")
        finally:
            gpulens.nvml.LIBRARY_NAMES = saved


class AgentDown(unittest.TestCase):
    def test_an_agent_down_is_said_at_once(self):
        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            url = "http://127.0.0.1:%d" % s.getsockname()[1]
        started = time.monotonic()
        with self.assertRaises(gpulens.AgentUnreachable):
            gpulens.collect(agent=url).start()
        with self.assertRaises(gpulens.AgentUnreachable):
            gpulens.devices(agent=url, timeout=2)
        self.assertLess(time.monotonic() - started, 5)


class AgentGoingDown(support.TempDirTest):
    def test_the_collector_counts_failures_and_stops_at_once(self):
        agent = support.Agent(["--replay", support.CALIBRATION, "--speed", "0",
                               "--kube-log-dir", "", "--no-history"], self.tmp)
        self.addCleanup(agent.stop)
        c = gpulens.collect(interval=0.05, agent=agent.url).start()
        time.sleep(0.2)
        agent.stop()  # the job goes on; its metrics stop
        support.wait_until("a failed reading counted", lambda: c.errors > 0, 10)
        started = time.monotonic()
        m = c.stop()
        self.assertLess(time.monotonic() - started, 3)
        self.assertIsInstance(c.last_error, gpulens.AgentUnreachable)
        self.assertGreaterEqual(m["gpulens/samples"], 1)  # what came before is kept
        self.assertIn("gpu0/sm_active_mean", m)


class AgentAsTheSource(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="gpulens-py-live-")
        cls.agent = support.Agent(["--replay", support.CALIBRATION, "--speed", "0",
                                   "--kube-log-dir", "", "--no-history"], cls.tmp)
        client = gpulens.Client(cls.agent.url)
        try:
            support.wait_until("the replay ending",
                               lambda: client.health()["source"]["ended"])
        except BaseException:
            cls.agent.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.agent.stop()

    def test_devices_readings_and_a_collector_from_the_agent(self):
        latest = gpulens.Client(self.agent.url).latest()["gpus"][0]
        devices = gpulens.devices(agent=self.agent.url)
        self.assertEqual([d.index for d in devices], [latest["gpu"]])
        self.assertEqual(devices[0].name, "NVIDIA H100 80GB HBM3")  # the recording's header
        self.assertEqual(devices[0].info["power_limit_w"], 700.0)
        reading = devices[0].reading()
        self.assertEqual(reading["sm_active"], latest["metrics"]["sm_active"])
        with gpulens.collect(interval=0.05, agent=self.agent.url) as c:
            time.sleep(0.3)
        m = c.metrics()
        key = "gpu%d/sm_active" % latest["gpu"]
        # The replay has ended: every tick reads the recording's last sample.
        self.assertEqual(m[key + "_mean"], latest["metrics"]["sm_active"])
        self.assertEqual(m[key + "_min"], m[key + "_max"])


class TrainingMonitorOnFakeNvml(FakeNvmlTest):
    def test_marks_and_windows(self):
        got = self.child("""
            from gpulens.callbacks import TrainingMonitor
            m = TrainingMonitor(flops_per_step=6e12, interval=0.02)
            m.train_start()
            for _ in range(3):
                time.sleep(0.05)
                m.step()
            window = m.window()
            m.phase_start("eval")
            last = m.train_end()      # ends the eval left open, then train
            print(json.dumps([sorted(window), last["gpulens/samples"] >= 1]))
        """, extra_env={"GPULENS_MARKS": self.path("marks.jsonl")})
        keys, ok = got
        self.assertIn("gpu0/gpu_util_mean", keys)
        self.assertTrue(ok)
        with open(self.path("marks.jsonl")) as f:
            marks = [json.loads(line) for line in f]
        self.assertEqual([m["mark"] for m in marks],
                         ["train:start", "step", "step", "step", "eval:start", "eval:end",
                          "train:end"])
        self.assertEqual({m.get("flops") for m in marks if m["mark"] == "step"}, {6e12})

    def test_no_nvml_leaves_training_alone(self):
        got = self.child("""
            import logging
            logging.basicConfig(level=logging.WARNING)
            from gpulens.callbacks import TrainingMonitor
            m = TrainingMonitor()
            m.train_start(); m.step()
            print(json.dumps([m.window(), m.train_end(), type(m.collect_error).__name__]))
        """, extra_env={"LD_LIBRARY_PATH": self.tmp})
        self.assertEqual(got, [{}, {}, "NvmlError"])


# Stand-ins for the frameworks' base classes, which hold nothing but no-op hooks
# (lightning.pytorch.Callback, transformers.TrainerCallback): the hooks are
# driven in the order and with the arguments the frameworks use. The real
# frameworks run them on the GPU machine (bench/py49/callbacks_gpu.py).
STAND_INS = """
import types
for name in ("lightning", "lightning.pytorch", "transformers"):
    sys.modules[name] = types.ModuleType(name)
class Callback:
    pass
class TrainerCallback:
    pass
sys.modules["lightning.pytorch"].Callback = Callback
sys.modules["transformers"].TrainerCallback = TrainerCallback
"""


class CallbacksOnFakeNvml(FakeNvmlTest):
    def test_lightning_marks_optimizer_steps_and_logs_windows(self):
        got = self.child(STAND_INS + textwrap.dedent("""
            from gpulens.lightning_callback import GpulensCallback
            logged = []
            class Logger:
                def log_metrics(self, metrics, step):
                    logged.append([step, sorted(metrics)])
            class Trainer:
                global_step = 0; log_every_n_steps = 2; sanity_checking = False
                loggers = [Logger()]
            t = Trainer()
            cb = GpulensCallback(flops_per_step=1e12, interval=0.02)
            cb.on_train_start(t, None)
            for batch in range(8):           # accumulate_grad_batches=2: 4 optimizer steps
                time.sleep(0.03)
                if batch % 2 == 1:
                    t.global_step += 1
                cb.on_train_batch_end(t, None, None, None, batch)
            cb.on_validation_start(t, None); cb.on_validation_end(t, None)
            cb.on_train_end(t, None)
            print(json.dumps([logged, sorted(cb.last_metrics)[:1]]))
        """), extra_env={"GPULENS_MARKS": self.path("marks.jsonl")})
        logged, last = got
        self.assertEqual([step for step, _ in logged], [2, 4])
        self.assertIn("gpu1/power_w_max", logged[0][1])
        self.assertEqual(last, ["gpu0/gpu_util_max"])
        with open(self.path("marks.jsonl")) as f:
            names = [json.loads(line)["mark"] for line in f]
        self.assertEqual(names, ["train:start"] + ["step"] * 4 +
                         ["validation:start", "validation:end", "train:end"])

    def test_trainer_adds_the_gpus_to_the_logs(self):
        got = self.child(STAND_INS + textwrap.dedent("""
            from gpulens.hf_callback import GpulensTrainerCallback
            class State:
                global_step = 0; log_history = []
            state = State()
            cb = GpulensTrainerCallback(interval=0.02)
            cb.on_train_begin(None, state, None)
            for _ in range(4):
                time.sleep(0.03)
                state.global_step += 1
                cb.on_step_end(None, state, None)
            logs = {"loss": 1.5}
            state.log_history.append(dict(logs, step=state.global_step))  # as Trainer.log does
            cb.on_log(None, state, None, logs=logs)
            cb.on_train_end(None, state, None)
            print(json.dumps([logs, state.log_history]))
        """), procs=["0 {pid} 1048576"])
        logs, history = got
        self.assertEqual(logs["loss"], 1.5)
        self.assertEqual(logs["gpu0/gpu_util_max"], 95.0)
        self.assertEqual(history[-1]["gpu0/gpu_util_max"], 95.0)
        self.assertEqual(history[-1]["step"], 4)


if __name__ == "__main__":
    unittest.main()
