#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the gpulens wheel (gpulens-VERSION-py3-none-any.whl) of python/gpulens,
a zip laid out as PEP 427 says: the package's files, then gpulens-VERSION.dist-info/
with METADATA (core metadata 2.1, from pyproject.toml and README.md), WHEEL and
RECORD (each file's sha256 and size).

    python3 python/build_wheel.py --out-dir build/debug/python

Why a script of our own and not `pip wheel`: the build must work offline and
with no Python package installed. `pip wheel --no-build-isolation` needs pip,
setuptools and wheel in the building Python, and Debian's setuptools is patched
(its `install_layout` option breaks in any other Python); PyPI's are out of
reach. A pure-Python wheel is a zip with three text files beside the code, so
the standard library writes it. It is also reproducible: entries sorted, every
time stamp SOURCE_DATE_EPOCH (else 1980-01-01), modes fixed, so the same tree
gives the same bytes (python/tests/test_wheel.py builds it twice).
"""

import argparse
import base64
import hashlib
import io
import os
import re
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "gpulens"
# What the package holds besides code: the shared tables it reads at import.
PACKAGE_FILES = re.compile(r"^[a-z_][a-z0-9_]*\.(py|json)$")


def project(pyproject):
    """name, version, summary, licence, requires-python and classifiers of
    pyproject.toml's [project] table. Python 3.8 has no tomllib: the few
    one-line keys this file uses are read by pattern, and a key missing is an
    error, not a wheel with less metadata."""
    with open(pyproject, encoding="utf-8") as f:
        text = f.read()
    table = re.search(r"^\[project\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not table:
        raise SystemExit("%s: no [project] table" % pyproject)
    body = table.group(1)

    def key(name, pattern=r'"([^"]*)"'):
        m = re.search(r"^%s\s*=\s*%s" % (re.escape(name), pattern), body, re.M)
        if not m:
            raise SystemExit("%s: [project] has no %s" % (pyproject, name))
        return m.group(1)

    classifiers = re.search(r"^classifiers\s*=\s*\[(.*?)\]", body, re.M | re.S)
    return {
        "name": key("name"),
        "version": key("version"),
        "description": key("description"),
        "license": key("license", r'\{\s*text\s*=\s*"([^"]*)"\s*\}'),
        "requires_python": key("requires-python"),
        "classifiers": re.findall(r'"([^"]+)"', classifiers.group(1)) if classifiers else [],
    }


def metadata(p, readme):
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % p["name"],
        "Version: %s" % p["version"],
        "Summary: %s" % p["description"],
        "License: %s" % p["license"],
        "Requires-Python: %s" % p["requires_python"],
    ]
    lines += ["Classifier: %s" % c for c in p["classifiers"]]
    lines.append("Description-Content-Type: text/markdown")
    return ("\n".join(lines) + "\n\n" + readme).encode("utf-8")


def wheel_file():
    return ("Wheel-Version: 1.0\nGenerator: gpulens python/build_wheel.py\n"
            "Root-Is-Purelib: true\nTag: py3-none-any\n").encode("utf-8")


def record_hash(data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def build(out_dir, source=HERE):
    p = project(os.path.join(source, "pyproject.toml"))
    if p["name"] != PACKAGE:
        raise SystemExit("pyproject.toml names %r, not %r" % (p["name"], PACKAGE))
    with open(os.path.join(source, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    package_dir = os.path.join(source, PACKAGE)
    files = []
    for name in sorted(os.listdir(package_dir)):
        path = os.path.join(package_dir, name)
        if PACKAGE_FILES.match(name) and os.path.isfile(path):
            with open(path, "rb") as f:
                files.append(("%s/%s" % (PACKAGE, name), f.read()))
    dist_info = "%s-%s.dist-info" % (PACKAGE, p["version"])
    files.append((dist_info + "/METADATA", metadata(p, readme)))
    files.append((dist_info + "/WHEEL", wheel_file()))
    record = io.StringIO()
    for name, data in files:
        record.write("%s,%s,%d\n" % (name, record_hash(data), len(data)))
    record.write("%s/RECORD,,\n" % dist_info)
    files.append((dist_info + "/RECORD", record.getvalue().encode("utf-8")))

    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, zip's first day
    stamp = time.gmtime(max(epoch, 315532800))[:6]
    os.makedirs(out_dir, exist_ok=True)
    wheel = os.path.join(out_dir, "%s-%s-py3-none-any.whl" % (PACKAGE, p["version"]))
    partial = wheel + ".part"
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    os.replace(partial, wheel)  # never a half-written wheel under the final name
    return wheel


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write the gpulens wheel of python/gpulens.")
    parser.add_argument("--out-dir", required=True, help="directory for the .whl")
    args = parser.parse_args(argv)
    print(build(args.out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
