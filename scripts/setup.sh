#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs from Debian's packages what gpulens needs.
#
#   scripts/setup.sh           to build and run gpulens (scripts/run.sh): a compiler,
#                              CMake and the libraries it links; nothing that starts a
#                              service, so it is safe on a GPU node with a site's own
#                              Slurm or Prometheus
#   scripts/setup.sh --tests   also everything the tests use (scripts/test.sh): test
#                              libraries, browsers, a one-node Slurm, Prometheus...
#                              Debian starts some of those as services when installed
#   --list                     print the packages of that set, one a line; install nothing
#
# Skips apt entirely when everything is already there, so re-runs are quick.
set -euo pipefail

# Building and running gpulens (tests/e2e/setup_packages.sh checks that none of
# these, nor anything they pull in, is a daemon or a test-only package).
build_packages=(
  build-essential cmake ninja-build pkg-config
  nlohmann-json3-dev libcli11-dev libfmt-dev libtomlplusplus-dev libsqlite3-dev
  libboost-dev libssl-dev libcrypt-dev  # Boost: header-only Beast (HTTP parsing)
  libncurses-dev                        # `gpulens top`, linked statically
  zlib1g-dev                            # gzip of /metrics, linked statically
  libnghttp2-dev                        # HTTP/2 of the kubelet's pod-resources API, linked statically
  python3                               # writes the wheel of python/ (python/build_wheel.py)
  xz-utils                              # configuring restores the recordings committed as .xz (cmake/fixtures.cmake)
)
# Everything else scripts/test.sh runs.
test_packages=(
  clang-format git
  libgtest-dev libgmock-dev libbenchmark-dev
  prometheus prometheus-alertmanager chromium python3-yaml curl nodejs npm
  clang libclang-rt-14-dev  # libFuzzer targets (scripts/fuzz.sh) and the clang preset
  tmux
  openssl                     # certificates for the TLS tests (tests/unit/http, exposition), not left to chance
  dpkg-dev rpm cpio           # the .deb (dpkg-shlibdeps) and the .rpm (cmake/install.cmake)
  groff-base man-db           # the man pages' checks (tests/e2e/man_pages.py)
  lintian                     # the .deb has no lintian errors (tests/e2e/package.sh)
  podman                      # the container image, built offline (deploy/container)
  munge slurmctld slurmd slurm-client  # a one-node Slurm (tests/e2e/slurm_cluster.sh), ~4 MB, ~10 s
  python3-grpcio python3-protobuf protobuf-compiler  # a pod-resources gRPC server (tests/e2e/kubelet_pod_resources.sh)
  # python/: the wheel pip-installed offline into venvs (the venvs' own pip and setuptools)
  python3-venv python3-pip-whl python3-setuptools-whl
)

tests=0 list=0
for arg in "$@"; do
  case $arg in
    --tests) tests=1 ;;
    --list) list=1 ;;
    -h | --help)
      sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "gpulens setup: unknown argument '$arg' (--tests, --list, --help)" >&2
      exit 2
      ;;
  esac
done

packages=("${build_packages[@]}")
((tests)) && packages+=("${test_packages[@]}")
if [[ "${GPULENS_SETUP_EXTRA:-}" != "" ]]; then
  read -r -a extra <<<"$GPULENS_SETUP_EXTRA"
  packages+=("${extra[@]}")
fi
if ((list)); then
  printf '%s\n' "${packages[@]}"
  exit 0
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
finish() {
  if ((tests)); then install_deploy_check; fi
}

missing=()
for p in "${packages[@]}"; do
  # npm: a Node.js from elsewhere (NodeSource's nodejs bundles npm) conflicts
  # with Debian's npm package; any working npm will do.
  if [[ $p == npm ]] && command -v npm >/dev/null; then continue; fi
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  finish
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
echo "gpulens setup: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
finish
