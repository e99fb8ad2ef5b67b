#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the man pages of a build (build/man, made by cmake/man.cmake from docs/man).

For every page: groff (`groff -man -ww -z`, as troff and as a terminal) and man-db
(`man --warnings -l`, as lintian runs it) print no warning; lexgrog (apropos, lintian)
reads its whatis entry; no @NAME@ was left unfilled; the sections a user looks for
are there, in order; NAME names the page; no rendered line of more than one word
is wider than 80 columns. Against the program: every command that
`gpulens --help` lists has a page; every option that `gpulens COMMAND --help` lists
is an item of that page's OPTIONS, and every item there is one of --help's (so a new
option without a description, or a page describing one that went away, fails);
every key that `gpulens top` handles (src/tui/view_state.cpp) or documents
(docs/top.md) is an item of KEYS in gpulens-top.1; every GPULENS_* variable the code
reads (getenv in src/) is an item of ENVIRONMENT in gpulens.1.

Usage: man_pages.py --man-dir DIR --gpulens BIN --source-dir DIR [--gzipped]
       man_pages.py --self-test ...   (the same checks on broken copies: each must fail)
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

REQUIRED_SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXAMPLES", "FILES",
                     "ENVIRONMENT", "EXIT STATUS", "SEE ALSO"]
# view_state.cpp's key:: constants, by the name the pages (and docs/top.md) give them.
KEY_NAMES = {"kUp": "Up", "kDown": "Down", "kPageUp": "PgUp", "kPageDown": "PgDn",
             "kHome": "Home", "kEnd": "End", "kEscape": "Esc", "kEnter": "Enter"}
RENDER_WIDTH = 80


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def help_text(gpulens, command):
    cmd = [gpulens] + ([command] if command else []) + ["--help"]
    out = run(cmd)
    if out.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {out.returncode}: {out.stderr}")
    return out.stdout


def help_section(text, title):
    """The lines of one CLI11 help section ("Options:", "Subcommands:"), which ends at a
    blank line (the footer's indented examples are no items)."""
    lines, inside = [], False
    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Za-z ]*:$", line):
            inside = line == title
        elif inside and not line.strip():
            inside = False
        elif inside:
            lines.append(line)
    return lines


def help_commands(text):
    return [m.group(1) for line in help_section(text, "Subcommands:")
            if (m := re.match(r"^  ([a-z][a-z0-9-]*)\b", line))]


def help_options(text):
    """Every option name of --help: '-o' and '--output' of '  -o,--output TEXT ...'."""
    names = set()
    for line in help_section(text, "Options:"):
        m = re.match(r"^  (-[^ ]+)", line)  # items are indented by two; descriptions by more
        if m:
            names.update(n for n in m.group(1).split(",") if n.startswith("-"))
    return names


