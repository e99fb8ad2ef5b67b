#!/usr/bin/env bash
# Installs what gpulens needs to build and test, from Debian's packages.
# Skips apt entirely when everything is already there, so re-runs are quick.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config clang-format git
  nlohmann-json3-dev libcli11-dev libfmt-dev libtomlplusplus-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcpp-httplib-dev libssl-dev libcrypt-dev
  libncurses-dev tmux
  prometheus chromium python3 curl
)
if [[ "${GPULENS_SETUP_EXTRA:-}" != "" ]]; then
  read -r -a extra <<<"$GPULENS_SETUP_EXTRA"
  packages+=("${extra[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
echo "gpulens setup: installing ${missing[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
