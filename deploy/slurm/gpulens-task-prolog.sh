#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Slurm TaskProlog: counts the kernel launches of every task of every job on this
# node and sends the counts to the node's gpulens agent (docs/kernels-agent.md,
# "Launch counts"). slurmd runs it as the job's user before each task and reads what
# it prints: each `export NAME=value` line is set in the task's environment. It
# prints two, which put gpulens's launch counter (libgpulens_launches.so) first in
# LD_PRELOAD and name the agent's socket:
#
#   export LD_PRELOAD=/usr/lib/gpulens/libgpulens_launches.so[:the task's own]
#   export GPULENS_LAUNCHES_AGENT=/run/gpulens/kernels.sock
#
# slurm.conf:  TaskProlog=/usr/share/gpulens/slurm/gpulens-task-prolog.sh
# (or print its output from an existing task prolog). Settings from the environment
# or $GPULENS_PROLOG_CONF (default /etc/default/gpulens-prolog, as the prolog's):
#
#   GPULENS_LAUNCHES_LIBRARY   the counter (default /usr/lib/gpulens/libgpulens_launches.so)
#   GPULENS_LAUNCHES_SOCKET    the agent's --kernels-socket (default /run/gpulens/kernels.sock)
#
# It prints nothing, and the task runs as it would without it, when the library or
# the socket is missing (the agent is not receiving), when the job opted out
# (GPULENS_LAUNCHES=0 in its environment, e.g. `sbatch --export=ALL,GPULENS_LAUNCHES=0`)
# or when the task's LD_PRELOAD already holds the library. It never fails the task.

conf=${GPULENS_PROLOG_CONF:-/etc/default/gpulens-prolog}
# shellcheck disable=SC1090
[ -r "$conf" ] && . "$conf"
lib=${GPULENS_LAUNCHES_LIBRARY:-/usr/lib/gpulens/libgpulens_launches.so}
socket=${GPULENS_LAUNCHES_SOCKET:-/run/gpulens/kernels.sock}

[ "${GPULENS_LAUNCHES:-1}" = 0 ] && exit 0
[ -r "$lib" ] || exit 0
[ -S "$socket" ] || exit 0
# A path with a space or a colon cannot stand in LD_PRELOAD's list.
case "$lib$socket" in *[[:space:]:]*) exit 0 ;; esac
# LD_PRELOAD's entries are separated by colons or spaces.
case " $(printf '%s' "${LD_PRELOAD:-}" | tr ':' ' ') " in *" $lib "*) exit 0 ;; esac

echo "export LD_PRELOAD=$lib${LD_PRELOAD:+:$LD_PRELOAD}"
echo "export GPULENS_LAUNCHES_AGENT=$socket"
exit 0