def sections(page):
    """Section name -> its lines, in order of appearance."""
    out, current = {}, None
    for line in page.splitlines():
        m = re.match(r'^\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            current = m.group(1).strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def tag_lines(lines):
    """The item headings of a section: the line after each .TP and .TQ."""
    return [lines[i + 1] for i, l in enumerate(lines[:-1]) if l.strip() in (".TP", ".TQ")]


def roff_words(line):
    """A heading line as the words a reader sees: macro, quotes and escapes gone."""
    line = re.sub(r"^\.[A-Z]+\s*", "", line)
    line = line.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")
    line = re.sub(r"\\f[BIRP]", " ", line)
    return line.replace('"', " ").split()


def page_options(page):
    names = set()
    for line in tag_lines(sections(page).get("OPTIONS", [])):
        for word in roff_words(line):
            for part in word.split(","):
                if re.fullmatch(r"--[a-z0-9][a-z0-9-]*|-[A-Za-z0-9]", part):
                    names.add(part)
    return names


def code_keys(source_dir):
    """The keys handle_key() switches on."""
    text = open(os.path.join(source_dir, "src/tui/view_state.cpp")).read()
    body = text[text.index("KeyAction handle_key("):]
    keys = set()
    for m in re.finditer(r"case (?:'(\\?.)'|key::(\w+)):", body):
        if m.group(1):
            keys.add(m.group(1).replace("\\", ""))
        elif m.group(2) in KEY_NAMES:
            keys.add(KEY_NAMES[m.group(2)])
        else:
            raise SystemExit(f"FAIL: view_state.cpp handles key::{m.group(2)}: "
                             "add its name to KEY_NAMES in tests/e2e/man_pages.py")
    return keys


def doc_keys(source_dir):
    """The keys of the table under '## Keys' in docs/top.md (its first column)."""
    text = open(os.path.join(source_dir, "docs/top.md")).read()
    table = text[text.index("## Keys"):].split("\n## ")[0]
    keys = set()
    for row in table.splitlines():
        if not row.startswith("| ") or row.startswith("| key ") or row.startswith("|---"):
            continue
        cell = row.split("|")[1]
        quoted = re.findall(r"`([^`]+)`", cell)
        keys.update(k for k in quoted if not k.startswith("--"))
        bare = re.sub(r"`[^`]*`|\([^)]*\)", " ", cell)
        keys.update(w for w in bare.replace(",", " ").split() if w[0].isupper())
    return keys


def env_variables(source_dir):
    names = set()
    for root, _, files in os.walk(os.path.join(source_dir, "src")):
        for f in files:
            if f.endswith((".cpp", ".hpp")):
                text = open(os.path.join(root, f), errors="replace").read()
                names.update(re.findall(r'getenv\(\s*"(GPULENS_\w+)"', text))
    return names


def groff_warnings(path):
    problems = []
    for device in ([], ["-Tutf8"]):
        out = run(["groff", "-man", "-ww", "-z"] + device + [path])
        if out.returncode != 0 or out.stderr.strip():
            problems.append(f"groff -man -ww -z {' '.join(device)}: {out.stderr.strip()}")
    env = dict(os.environ, LC_ALL="C.UTF-8", MANROFFSEQ="", MANWIDTH=str(RENDER_WIDTH))
    out = run(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", path], env=env)
    if out.returncode != 0 or out.stderr.strip():
        problems.append(f"man --warnings -l: {out.stderr.strip()}")
    return problems


def rendered(path):
    env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH=str(RENDER_WIDTH))
    out = run(["man", "-E", "UTF-8", "-l", path], env=env)
    return re.sub(r".\x08", "", out.stdout)


def check(man_dir, gpulens, source_dir, gzipped, only=None):
    """Every problem found; `only` limits the checks of single pages to that page."""
    problems = []
    main_help = help_text(gpulens, None)
    commands = help_commands(main_help)
    if not commands:
        return [f"no commands found in the Subcommands of {gpulens} --help"]
    expected = {"gpulens": None} | {f"gpulens-{c}": c for c in commands}
    present = {f[:-2] for f in os.listdir(man_dir) if f.endswith(".1")}
    for name in sorted(set(expected) - present):
        problems.append(f"{name}.1: no page for 'gpulens {expected[name] or ''}'")
    for name in sorted(present - set(expected)):
        problems.append(f"{name}.1: a page for no command of gpulens --help")

    for name in sorted(present & set(expected)):
        if only and name + ".1" != only:
            continue
        path = os.path.join(man_dir, name + ".1")
        page = open(path).read()
        where = name + ".1"
        if gzipped:
            try:
                with gzip.open(path + ".gz", "rt") as z:
                    if z.read() != page:
                        problems.append(f"{where}.gz differs from {where}")
            except OSError as e:
                problems.append(f"{where}.gz: {e}")
        for left in sorted(set(re.findall(r"@[A-Z_]+@", page))):
            problems.append(f"{where}: {left} was not filled in")
        secs = sections(page)
        order = [s for s in secs if s in REQUIRED_SECTIONS]
        for s in REQUIRED_SECTIONS:
            if s not in secs:
                problems.append(f"{where}: no section {s}")
        if order != [s for s in REQUIRED_SECTIONS if s in secs]:
            problems.append(f"{where}: sections out of order: {order}")
        th = re.search(r"^\.TH\s+(\S+)\s+1\b", page, re.M)
        if not th or th.group(1).replace("\\-", "-") != name.upper():
            problems.append(f"{where}: .TH does not name {name.upper()} in section 1")
        name_lines = [l for l in secs.get("NAME", []) if l.strip()]
        if len(name_lines) != 1 or not re.fullmatch(
                re.escape(name.replace("-", "\\-")) + r" \\- \S.{10,}", name_lines[0]):
            problems.append(f"{where}: NAME is not one line '{name} \\- what it does': {name_lines}")
        problems += [f"{where}: {p}" for p in groff_warnings(path)]
        whatis = run(["lexgrog", path])  # what apropos and lintian read as the page's name
        if whatis.returncode != 0 or f'"{name} - ' not in whatis.stdout:
            problems.append(f"{where}: lexgrog reads no whatis entry for {name}: {whatis.stdout.strip()}")
        for i, line in enumerate(rendered(path).splitlines(), 1):
            # One word alone (a path under a long install prefix) cannot be broken.
            if len(line) > RENDER_WIDTH and len(line.split()) > 1:
                problems.append(f"{where}: rendered line {i} is {len(line)} columns wide: {line.strip()}")

        helped = help_options(main_help if name == "gpulens" else help_text(gpulens, expected[name]))
        documented = page_options(page)
        for opt in sorted(helped - documented):
            problems.append(f"{where}: {opt} is in --help but not an item of OPTIONS")
        for opt in sorted(documented - helped):
            problems.append(f"{where}: OPTIONS describes {opt}, which --help does not list")

    top = os.path.join(man_dir, "gpulens-top.1")
    if os.path.exists(top):
        shown = {w for l in tag_lines(sections(open(top).read()).get("KEYS", [])) for w in roff_words(l)}
        for key in sorted(code_keys(source_dir) - shown):
            problems.append(f"gpulens-top.1: key {key} (view_state.cpp) is not an item of KEYS")
        for key in sorted(doc_keys(source_dir) - shown):
            problems.append(f"gpulens-top.1: key {key} (docs/top.md) is not an item of KEYS")
    main = os.path.join(man_dir, "gpulens.1")
    if os.path.exists(main):
        listed = {w for l in tag_lines(sections(open(main).read()).get("ENVIRONMENT", []))
                  for w in roff_words(l)}
        for var in sorted(env_variables(source_dir) - {w.strip(",") for w in listed}):
            problems.append(f"gpulens.1: {var} is read by src/ but not an item of ENVIRONMENT")
    return problems


# Broken copies the checks must refuse: (page, text to find, replacement, why).
MUTATIONS = [
    ("gpulens-stream.1", ".BR \\-m \", \" \\-\\-metrics", ".B \\-m", "an undocumented option"),
    ("gpulens-record.1", ".B \\-\\-lenient", ".B \\-\\-lenient\n.TP\n.B \\-\\-gone", "a stale option"),
    ("gpulens-top.1", '.B "T  K  I"', '.B "T  I"', "an undocumented key"),
    ("gpulens-top.1", '.B "PgUp  PgDn  Home  End"', '.B "PgUp  PgDn  Home"', "a key of docs/top.md"),
    ("gpulens-report.1", ".SH EXIT STATUS", ".SH STATUS", "a missing section"),
    ("gpulens-run.1", ".SH EXAMPLES", ".SH EXAMPLES\n.foo", "a groff warning"),
    ("gpulens-diagnose.1", "gpulens\\-diagnose \\- ", "gpulens diagnose ", "a NAME without \\-"),
    ("gpulens.1", ".B GPULENS_KERNELS_KINDS", ".B KINDS", "an undocumented variable"),
    ("gpulens-serve.1", ".SH SIGNALS", ".SH SIGNALS\n.EX\n" + "word " * 20 + "\n.EE", "a line too wide"),
]


def self_test(man_dir, gpulens, source_dir):
    baseline = check(man_dir, gpulens, source_dir, gzipped=False)
    if baseline:
        print("FAIL: self-test: the pages do not pass to begin with:", *baseline, sep="\n  ")
        return 1
    failures = 0
    for page, find, replace, why in MUTATIONS:
        with tempfile.TemporaryDirectory() as tmp:
            for f in os.listdir(man_dir):
                if f.endswith(".1"):
                    shutil.copy(os.path.join(man_dir, f), tmp)
            path = os.path.join(tmp, page)
            text = open(path).read()
            if find not in text:
                print(f"FAIL: self-test: '{find}' is not in {page}; update MUTATIONS")
                failures += 1
                continue
            open(path, "w").write(text.replace(find, replace, 1))
            found = check(tmp, gpulens, source_dir, gzipped=False, only=page)  # baseline: nothing
            if found:
                print(f"ok: {why} in {page} is refused: {found[0]}")
            else:
                print(f"FAIL: self-test: {why} in {page} passed the checks")
                failures += 1
    return failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--man-dir", required=True)
    p.add_argument("--gpulens", required=True)
    p.add_argument("--source-dir", required=True)
    p.add_argument("--gzipped", action="store_true", help="every page also has its .gz beside it")
    p.add_argument("--self-test", action="store_true")
    a = p.parse_args()
    for tool, package in (("groff", "groff-base"), ("man", "man-db")):
        if shutil.which(tool) is None:
            sys.exit(f"FAIL: {tool} is not installed (Debian: {package}; scripts/setup.sh installs it)")
    if a.self_test:
        sys.exit(1 if self_test(a.man_dir, a.gpulens, a.source_dir) else 0)
    problems = check(a.man_dir, a.gpulens, a.source_dir, a.gzipped)
    for p_ in problems:
        print("FAIL:", p_)
    if problems:
        sys.exit(1)
    pages = sorted(f for f in os.listdir(a.man_dir) if f.endswith(".1"))
    print(f"{len(pages)} man pages checked: {' '.join(pages)}")


if __name__ == "__main__":
    main()
