# SPDX-License-Identifier: Apache-2.0
"""`python -m gpulens mark NAME [--flops F]`: one mark from a shell script
(nothing happens without $GPULENS_MARKS)."""

import sys

from . import marks

USAGE = """usage: python -m gpulens mark NAME [--flops F]

  mark    append one mark to $GPULENS_MARKS (a no-op without it):
          "step" (with --flops, the step's model FLOPs), "NAME:start",
          "NAME:end" or any point event
"""


def main(argv):
    if argv[:1] == ["mark"]:
        return marks.main(argv[1:])
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE)
        return 0
    sys.stderr.write(USAGE)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
