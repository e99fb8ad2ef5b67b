#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ARCHITECTURE.md's table of layers is true of the includes (issue 52).

The table under "## Folders, what each may use" has a row per folder of src/:
| `folder` | what it holds | uses | never |. A folder sees the headers of the
folders its "uses" cell names and, through them, of what those use in turn (the
build passes include roots on the same way). The check reads the table as it is,
so it follows the table when a row changes, and fails when a file of src/<folder>/
includes "<other>/..." of a folder outside that closure, when a row names a use
that no file of its folder includes (a use the code does not have), when
CMakeLists.txt's gpulens_layer(<folder> ...) links a layer the row does not name,
when a row names a folder src/ lacks, or when a folder of src/ that has no row
(src/platform, outside the layers) includes another folder's header. Words in parentheses are commentary,
not uses; words that are no folder of src/ (nlohmann-json, SQLite) are libraries.
A folder whose rows name its subfolders (`kernels/record`, `kernels/view`) is
split into those layers: an include "kernels/record/..." is of the layer
kernels/record, and gpulens_layer(<name> DIR <folder> ...) is that folder's layer.

Usage: layer_includes.py [SOURCE_DIR]   (the repository; default: this checkout)
       layer_includes.py --self-test    (scratch trees the check must refuse)"""
import os
import re
import sys
import tempfile

import tree_check

HEADING = "## Folders, what each may use"
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([A-Za-z0-9_]+)/(?:([A-Za-z0-9_]+)/)?', re.MULTILINE)
ROW = re.compile(r"`([a-z_]+(?:/[a-z_]+)?)`")
WORD = re.compile(r"[A-Za-z_]+(?:/[A-Za-z_]+)?")
SUFFIXES = (".cpp", ".hpp", ".h", ".cc", ".inc")


def without_parentheses(text):
    out, depth = [], 0
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def read_table(root, folders):
    """{folder: set of folders its "uses" cell names}; None when there is no table."""
    with open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8") as f:
        text = f.read()
    start = text.find(HEADING)
    if start < 0:
        return None
    rows, seen_table = {}, False
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if seen_table:
                break
            continue
        seen_table = True
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = ROW.match(cells[0]) if cells else None
        if not name or len(cells) < 3:
            continue  # the header row and its rule
        words = WORD.findall(without_parentheses(cells[2]))
        rows[name.group(1)] = {w for w in words if w in folders}
    return rows


def layers_of(src, names):
    """The layers of src/: each folder, or its subfolders where rows name them."""
    out = set()
    for d in os.listdir(src):
        if not os.path.isdir(os.path.join(src, d)):
            continue
        subs = {n for n in names if n.startswith(d + "/") and os.path.isdir(os.path.join(src, n))}
        out |= subs or {d}
    return out


def layer_of_include(first, second, layers):
    nested = f"{first}/{second}" if second else None
    if nested in layers:
        return nested
    return first if first in layers else None


def closure(rows, folder):
    seen, todo = set(), list(rows.get(folder, ()))
    while todo:
        used = todo.pop()
        if used not in seen:
            seen.add(used)
            todo.extend(rows.get(used, ()))
    return seen


def cmake_links(root, folders):
    """{layer: layers gpulens_layer(name [DIR folder] ...) of CMakeLists.txt links}."""
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        text = f.read()
    layers = re.findall(r"^gpulens_layer\((\w+)([^)]*)\)", text, re.MULTILINE)
    folder_of = {}
    for name, rest in layers:
        where = re.search(r"\bDIR\s+(\S+)", rest)
        folder_of[name] = where.group(1) if where else name
    return {folder_of[name]: {folder_of.get(t, t) for t in re.findall(r"\bgpulens_([a-z_]+)", rest)}
            & folders for name, rest in layers}


def problems(root):
    src = os.path.join(root, "src")
    with open(os.path.join(root, "ARCHITECTURE.md"), encoding="utf-8") as f:
        named = set(ROW.findall(f.read()))
    folders = layers_of(src, named)
    rows = read_table(root, folders)
    if not rows:
        return [f"ARCHITECTURE.md has no table of layers under '{HEADING}'"]
    said = [f"ARCHITECTURE.md: the row `{name}` names no folder of src/"
            for name in sorted(set(rows) - folders)]
    for folder, linked in sorted(cmake_links(root, folders).items()):
        for used in sorted(linked - rows.get(folder, set())):
            said.append(f"CMakeLists.txt: gpulens_layer({folder}) links gpulens_{used}, which "
                        f"the row `{folder}` of ARCHITECTURE.md does not name")
    for folder in sorted(folders):
        allowed = closure(rows, folder) | {folder}
        included_here = set()
        for where, _, files in sorted(os.walk(os.path.join(src, folder))):
            for name in sorted(files):
                if not name.endswith(SUFFIXES):
                    continue
                path = os.path.join(where, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    included = {layer_of_include(a, b, folders) for a, b in INCLUDE.findall(f.read())}
                included.discard(None)
                included_here.update(included)
                for used in sorted(set(included) & folders - allowed):
                    rel = os.path.relpath(path, root)
                    if folder in rows:
                        said.append(f"{rel} includes {used}/, which the row `{folder}` of "
                                    f"ARCHITECTURE.md does not allow (it may use: "
                                    f"{', '.join(sorted(allowed - {folder})) or 'nothing'})")
                    else:
                        said.append(f"{rel} includes {used}/, but src/{folder} has no row in "
                                    f"ARCHITECTURE.md's table, so it may use no other folder")
        for used in sorted(rows.get(folder, set()) - included_here):
            said.append(f"ARCHITECTURE.md: the row `{folder}` names {used}, but no file of "
                        f"src/{folder}/ includes {used}/")
    return said


def self_test():
    table = ("# x\n\n" + HEADING + ", and what must never point back\n\ntext\n\n"
             "| folder | what it holds | uses | never |\n|---|---|---|---|\n"
             "| `core` | the model | fmt | anything |\n"
             "| `mid` | middle | core (not `top`, see top/) | top |\n"
             "| `top` | top | mid, SQLite | — |\n"
             "| `deep/rec` | values | core | deep/view |\n"
             "| `deep/view` | analysis | deep/rec | — |\n\nafter | the table\n")
    scratch = tempfile.mkdtemp(prefix="gpulens-layers-")

    def tree(files):
        root = tempfile.mkdtemp(dir=scratch)
        cmake = "gpulens_layer(core PUBLIC fmt)\ngpulens_layer(mid PUBLIC gpulens_core)\n"
        for path, text in {"ARCHITECTURE.md": table, "CMakeLists.txt": cmake, **files}.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        return root

    fine = {"src/core/a.hpp": '#include <vector>\n#include "core/b.hpp"\n',
            "src/mid/m.cpp": '#include "core/a.hpp"\n#include "local.hpp"\n',
            "src/top/t.cpp": '#include "mid/m.hpp"\n#include "core/a.hpp"  // through mid\n',
            "src/platform/p.cpp": "#include <stdio.h>\n",
            "src/deep/rec/r.hpp": '#include "core/a.hpp"\n',
            "src/deep/view/v.hpp": '#include "deep/rec/r.hpp"\n'}
    cases = {
        "an include that points up": (
            {**fine, "src/mid/up.cpp": '#include "top/t.hpp"\n'}, "src/mid/up.cpp includes top/"),
        "a use named only in parentheses": (
            {**fine, "src/mid/sub/x.hpp": '  #  include "top/t.hpp"\n'}, "includes top/"),
        "core using a layer": ({**fine, "src/core/c.cpp": '#include "mid/m.hpp"\n'},
                               "src/core/c.cpp includes mid/"),
        "a folder without a row using one": (
            {**fine, "src/platform/q.cpp": '#include "core/a.hpp"\n'}, "has no row"),
        "a row without its folder": ({"src/core/a.hpp": "", "src/mid/m.cpp": ""},
                                     "the row `top` names no folder"),
        "a use nothing includes": ({**fine, "src/mid/m.cpp": "#include <vector>\n"},
                                   "the row `mid` names core, but no file"),
        "a nested layer using its sibling": (
            {**fine, "src/mid/sub/x.hpp": '#include "core/a.hpp"\n',
             "src/deep/rec/r.hpp": '#include "core/a.hpp"\n',
             "src/deep/view/v.hpp": '#include "deep/rec/r.hpp"\n',
             "src/deep/rec/bad.hpp": '#include "deep/view/v.hpp"\n'},
            "src/deep/rec/bad.hpp includes deep/view/"),
        "a link the table does not draw": (
            {**fine, "CMakeLists.txt": "gpulens_layer(mid PUBLIC gpulens_core\n  gpulens_top)\n"},
            "gpulens_layer(mid) links gpulens_top"),
    }
    return tree_check.self_test(problems, tree, scratch, cases, fine)


def summary(_root, said):
    if not said:
        print("layer_includes: every include of src/ is one ARCHITECTURE.md's table allows")


if __name__ == "__main__":
    sys.exit(tree_check.main("layer_includes", problems, self_test, summary))
