# SPDX-License-Identifier: Apache-2.0
"""What the framework callbacks do, apart from any framework: marks for
`gpulens run` and a collector's summary per logging window. Standard library
only; gpulens.lightning_callback and gpulens.hf_callback wrap it in the
frameworks' own callback classes (each imports its framework, so only the one
a job uses is needed, and `import gpulens` needs neither).

    monitor = TrainingMonitor(flops_per_step=6 * n_params * tokens_per_step)
    monitor.train_start()               # train:start mark, collector started
    ...  monitor.step()                 # a step mark (with its FLOPs) per optimizer step
    logs.update(monitor.window())       # the GPUs' means/min/max since the last window
    monitor.train_end()                 # train:end mark, collector stopped
"""

import logging

from . import marks
from .live import Collector

__all__ = ["TrainingMonitor"]

_log = logging.getLogger("gpulens")


class TrainingMonitor:
    """flops_per_step: the model FLOPs of one optimizer step (for the report's
    MFU; None: step marks without FLOPs). collect: sample the GPUs while
    training (interval seconds; agent: read them from the agent at that URL
    instead of NVML). A collector that cannot start (no NVML on this machine,
    the agent down) is logged once on the "gpulens" logger and training goes
    on without GPU metrics: a monitor never stops a job. Marks are written
    only under `gpulens run` ($GPULENS_MARKS), as gpulens.step() does."""

    def __init__(self, flops_per_step=None, collect=True, interval=1.0, agent=None, gpus=None,
                 writer=None):
        self.flops_per_step = flops_per_step
        self.collect = collect
        self.interval = interval
        self.agent = agent
        self.gpus = gpus
        self.collector = None
        self.collect_error = None
        self._writer = writer or marks._default
        self._phases = []

    def train_start(self):
        self.phase_start("train")
        if self.collect and self.collector is None:
            try:
                self.collector = Collector(interval=self.interval, gpus=self.gpus,
                                           agent=self.agent).start()
            except Exception as e:  # NvmlError, AgentUnreachable: said once, not raised
                self.collect_error = e
                _log.warning("gpulens: no GPU metrics for this run (%s)", e)

    def step(self, steps=1):
        self._writer.step(flops=self.flops_per_step, steps=steps)

    def phase_start(self, name):
        self._phases.append(name)
        self._writer.mark(name + ":start")

    def phase_end(self, name):
        if name in self._phases:
            self._phases.remove(name)
            self._writer.mark(name + ":end")

    def window(self):
        """The GPUs' summary since the previous window (or the start), and a new
        window begun; {} without a collector."""
        return self.collector.reset() if self.collector is not None else {}

    def train_end(self):
        """Stops the collector; returns the summary of the last window."""
        summary = {}
        if self.collector is not None:
            summary = self.collector.stop()
            self.collector = None
        for name in reversed(list(self._phases)):  # an eval cut short ends too
            self.phase_end(name)
        return summary
