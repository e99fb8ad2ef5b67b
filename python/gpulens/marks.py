# SPDX-License-Identifier: Apache-2.0
"""Tell gpulens what a job is doing: phase and step marks, one JSON line each.

`gpulens run -- python train.py` names a file in $GPULENS_MARKS; every line the
job appends there lands in the recording beside the GPU samples. A step mark
that carries the step's model FLOPs gives the report a true model-FLOPs MFU;
phase marks split the report into phases.

    import gpulens

    flops_per_step = 6 * n_params * tokens_per_step
    with gpulens.phase("train", flops_per_step=flops_per_step):
        for batch in loader:
            loss = train_step(batch)
            loss.item()                       # the step's GPU work is done
            gpulens.step(flops=flops_per_step)
    with gpulens.phase("eval"):
        evaluate()

Without $GPULENS_MARKS (not run under gpulens) every call returns at once, so
a job calls these unconditionally. The lines are those gpulens reads
(src/core/marks_tail.cpp): `{"t":<unix s>,"mark":"<name>",...fields}`, compact
JSON, one `write(2)` per line on a file opened with O_APPEND, so threads and
processes (one per rank) may share the file and never see half a line of
another. A failing write (disk full, file removed with its directory) or a
mark that cannot be encoded never raises into the job: it is counted
(`write_errors()`) and the first one is logged on the "gpulens" logger.

From a shell:  python -m gpulens mark step --flops 6.1e12
"""

import contextlib
import json
import logging
import math
import os
import sys
import threading
import time
import weakref

__all__ = ["MarksWriter", "enabled", "mark", "step", "phase", "write_errors", "ENV"]

ENV = "GPULENS_MARKS"

_log = logging.getLogger("gpulens")


