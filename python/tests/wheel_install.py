# SPDX-License-Identifier: Apache-2.0
"""The wheel (python/build_wheel.py, shipped in the .deb as
/usr/share/gpulens/gpulens-VERSION-py3-none-any.whl) installed offline, as
python/README.md says it, into a venv of every Python this machine has:
Debian's /usr/bin/python3 always, and each pyenv version (~/.pyenv/versions or
$PYENV_ROOT; $GPULENS_TEST_PYTHONS adds more, colon-separated). A Python older
than 3.8 must refuse the wheel in words. The Pythons it used are printed: a
machine with only Debian's tests that one, and says so; none is skipped
silently, and one that cannot make a venv fails the test. Its own ctest entry
(python_package_offline_install): a minute or more.
Run by hand: cd python && python3 -m unittest -v tests.wheel_install
"""

import glob
import json
import os
import subprocess
import sys
import unittest
import zipfile

from . import support

sys.path.insert(0, support.PYTHON_DIR)
import build_wheel  # noqa: E402  (python/build_wheel.py, beside the package)

DEBIAN_PYTHON = "/usr/bin/python3"


def pythons():
    """(path, (major, minor)) of every Python to install into."""
    found = [DEBIAN_PYTHON if os.path.exists(DEBIAN_PYTHON) else sys.executable]
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    found += sorted(glob.glob(os.path.join(root, "versions", "*", "bin", "python3")))
    found += [p for p in os.environ.get("GPULENS_TEST_PYTHONS", "").split(":") if p]
    out = []
    for path in found:
        r = subprocess.run([path, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        if r.returncode != 0:
            raise AssertionError("%s does not run: %s" % (path, r.stdout.decode()))
        major, minor = (int(x) for x in r.stdout.split())
        if major == 3:  # pyenv's 2.7 has no venv module and is not a Python 3 at all
            out.append((path, (major, minor)))
    return out


class WheelInstall(support.TempDirTest):
    def env(self):
        # Nothing from this machine's pip settings (an index, extra find-links),
        # and any attempt to reach an index fails at once.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
        env["PIP_CONFIG_FILE"] = os.devnull
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
            env[proxy] = "http://127.0.0.1:9"
        return env

    def run_cmd(self, argv, env=None, ok=True):
        r = subprocess.run(list(argv), cwd=self.tmp, env=env or self.env(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        if ok:
            self.assertEqual(r.returncode, 0, "%s:\n%s" % (" ".join(argv), r.stdout.decode()))
        return r.returncode, r.stdout.decode()

    def test_the_wheel_installs_offline_into_every_python(self):
        wheel = build_wheel.build(self.path("dist"))
        self.assertEqual(os.path.basename(wheel),
                         "gpulens-%s-py3-none-any.whl" % support.gpulens_version())
        tried = []
        for python, version in pythons():
            venv = self.path("v-%d.%d-%d" % (version + (len(tried),)))
            with self.subTest(python=python):
                self.run_cmd([python, "-m", "venv", venv])
                pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-index"]
                if version < (3, 8):
                    rc, text = self.run_cmd(pip + [wheel], ok=False)
                    self.assertNotEqual(rc, 0, text)
                    # pip's words: "requires a different Python: 3.7.16 not in
                    # '>=3.8'" (pip 21+), "requires Python '>=3.8' but the running
                    # Python is 3.6.15" (older)
                    self.assertRegex(text, r"requires (a different )?Python")
                    self.assertIn(">=3.8", text)
                    tried.append("%s (%d.%d): refused, as it should" % ((python,) + version))
                    continue
                self.run_cmd(pip + [wheel])  # the README's command
                self.check_installed(venv, wheel)
                tried.append("%s (%d.%d): installed" % ((python,) + version))
        print("\nthe wheel, offline, into venvs of:\n  " + "\n  ".join(tried), file=sys.stderr)
        self.assertTrue(any(t.startswith(DEBIAN_PYTHON) for t in tried) or
                        not os.path.exists(DEBIAN_PYTHON))

    def check_installed(self, venv, wheel):
        python = os.path.join(venv, "bin", "python")
        probe = ("import gpulens, json, os, importlib.metadata as m; print(json.dumps(["
                 "gpulens.__file__, gpulens.__version__, m.metadata('gpulens')['License'], "
                 "sorted(f for f in os.listdir(os.path.dirname(gpulens.__file__)) "
                 "if f != '__pycache__')]))")
        _, out = self.run_cmd([python, "-c", probe])
        where, version, licence, files = json.loads(out)
        self.assertTrue(os.path.realpath(where).startswith(os.path.realpath(venv)), where)
        self.assertEqual(version, support.gpulens_version())
        self.assertEqual(licence, "Apache-2.0")
        with zipfile.ZipFile(wheel) as z:
            packed = sorted(n.split("/", 1)[1] for n in z.namelist() if n.startswith("gpulens/"))
        self.assertEqual(files, packed)
        self.assertIn("nvml.py", files)
        # pip's own check of what it installed: the RECORD matches the files.
        self.run_cmd([python, "-m", "pip", "check"])
        marks = self.path("marks.jsonl")
        self.run_cmd([python, "-m", "gpulens", "mark", "step", "--flops", "2"],
                     env=dict(self.env(), GPULENS_MARKS=marks))
        with open(marks) as f:
            self.assertEqual(json.loads(f.readlines()[-1])["flops"], 2.0)


if __name__ == "__main__":
    unittest.main()
