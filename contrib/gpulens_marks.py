# SPDX-License-Identifier: Apache-2.0
"""Tell gpulens what a job is doing: the `gpulens` package's marks, under the
name scripts have imported since before the package existed.

    import gpulens_marks as gm        # same as: from gpulens import marks as gm

    with gm.phase("train", flops_per_step=flops_per_step):
        for batch in loader:
            loss = train_step(batch)
            gm.step(flops_per_step)

A thin shim, not a second implementation: it imports the installed `gpulens`
package (pip install ./python, or the .deb's), and in a checkout of the
repository, where nothing is installed, loads python/gpulens beside this
directory. Copied alone somewhere else it needs the package installed.

From a shell script:  python contrib/gpulens_marks.py step --flops 6.1e12
"""

import importlib.util
import os
import sys


def _load_gpulens():
    try:
        import gpulens.marks

        return gpulens.marks
    except ImportError:
        pass
    # A checkout: load the package from ../python/gpulens without putting that
    # directory on sys.path (its tests/ must not shadow the job's own modules).
    package_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                               "gpulens")
    init = os.path.join(package_dir, "__init__.py")
    if not os.path.exists(init):
        raise ImportError(
            "gpulens_marks needs the gpulens Python package: pip install it from the "
            "repository's python/ directory (docs in python/README.md)")
    spec = importlib.util.spec_from_file_location("gpulens", init,
                                                  submodule_search_locations=[package_dir])
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpulens"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["gpulens"]
        raise
    return sys.modules["gpulens.marks"]


_marks = _load_gpulens()

MarksWriter = _marks.MarksWriter
enabled = _marks.enabled
mark = _marks.mark
step = _marks.step
phase = _marks.phase
write_errors = _marks.write_errors

__all__ = ["enabled", "mark", "step", "phase", "write_errors", "MarksWriter"]

if __name__ == "__main__":
    sys.exit(_marks.main(prog="gpulens_marks.py"))
