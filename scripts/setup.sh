#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what gpulens needs to build and test, from Debian's packages.
# Skips apt entirely when everything is already there, so re-runs are quick.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format git
  nlohmann-json3-dev libcli11-dev libfmt-dev libtomlplusplus-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libboost-dev libssl-dev libcrypt-dev  # Boost: header-only Beast (HTTP parsing)
  prometheus prometheus-alertmanager chromium python3 python3-yaml curl nodejs npm
  clang libclang-rt-14-dev  # libFuzzer targets (scripts/fuzz.sh) and the clang preset
  libncurses-dev tmux
  dpkg-dev rpm cpio           # the .deb (dpkg-shlibdeps) and the .rpm (cmake/install.cmake)
  groff-base man-db           # the man pages' checks (tests/e2e/man_pages.py)
  lintian                     # the .deb has no lintian errors (tests/e2e/package.sh)
  podman                      # the container image, built offline (deploy/container)
  munge slurmctld slurmd slurm-client  # a one-node Slurm (tests/e2e/slurm_cluster.sh), ~4 MB, ~10 s
  # python/: `pip install ./python` offline in a venv, Debian's wheels standing in for PyPI
  python3-venv python3-pip-whl python3-setuptools-whl python3-wheel-whl
)
if [[ "${GPULENS_SETUP_EXTRA:-}" != "" ]]; then
  read -r -a extra <<<"$GPULENS_SETUP_EXTRA"
  packages+=("${extra[@]}")
fi

# deploy/check: the schema checkers of deploy/ (npm, pinned by package-lock.json).
install_deploy_check() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/deploy/check"
  if [[ ! -d "$dir/node_modules/kubernetes-models" ]] && command -v npm >/dev/null; then
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
      echo "gpulens setup: npm ci in deploy/check failed; its tests will be skipped" >&2
  elif ! command -v npm >/dev/null; then
    echo "gpulens setup: npm missing (Debian: apt-get install npm); deploy/ schema tests will be skipped" >&2
  fi
}

missing=()
for p in "${packages[@]}"; do
  # npm: a Node.js from elsewhere (NodeSource's nodejs bundles npm) conflicts
  # with Debian's npm package; any working npm will do.
  if [[ $p == npm ]] && command -v npm >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  install_deploy_check
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
echo "gpulens setup: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_deploy_check
