# SPDX-License-Identifier: Apache-2.0
"""The frame of the checks that read the repository as a tree (test_mirror.py,
layer_includes.py): each is a function problems(root) that returns what is wrong,
one sentence each, run on this checkout or on scratch trees its self-test builds."""
import os
import shutil
import sys


def self_test(problems, tree, scratch, cases, accepted):
    """Each broken tree must be refused with its expected words, and the accepted one
    accepted. cases: {name: (files, expected words)}; tree(files) makes a tree under
    scratch, which is removed at the end. The exit status."""
    failed = 0
    for name, (files, expected) in cases.items():
        said = problems(tree(files))
        if not any(expected in line for line in said):
            print(f"self-test: {name}: expected '{expected}', the check said {said}")
            failed += 1
    said = problems(tree(accepted))
    if said:
        print(f"self-test: a tree that keeps the rule was refused: {said}")
        failed += 1
    shutil.rmtree(scratch)
    print(f"self-test: {len(cases) + 1 - failed} of {len(cases) + 1} cases as expected")
    return 1 if failed else 0


def main(name, problems, run_self_test, summary):
    """`NAME.py [SOURCE_DIR]` checks the repository (default: this checkout) and prints
    each problem, then summary(root, problems); `NAME.py --self-test` runs the
    self-test. The exit status."""
    if sys.argv[1:] == ["--self-test"]:
        return run_self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    said = problems(root)
    for line in said:
        print(f"{name}: {line}")
    summary(root, said)
    return 1 if said else 0
