# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Where the end-to-end scripts that drive a browser or a built binary find them
# (dashboard_chromium.sh, report_chromium.sh, kernel_history_restart.sh). Sourced
# from the repository root; it only defines functions (lib.sh, which the agent's
# other scripts source, also sets a trap and a scratch directory, which these
# scripts keep for themselves). Messages are prefixed with the script's name.

e2e_script_name() {
  local name=${0##*/}
  echo "${name%.sh}"
}

# find_chromium: sets $chrome to the first Chromium on PATH; without one, exits 77
# (ctest: skipped) saying so, so that a missing browser never reads as a pass.
find_chromium() {
  local c
  chrome=""
  for c in chromium chromium-browser google-chrome; do
    if command -v "$c" >/dev/null; then chrome=$c; return 0; fi
  done
  echo "$(e2e_script_name): SKIPPED: chromium is not installed (apt-get install -y chromium)" >&2
  exit 77
}

# find_binary NAME VAR: sets $bin to the binary that $VAR names, else to the first
# built of build/{debug,release,run}/NAME; exits 1 saying so when there is none.
find_binary() {
  local name=$1 var=$2 b
  bin=${!var:-}
  if [[ -z "$bin" ]]; then
    for b in "build/debug/$name" "build/release/$name" "build/run/$name"; do
      if [[ -x "$b" ]]; then bin=$b; break; fi
    done
  fi
  if [[ -z "$bin" || ! -x "$bin" ]]; then
    echo "$(e2e_script_name): no $name binary (build it, or set $var)" >&2
    exit 1
  fi
}
