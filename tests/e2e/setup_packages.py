#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The quick start installs only what building and running gpulens needs.

Reads the setup command scripts/run.sh runs, asks scripts/setup.sh which packages
that command installs (--list), and fails when one of them, or anything they
depend on, is a test-only package or a daemon: a package that ships a systemd
unit or an init script, which Debian enables and starts when it is installed (on
a GPU node that can collide with the site's own Slurm or Prometheus). The
packages are read from dpkg's database, so they must be installed (test.sh's
setup installs every set first)."""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Packages that only the tests use: none may reach the quick start's set.
TEST_ONLY = {
    "libgtest-dev", "libgmock-dev", "libbenchmark-dev", "clang-format", "clang",
    "libclang-rt-14-dev", "chromium", "prometheus", "prometheus-alertmanager", "tmux",
    "lintian", "podman", "munge", "slurmctld", "slurmd", "slurm-client", "nodejs", "npm",
    "rpm", "python3-venv",
}
UNIT = re.compile(r"^/(usr/)?lib/systemd/(system|user)/[^/]+\.(service|socket|timer)$|^/etc/init\.d/.")


def run_sh_setup_args():
    """The arguments scripts/run.sh passes to scripts/setup.sh."""
    for line in open(os.path.join(ROOT, "scripts", "run.sh")):
        words = shlex.split(line, comments=True)
        if words and words[0] == "scripts/setup.sh":
            return words[1:]
    sys.exit("setup_packages: scripts/run.sh does not run scripts/setup.sh")


def installed():
    """Each installed package's dependencies (first installed alternative), what
    each virtual name is provided by, and the packages of Debian's base system."""
    out = subprocess.run(
        ["dpkg-query", "-W", "-f",
         "${Package}\t${Status}\t${Essential}\t${Priority}\t${Pre-Depends}, ${Depends}\t${Provides}\n"],
        check=True, capture_output=True, text=True).stdout
    deps, providers, base = {}, {}, set()
    for row in out.splitlines():
        name, status, essential, priority, depends, provides = row.split("\t")
        if not status.endswith(" installed"):
            continue
        # On every Debian system already (dpkg's backup timer, procps' sysctl
        # script): nothing the quick start adds.
        if essential == "yes" or priority in ("required", "important"):
            base.add(name)
        deps[name] = [[re.split(r"[ :(]", alt.strip())[0] for alt in group.split("|")]
                      for group in depends.split(",") if group.strip()]
        for p in provides.split(","):
            if p.strip():
                providers.setdefault(re.split(r"[ (]", p.strip())[0], []).append(name)
    return deps, providers, base


def closure(roots, deps, providers):
    seen, todo, missing = set(), list(roots), []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        real = name if name in deps else next(iter(providers.get(name, [])), None)
        if real is None:
            missing.append(name)
            continue
        seen.add(real)
        for group in deps[real]:
            chosen = next((a for a in group if a in deps or a in providers), None)
            if chosen:
                todo.append(chosen)
    return seen, missing


def main():
    args = run_sh_setup_args()
    if "--tests" in args:
        sys.exit("setup_packages: scripts/run.sh installs the tests' packages (--tests)")
    listed = subprocess.run([os.path.join(ROOT, "scripts", "setup.sh"), *args, "--list"],
                            check=True, capture_output=True, text=True).stdout.split()
    deps, providers, base = installed()
    pulled, missing = closure(listed, deps, providers)
    pulled -= base
    failures = [f"not installed, cannot be checked: {m}" for m in missing if m in listed]
    failures += [f"test-only package in the quick start: {p}" for p in sorted(pulled & TEST_ONLY)]
    for name in sorted(pulled):
        files = subprocess.run(["dpkg-query", "-L", name], capture_output=True, text=True).stdout
        units = [f for f in files.splitlines() if UNIT.match(f)]
        if units:
            failures.append(f"daemon in the quick start: {name} ships {', '.join(units[:3])}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print(f"setup_packages: scripts/run.sh installs {len(listed)} packages, {len(pulled)} with "
          "their dependencies: no test-only package, no service")


if __name__ == "__main__":
    main()
