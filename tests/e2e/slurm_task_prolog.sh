#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/slurm/gpulens-task-prolog.sh as slurmd runs it: what it prints is what the
# task's environment gets. With the library and the agent's socket there, the
# counter goes first in LD_PRELOAD (the task's own entries kept) and the socket is
# named; otherwise, or when the job opted out or already preloads it, nothing.
#
#   tests/e2e/slurm_task_prolog.sh [deploy/slurm/gpulens-task-prolog.sh]
set -euo pipefail
cd "$(dirname "$0")/../.."
script=${1:-deploy/slurm/gpulens-task-prolog.sh}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "slurm_task_prolog: $*" >&2
  exit 1
}

lib="$work/libgpulens_launches.so"
socket="$work/kernels.sock"
: >"$lib"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' "$socket"
echo 'GPULENS_LAUNCHES_SOCKET=/nowhere.sock' >"$work/empty.conf"
: >"$work/none.conf"

run() {  # env assignments...: what the task prolog prints, with no config file
  env -i PATH="$PATH" GPULENS_PROLOG_CONF="$work/none.conf" GPULENS_LAUNCHES_LIBRARY="$lib" \
    GPULENS_LAUNCHES_SOCKET="$socket" "$@" sh "$script" 2>/dev/null  # ld.so: the stand-in paths
}

want="export LD_PRELOAD=$lib
export GPULENS_LAUNCHES_AGENT=$socket"
[[ "$(run)" == "$want" ]] || fail "plain task: $(run)"

want="export LD_PRELOAD=$lib:/opt/own.so
export GPULENS_LAUNCHES_AGENT=$socket"
[[ "$(run LD_PRELOAD=/opt/own.so)" == "$want" ]] || fail "own preload: $(run LD_PRELOAD=/opt/own.so)"

[[ -z "$(run LD_PRELOAD="/opt/own.so $lib")" ]] || fail "the library already preloaded"
[[ -z "$(run GPULENS_LAUNCHES=0)" ]] || fail "the job opted out"
[[ -z "$(run GPULENS_LAUNCHES_LIBRARY="$work/missing.so")" ]] || fail "no library"
[[ -z "$(run GPULENS_LAUNCHES_SOCKET="$work/missing.sock")" ]] || fail "no agent socket"
[[ -z "$(run GPULENS_LAUNCHES_SOCKET="$lib")" ]] || fail "a file that is not a socket"
# The configuration file's settings count, as the prolog's do.
[[ -z "$(env -i PATH="$PATH" GPULENS_PROLOG_CONF="$work/empty.conf" GPULENS_LAUNCHES_LIBRARY="$lib" \
  sh "$script")" ]] || fail "the configuration file's socket is not used"
run >/dev/null || fail "it must exit 0"
echo "slurm_task_prolog: the task gets the counter and the socket only where both are there"
