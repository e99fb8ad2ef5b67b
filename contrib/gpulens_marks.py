# SPDX-License-Identifier: Apache-2.0
"""Tell gpulens what a job is doing, in one line per event.

`gpulens run -- python train.py` names a file in $GPULENS_MARKS; JSON lines
written there land in the recording beside the GPU samples. A step mark that
carries the step's model FLOPs gives the report a true model-FLOPs MFU; phase
marks split the report into phases.

    import gpulens_marks as gm

    flops_per_step = 6 * n_params * tokens_per_step
    with gm.phase("train", flops_per_step=flops_per_step):
        for batch in loader:
            loss = train_step(batch)
            gm.step(flops_per_step)          # the one line

Without $GPULENS_MARKS (not run under gpulens) every call does nothing, so the
script runs the same either way. Each mark is one write(2) to a file opened
with O_APPEND, so several processes (one per rank) may share the file.

From a shell script:  python contrib/gpulens_marks.py step --flops 6.1e12
"""

import contextlib
import json
import os
import sys
import time

__all__ = ["enabled", "mark", "step", "phase"]

_fd = None


def enabled():
    """True when running under `gpulens run` (marks are recorded)."""
    return bool(os.environ.get("GPULENS_MARKS"))


def mark(name, t=None, **fields):
    """Writes {"t": t, "mark": name, ...fields}; t defaults to now (Unix seconds)."""
    global _fd
    path = os.environ.get("GPULENS_MARKS")
    if not path:
        return
    if _fd is None:
        _fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    record = {"t": time.time() if t is None else float(t), "mark": name}
    record.update(fields)
    os.write(_fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())


def step(flops=None, steps=1, **fields):
    """One training step ended now: `flops` are its model FLOPs (e.g. 6 x params
    x tokens). Call it after the step's work is done on the GPU (after
    loss.item() or torch.cuda.synchronize()), or the time is only when the CPU
    queued the work. `steps` > 1 when one call stands for several steps."""
    if flops is not None:
        fields["flops"] = float(flops)
    if steps != 1:
        fields["steps"] = int(steps)
    mark("step", **fields)


@contextlib.contextmanager
def phase(name, **fields):
    """Marks NAME:start and NAME:end around a block; the fields go on the start."""
    mark(name + ":start", **fields)
    try:
        yield
    finally:
        mark(name + ":end")


def _main(argv):
    import argparse

    parser = argparse.ArgumentParser(description="Write one gpulens mark to $GPULENS_MARKS.")
    parser.add_argument("name", help='"step", "NAME:start", "NAME:end" or any point event')
    parser.add_argument("--flops", type=float, help="model FLOPs of the step")
    args = parser.parse_args(argv)
    if args.name == "step":
        step(args.flops)
    else:
        mark(args.name, **({"flops": args.flops} if args.flops is not None else {}))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
