# SPDX-License-Identifier: Apache-2.0
"""gpulens from Python: marks from training jobs, recordings, the agent's API.

    import gpulens

    with gpulens.phase("train"):                 # marks: nothing happens
        for batch in loader:                     # unless run under gpulens
            loss = train_step(batch); loss.item()
            gpulens.step(flops=6 * n_params * tokens_per_step)
    with gpulens.phase("eval"):
        evaluate()

    trace = gpulens.read_trace("run.trace.jsonl")        # recordings
    agent = gpulens.Client("http://127.0.0.1:9401")      # the node agent

    for d in gpulens.devices():                          # this machine's GPUs (NVML)
        print(d.index, d.name, d.reading())
    with gpulens.collect() as c:                         # a block's GPU means/min/max
        train_one_epoch()
    print(c.metrics())

Callbacks: gpulens.lightning_callback.GpulensCallback (PyTorch Lightning),
gpulens.hf_callback.GpulensTrainerCallback (Hugging Face Trainer); imported
only when asked for. Standard library only; Python 3.8 or newer. See
python/README.md.
"""

import sys

if sys.version_info < (3, 8):  # a copy on PYTHONPATH; pip refuses the wheel itself
    raise ImportError("gpulens needs Python 3.8 or newer; this is Python %d.%d (%s)" % (
        sys.version_info[0], sys.version_info[1], sys.executable))

from .client import AgentError, AgentUnreachable, Client
from .live import Collector, Device, collect, devices, processes, readings
from .marks import MarksWriter, enabled, mark, phase, step, write_errors
from .nvml import NvmlError
from .trace import (METRICS, Mark, Sample, Trace, TraceError, TraceReader, open_trace,
                    read_trace)

__version__ = "0.1.0"  # the project's version (CMakeLists.txt); a test keeps them equal

__all__ = [
    "__version__",
    # marks
    "enabled", "mark", "step", "phase", "write_errors", "MarksWriter",
    # recordings
    "read_trace", "open_trace", "Trace", "TraceReader", "Sample", "Mark", "TraceError",
    "METRICS",
    # the agent
    "Client", "AgentError", "AgentUnreachable",
    # this machine's GPUs, in process
    "devices", "readings", "processes", "collect", "Collector", "Device", "NvmlError",
]
