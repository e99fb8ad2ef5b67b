#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests sit beside what they test: every src/<path>.cpp of MIN_LINES lines or more
has tests/unit/<path>_test.cpp (issue 52).

The sources not mirrored yet are listed, one path under src/ a line, in
tests/unmirrored.txt (sorted; `#` starts a comment). The check keeps that list
honest so it only shrinks: an entry whose test now exists, whose source is gone or
is under MIN_LINES lines, or that is listed twice or out of order, fails too.

Usage: test_mirror.py [SOURCE_DIR]   (the repository; default: this checkout)
       test_mirror.py --self-test    (scratch trees the check must refuse)"""
import os
import sys
import tempfile

import tree_check

MIN_LINES = 60
LIST = os.path.join("tests", "unmirrored.txt")


def line_count(path):
    with open(path, "rb") as f:
        return len(f.read().splitlines())


def mirror_of(source):
    """tests/unit/<path>_test.cpp for src/<path>.cpp (source is relative to src/)."""
    return os.path.join("tests", "unit", source[: -len(".cpp")] + "_test.cpp")


def sources(root):
    """Every .cpp under src/ of MIN_LINES lines or more, relative to src/."""
    found = []
    for folder, _, files in os.walk(os.path.join(root, "src")):
        for name in files:
            if name.endswith(".cpp"):
                path = os.path.join(folder, name)
                if line_count(path) >= MIN_LINES:
                    found.append(os.path.relpath(path, os.path.join(root, "src")))
    return sorted(found)


def read_list(root):
    entries = []
    path = os.path.join(root, LIST)
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                entries.append(line)
    return entries


def problems(root):
    """What is wrong, one sentence each; empty when the tree keeps the rule."""
    said = []
    listed = read_list(root)
    if listed != sorted(listed):
        said.append(f"{LIST} is not sorted (LC_ALL=C sort)")
    seen = set()
    for entry in listed:
        if entry in seen:
            said.append(f"{LIST}: {entry} is listed twice")
        seen.add(entry)
        source = os.path.join(root, "src", entry)
        if not entry.endswith(".cpp") or not os.path.isfile(source):
            said.append(f"{LIST}: {entry}: no such source under src/; take it off the list")
        elif line_count(source) < MIN_LINES:
            said.append(f"{LIST}: src/{entry} is under {MIN_LINES} lines; take it off the list")
        elif os.path.isfile(os.path.join(root, mirror_of(entry))):
            said.append(f"{LIST}: {mirror_of(entry)} exists now; take src/{entry} off the list")
    for source in sources(root):
        if source not in seen and not os.path.isfile(os.path.join(root, mirror_of(source))):
            said.append(f"src/{source} has no {mirror_of(source)} (and is not in {LIST})")
    return said


def self_test():
    """Each broken tree must be refused, and the mended one accepted."""
    scratch = tempfile.mkdtemp(prefix="gpulens-mirror-")

    def tree(files):
        root = tempfile.mkdtemp(dir=scratch)
        for path, lines in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write("".join(f"// {i}\n" for i in range(lines)) if isinstance(lines, int)
                        else lines)
        return root

    big, small = MIN_LINES, MIN_LINES - 1
    cases = {
        "an untested source": ({"src/a/b.cpp": big}, "has no tests/unit/a/b_test.cpp"),
        "a listed source that has its test": (
            {"src/a/b.cpp": big, "tests/unit/a/b_test.cpp": 1, LIST: "a/b.cpp\n"}, "exists now"),
        "a listed source that is gone": ({LIST: "a/gone.cpp\n"}, "no such source"),
        "a listed source under the limit": (
            {"src/a/b.cpp": small, LIST: "a/b.cpp\n"}, f"under {MIN_LINES} lines"),
        "a list out of order": (
            {"src/a/b.cpp": big, "src/a/a.cpp": big, LIST: "a/b.cpp\na/a.cpp\n"}, "not sorted"),
        "an entry twice": ({"src/a/b.cpp": big, LIST: "a/b.cpp\na/b.cpp\n"}, "listed twice"),
        "a test under another name": (
            {"src/a/b.cpp": big, "tests/unit/a/b_other_test.cpp": 1}, "has no"),
    }
    accepted = {
        "src/a/b.cpp": big, "tests/unit/a/b_test.cpp": 1, "src/a/small.cpp": small,
        "src/a/c.cpp": big, "src/a/d/e.cpp": big, "tests/unit/a/d/e_test.cpp": 1,
        LIST: "# comment\na/c.cpp  # not yet\n",
    }
    return tree_check.self_test(problems, tree, scratch, cases, accepted)


def summary(root, _said):
    total = sources(root)
    mirrored = [s for s in total if os.path.isfile(os.path.join(root, mirror_of(s)))]
    print(f"test_mirror: {len(mirrored)} of {len(total)} sources of "
          f"{MIN_LINES}+ lines have tests/unit/<path>_test.cpp; {len(read_list(root))} listed "
          f"in {LIST}")


if __name__ == "__main__":
    sys.exit(tree_check.main("test_mirror", problems, self_test, summary))
