# SPDX-License-Identifier: Apache-2.0
"""`pip install ./python` offline, as python/README.md says it, on Debian 12:
a venv, pip with no index and Debian's wheels (python3-setuptools-whl,
python3-wheel-whl, python3-pip-whl) for the build, then the installed package
used from elsewhere. Its own ctest entry (python_package_offline_install): it
takes a minute or more. Run by hand: cd python && python3 -m unittest tests.offline_install
"""

import json
import os
import shutil
import subprocess
import sys
import unittest

from . import support

WHEELS = "/usr/share/python-wheels"
# Debian's interpreter, which the documented command uses; elsewhere this one.
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


class OfflineInstall(support.TempDirTest):
    def test_venv_pip_install_without_an_index(self):
        for wheel in ("setuptools-", "wheel-"):
            found = [n for n in os.listdir(WHEELS) if n.startswith(wheel)] if os.path.isdir(
                WHEELS) else []
            self.assertTrue(found, "%s*.whl missing from %s: apt-get install python3-%swhl "
                            "(scripts/setup.sh)" % (wheel, WHEELS, wheel))
        # A copy: pip builds in the tree and leaves build/ and *.egg-info there.
        source = self.path("python")
        os.mkdir(source)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(os.path.join(support.PYTHON_DIR, name), source)
        shutil.copytree(os.path.join(support.PYTHON_DIR, "gpulens"),
                        os.path.join(source, "gpulens"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        # Nothing from this machine's pip settings (extra find-links, an index).
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        env["PIP_CONFIG_FILE"] = os.devnull
        for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env[proxy] = "http://127.0.0.1:9"  # any attempt to reach an index fails
        venv = self.path("v")

        def run(*argv, **kw):
            r = subprocess.run(list(argv), cwd=self.tmp, env=kw.pop("env", env),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=500, **kw)
            self.assertEqual(r.returncode, 0, "%s:\n%s" % (" ".join(argv), r.stdout.decode()))
            return r.stdout.decode()

        # The command of python/README.md, word for word (from self.tmp).
        run(PYTHON, "-m", "venv", "v")
        run(os.path.join(venv, "bin", "pip"), "install", "--no-index", "--find-links", WHEELS,
            "./python")
        probe = ("import gpulens, json, os; print(json.dumps([gpulens.__file__, "
                 "gpulens.__version__, sorted(os.listdir(os.path.dirname(gpulens.__file__)))]))")
        where, version, files = json.loads(run(os.path.join(venv, "bin", "python"), "-c", probe))
        self.assertTrue(os.path.realpath(where).startswith(os.path.realpath(venv)), where)
        self.assertEqual(version, support.gpulens_version())
        self.assertEqual([f for f in files if f != "__pycache__"],
                         ["__init__.py", "__main__.py", "client.py", "marks.py", "trace.py"])
        # The licence in the installed package's metadata, as in the .deb and .rpm.
        license_probe = "import importlib.metadata as m; print(m.metadata('gpulens')['License'])"
        self.assertEqual(run(os.path.join(venv, "bin", "python"), "-c", license_probe).strip(),
                         "Apache-2.0")
        marks = self.path("marks.jsonl")
        run(os.path.join(venv, "bin", "python"), "-m", "gpulens", "mark", "step", "--flops", "2",
            env=dict(env, GPULENS_MARKS=marks))
        with open(marks) as f:
            self.assertEqual(json.loads(f.read())["flops"], 2.0)


if __name__ == "__main__":
    unittest.main()