def _finite(value):
    """The value with every NaN/infinite float replaced by None (null): gpulens
    reads marks as strict JSON, where NaN is no value, and a null field reads as
    absent."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _plain(value):
    """json.dumps' fallback for what it cannot write: numpy and torch scalars
    (their .item()), then any number-like value, then its str()."""
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return item()
        except Exception:  # a tensor of several elements: fall through to str()
            pass
    try:
        return float(value)
    except Exception:
        return str(value)


def encode(name, t, fields):
    """One mark as the bytes gpulens reads: compact JSON and a newline."""
    record = {"t": float(t), "mark": str(name)}
    record.update(fields)
    try:
        text = json.dumps(record, separators=(",", ":"), allow_nan=False, default=_plain)
    except ValueError:  # NaN or infinity somewhere (a diverged loss, 0-second step)
        text = json.dumps(_finite(record), separators=(",", ":"), default=_plain)
    return (text + "\n").encode("utf-8")


class MarksWriter:
    """Appends marks to one file. `path=None` follows $GPULENS_MARKS, read at
    every call (a job that sets it late, or a forked worker, still finds it).

    Thread-safe: the file is opened once under a lock and each mark is one
    write(2). After fork() the child opens the file again on its next mark."""

    def __init__(self, path=None):
        self._fixed_path = None if path is None else os.fspath(path)
        self._lock = threading.Lock()
        self._fd = None
        self._fd_path = None
        self._fd_pid = None
        self._errors = 0
        self._warned = False
        _writers.add(self)

    def path(self):
        """The file marks go to now, or None when they go nowhere."""
        if self._fixed_path is not None:
            return self._fixed_path
        return os.environ.get(ENV) or None

    def enabled(self):
        """True when marks are written (running under `gpulens run`)."""
        return self.path() is not None

    def write_errors(self):
        """How many marks could not be written."""
        return self._errors

    def mark(self, name, t=None, **fields):
        """Writes {"t": t, "mark": name, ...fields}; t defaults to now (Unix seconds).
        Never raises on I/O errors; returns True when the line was written."""
        path = self.path()
        if path is None:
            return False
        try:
            data = encode(name, time.time() if t is None else t, fields)
        except Exception as e:  # a field json cannot write even as text, a bad t
            with self._lock:
                self._failed(path, "cannot encode mark %r: %s" % (name, e), close=False)
            return False
        with self._lock:
            try:
                fd = self._open(path)
                self._write_all(fd, data)
                return True
            except OSError as e:
                self._failed(path, e)
                return False

    def step(self, flops=None, steps=1, t=None, **fields):
        """One training step ended now. `flops`: its model FLOPs (e.g. 6 x params
        x tokens). Call it after the step's GPU work is done (after loss.item() or
        torch.cuda.synchronize()), or the time is only when the CPU queued the
        work. `steps` > 1 when one call stands for several steps."""
        path = self.path()
        if path is None:
            return False
        if flops is not None:
            try:
                fields["flops"] = float(_plain(flops))
            except (TypeError, ValueError) as e:
                with self._lock:
                    self._failed(path, "flops %r is not a number (%s)" % (flops, e), close=False)
                return False
        if steps != 1:
            fields["steps"] = int(steps)
        return self.mark("step", t=t, **fields)

    @contextlib.contextmanager
    def phase(self, name, **fields):
        """Marks NAME:start and NAME:end around a block (the end also when the
        block raises); the fields go on the start, e.g. flops_per_step=F."""
        self.mark(name + ":start", **fields)
        try:
            yield
        finally:
            self.mark(name + ":end")

    def close(self):
        """Closes the file (the next mark opens it again)."""
        with self._lock:
            self._close()

    def _open(self, path):
        pid = os.getpid()
        if self._fd is not None and (self._fd_path != path or self._fd_pid != pid):
            # Another file now, or a forked child: the child's copy of the
            # descriptor would still work, but its lock state may not.
            self._close()
        if self._fd is None:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            self._fd = os.open(path, flags, 0o644)
            self._fd_path = path
            self._fd_pid = pid
        return self._fd

    def _close(self):
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = None
        self._fd_path = None

    @staticmethod
    def _write_all(fd, data):
        # A regular file takes the whole line in one write; a short write only
        # happens when the disk fills, and then the rest follows or fails.
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            if n <= 0:
                raise OSError("write returned %d" % n)
            view = view[n:]

    def _failed(self, path, error, close=True):
        self._errors += 1
        if close:
            self._close()  # the next mark tries to open it again
        if not self._warned:
            self._warned = True
            try:
                _log.warning(
                    "gpulens: cannot write marks to %s (%s); the job goes on, later "
                    "failures are counted, not logged", path, error)
            except Exception:
                pass


def _reset_after_fork():
    # A fork while another thread held a lock would leave it held forever in
    # the child: each writer starts there with a fresh lock and no descriptor
    # (the parent's stays open in the parent).
    for writer in list(_writers):
        writer._lock = threading.Lock()
        writer._fd = None
        writer._fd_path = None


_writers = weakref.WeakSet()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
_default = MarksWriter()


def enabled():
    """True when running under `gpulens run` (marks are recorded)."""
    return _default.enabled()


def mark(name, t=None, **fields):
    """Writes one mark: "NAME:start", "NAME:end", "step" or any point event."""
    return _default.mark(name, t=t, **fields)


def step(flops=None, steps=1, t=None, **fields):
    """One training step ended now (see MarksWriter.step)."""
    return _default.step(flops=flops, steps=steps, t=t, **fields)


def phase(name, **fields):
    """`with gpulens.phase("eval"):` marks NAME:start and NAME:end around a block."""
    return _default.phase(name, **fields)


def write_errors():
    """How many marks of this process could not be written."""
    return _default.write_errors()


def main(argv=None, prog="python -m gpulens mark"):
    """`python -m gpulens mark NAME [--flops F]`: one mark from a shell script."""
    import argparse

    parser = argparse.ArgumentParser(
        prog=prog,
        description="Write one gpulens mark to $GPULENS_MARKS (nothing when it is unset).")
    parser.add_argument("name", help='"step", "NAME:start", "NAME:end" or any point event')
    parser.add_argument("--flops", type=float, help="model FLOPs of the step")
    args = parser.parse_args(argv)
    if args.name == "step":
        step(args.flops)
    else:
        mark(args.name, **({"flops": args.flops} if args.flops is not None else {}))
    if write_errors():
        print("gpulens: the mark was not written to %s" % _default.path(), file=sys.stderr)
        return 1
    return 0
