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

Standard library only; Python 3.8 or newer. See python/README.md.
"""

from .client import AgentError, AgentUnreachable, Client
from .marks import MarksWriter, enabled, mark, phase, step, write_errors
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
]
