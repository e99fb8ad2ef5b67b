# SPDX-License-Identifier: Apache-2.0
"""The package itself: one version everywhere, a plain directory of .py files
and the shared table (the .deb copies them as they are), importable on Python
3.8, standard library only but for the two framework callbacks; and its wheel
(python/build_wheel.py): reproducible, laid out as PEP 427 says."""

import ast
import os
import re
import unittest

import gpulens

from . import support


class Package(unittest.TestCase):
    def test_one_version(self):
        cmake = support.gpulens_version()
        with open(os.path.join(support.PYTHON_DIR, "pyproject.toml"), encoding="utf-8") as f:
            pyproject = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
        self.assertEqual((gpulens.__version__, pyproject), (cmake, cmake))

    def test_a_plain_directory_of_python_files(self):
        package = os.path.join(support.PYTHON_DIR, "gpulens")
        names = sorted(n for n in os.listdir(package) if n != "__pycache__")
        self.assertEqual(names, ["__init__.py", "__main__.py", "callbacks.py", "client.py",
                                 "hf_callback.py", "lightning_callback.py", "live.py",
                                 "marks.py", "nvml.py", "trace.py", "trace_rules.json"])
        # The table is data/'s, linked: one file, read by this package and
        # checked against the C++ reader's constants.
        self.assertEqual(os.path.realpath(os.path.join(package, "trace_rules.json")),
                         os.path.realpath(os.path.join(support.REPO, "data", "trace_rules.json")))

    # The callbacks' modules import their framework; nothing else may, and
    # `import gpulens` imports neither of them.
    FRAMEWORKS = {"lightning_callback.py": {"lightning", "pytorch_lightning"},
                  "hf_callback.py": {"transformers"}}

    def test_standard_library_only(self):
        import sys
        stdlib = getattr(sys, "stdlib_module_names", None)
        package = os.path.join(support.PYTHON_DIR, "gpulens")
        for name in os.listdir(package):
            if not name.endswith(".py"):
                continue
            with open(os.path.join(package, name), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    roots = [a.name.split(".")[0] for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    roots = [node.module.split(".")[0]]
                else:
                    continue
                for root in roots:
                    if root in self.FRAMEWORKS.get(name, ()):
                        continue
                    with self.subTest(file=name, module=root):
                        if stdlib is not None:  # Python 3.10+
                            self.assertIn(root, stdlib)
                        else:
                            self.assertNotIn(root, ("numpy", "requests", "torch", "yaml"))

    def test_import_needs_no_framework(self):
        import subprocess
        import sys
        probe = ("import sys, gpulens; print(sorted(m for m in sys.modules if m.split('.')[0] in "
                 "('torch', 'lightning', 'pytorch_lightning', 'transformers') or "
                 "m.endswith('_callback')))")
        r = subprocess.run([sys.executable, "-c", probe], cwd=support.PYTHON_DIR,
                           stdout=subprocess.PIPE, timeout=60)
        self.assertEqual(r.stdout.decode().strip(), "[]")

    def test_python_38_syntax(self):
        # Parsed with 3.8's grammar: no match statements, no parenthesised
        # context managers, no X | Y annotations evaluated at import.
        package = os.path.join(support.PYTHON_DIR, "gpulens")
        for name in os.listdir(package):
            if name.endswith(".py"):
                with open(os.path.join(package, name), encoding="utf-8") as f:
                    source = f.read()
                with self.subTest(name):
                    try:
                        ast.parse(source, feature_version=(3, 8))
                    except TypeError:  # Python before 3.8 has no feature_version
                        ast.parse(source)
                    self.assertNotRegex(source, r"\b(list|dict|tuple|set)\[")

    def test_the_module_runs_as_a_command(self):
        import subprocess
        import sys
        r = subprocess.run([sys.executable, "-m", "gpulens", "--help"], cwd=support.PYTHON_DIR,
                           stdout=subprocess.PIPE)
        self.assertEqual(r.returncode, 0)
        self.assertIn(b"python -m gpulens mark NAME", r.stdout)
        r = subprocess.run([sys.executable, "-m", "gpulens"], cwd=support.PYTHON_DIR,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 2)


class RunHelp(unittest.TestCase):
    def test_run_help_shows_calls_that_exist(self):
        import subprocess
        r = subprocess.run([support.gpulens_bin(), "run", "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
        text = r.stdout.decode()
        self.assertEqual(r.returncode, 0, text)
        calls = re.findall(r"gpulens\.(\w+)\(", text)
        self.assertIn("step", calls)
        self.assertIn("phase", calls)
        for name in calls:
            self.assertTrue(callable(getattr(gpulens, name, None)), name)
        self.assertIn("python -m gpulens mark step --flops", text)


class Wheel(unittest.TestCase):
    def build(self, out):
        import sys
        sys.path.insert(0, support.PYTHON_DIR)
        try:
            import build_wheel
        finally:
            sys.path.remove(support.PYTHON_DIR)
        return build_wheel.build(out)

    def test_reproducible_and_as_pep_427_says(self):
        import base64
        import hashlib
        import shutil
        import tempfile
        import zipfile
        tmp = tempfile.mkdtemp(prefix="gpulens-wheel-")
        self.addCleanup(shutil.rmtree, tmp, True)
        first = self.build(os.path.join(tmp, "a"))
        second = self.build(os.path.join(tmp, "b"))
        with open(first, "rb") as a, open(second, "rb") as b:
            self.assertEqual(a.read(), b.read(), "two builds of one tree differ")
        version = support.gpulens_version()
        self.assertEqual(os.path.basename(first), "gpulens-%s-py3-none-any.whl" % version)
        info = "gpulens-%s.dist-info/" % version
        with zipfile.ZipFile(first) as z:
            names = z.namelist()
            package = sorted(n for n in os.listdir(os.path.join(support.PYTHON_DIR, "gpulens"))
                             if n.endswith((".py", ".json")))
            self.assertEqual(names, ["gpulens/" + n for n in package] +
                             [info + "METADATA", info + "WHEEL", info + "RECORD"])
            # The table travels as a file, not as the checkout's link.
            with open(os.path.join(support.REPO, "data", "trace_rules.json"), "rb") as f:
                self.assertEqual(z.read("gpulens/trace_rules.json"), f.read())
            wheel = z.read(info + "WHEEL").decode()
            self.assertIn("Root-Is-Purelib: true\n", wheel)
            self.assertIn("Tag: py3-none-any\n", wheel)
            meta = z.read(info + "METADATA").decode()
            for line in ("Metadata-Version: 2.1", "Name: gpulens", "Version: " + version,
                         "Requires-Python: >=3.8", "License: Apache-2.0"):
                self.assertIn(line + "\n", meta)
            record = [row.split(",") for row in z.read(info + "RECORD").decode().splitlines()]
            self.assertEqual([r[0] for r in record], names)
            for name, digest, size in record[:-1]:
                data = z.read(name)
                expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
                self.assertEqual((digest, int(size)), ("sha256=" + expected.decode(), len(data)))
            self.assertEqual(record[-1], [info + "RECORD", "", ""])
