#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Slurm prolog: notes which GPUs of this node the starting job holds, so that the
# gpulens agent charges them to the job from its start to its end, whether it
# runs anything on them or not (docs/slurm.md, "Allocation"). One file per job:
#
#   $GPULENS_ALLOC_DIR/<job>   job=, uid=, user=, account=, partition=, gpus=,
#                              start=, boot_id=, node= (key=value lines)
#
# written whole (a temporary file, then a rename), owned by root, mode 0644, in a
# directory only root can write: the agent trusts nothing else there. The epilog
# (gpulens-epilog.sh) removes it; one left behind by a crash is ignored after a
# reboot (boot_id) or once the job's cgroup is gone.
#
# slurm.conf:  Prolog=/usr/share/gpulens/slurm/gpulens-prolog.sh
# (or call it from an existing prolog; PrologFlags=Alloc runs it when the job is
# allocated rather than at its first step, so a job that never starts a step is
# seen too). Settings from the environment or $GPULENS_PROLOG_CONF (default
# /etc/default/gpulens-prolog, a shell fragment of VAR=value lines):
#
#   GPULENS_ALLOC_DIR   where entries go (/run/gpulens/slurm-jobs: a tmpfs,
#                       emptied at boot; the agent's --slurm-allocations)
#
# Which GPUs: SLURM_JOB_GPUS (Slurm's own indices on this node), else
# CUDA_VISIBLE_DEVICES as the prolog sees it, else the IDX of `scontrol show job
# -d`. Account and partition: SLURM_JOB_ACCOUNT / SLURM_JOB_PARTITION, else
# `scontrol show job`. A job that holds no GPU here writes nothing.
#
# It never fails the prolog (a failing prolog drains the node and requeues the
# job): every problem is logged to stderr (slurmd's log) and syslog; exit 0.

conf=${GPULENS_PROLOG_CONF:-/etc/default/gpulens-prolog}
# shellcheck disable=SC1090
[ -r "$conf" ] && . "$conf"
dir=${GPULENS_ALLOC_DIR:-/run/gpulens/slurm-jobs}
job=${SLURM_JOB_ID:-}
PATH=${PATH:-/usr/sbin:/usr/bin:/sbin:/bin}
export PATH

log() {
  echo "gpulens-prolog: $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t gpulens-prolog -p user.warning -- "$*"
  return 0
}

case $job in
  '' | *[!0-9]* | 0*) log "SLURM_JOB_ID '$job' is not a job id: nothing noted"; exit 0 ;;
esac
if [ "${#job}" -gt 10 ]; then
  log "SLURM_JOB_ID '$job' is not a job id: nothing noted"
  exit 0
fi

# A name as the agent accepts it: printable ASCII without spaces or '=', at most
# 128 bytes; anything else is left empty rather than passed on.
name() {
  case $1 in
    *[!A-Za-z0-9._@+-]*) echo "" ;;
    *) printf '%.128s\n' "$1" ;;
  esac
}

job_info=
show_job() {
  if [ -z "$job_info" ] && command -v scontrol >/dev/null 2>&1; then
    job_info=$(timeout 10 scontrol show job -d "$job" 2>/dev/null | tr ' ' '\n')
  fi
  printf '%s\n' "$job_info"
}

gpus=${SLURM_JOB_GPUS:-}
gpus_from=SLURM_JOB_GPUS
if [ -z "$gpus" ] && [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
  gpus=$CUDA_VISIBLE_DEVICES
  gpus_from=CUDA_VISIBLE_DEVICES
fi
if [ -z "$gpus" ]; then
  # "GRES=gpu:a100:2(IDX:0-1)" or "gpu(IDX:0,2)": the indices Slurm gave this node.
  node=$(hostname -s 2>/dev/null)
  idx=$(show_job | awk -v node="${SLURMD_NODENAME:-$node}" '
    /^Nodes=/ { split($0, a, "="); here = (a[2] == node || a[2] ~ /[\[,]/) }
    /IDX:/ && here { sub(/.*IDX:/, ""); sub(/\).*/, ""); print; exit }')
  if [ -n "$idx" ]; then
    gpus=$(echo "$idx" | awk -F, '{
      for (i = 1; i <= NF; i++) {
        n = split($i, r, "-"); lo = r[1]; hi = (n == 2 ? r[2] : r[1])
        for (g = lo; g <= hi; g++) out = out (out == "" ? "" : ",") g
      }
      print out }')
    gpus_from="scontrol IDX"
  fi
fi
case $gpus in
  '' | NoDevFiles | none) exit 0 ;;  # no GPU of this node: nothing held here
  *[!A-Za-z0-9,/-]*) log "job $job: GPU list '$gpus' from $gpus_from is not one: nothing noted"; exit 0 ;;
esac

account=${SLURM_JOB_ACCOUNT:-}
partition=${SLURM_JOB_PARTITION:-}
[ -n "$account" ] || account=$(show_job | sed -n 's/^Account=//p' | head -n 1)
[ -n "$partition" ] || partition=$(show_job | sed -n 's/^Partition=//p' | head -n 1)
[ "$account" = "(null)" ] && account=
uid=${SLURM_JOB_UID:-}
case $uid in *[!0-9]*) uid= ;; esac

if ! mkdir -p "$dir" 2>/dev/null || ! chmod 755 "$dir" 2>/dev/null; then
  log "job $job: cannot create $dir: GPUs not noted"
  exit 0
fi
boot_id=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
tmp="$dir/.$job.tmp"
umask 022
if ! {
  echo "# gpulens Slurm allocation, written by gpulens-prolog.sh at the job's start"
  echo "job=$job"
  [ -n "$uid" ] && echo "uid=$uid"
  echo "user=$(name "${SLURM_JOB_USER:-}")"
  echo "account=$(name "$account")"
  echo "partition=$(name "$partition")"
  echo "gpus=$gpus"
  echo "gpus_from=$gpus_from"
  echo "start=$(date +%s)"
  echo "boot_id=$(name "$boot_id")"
  echo "node=$(name "${SLURMD_NODENAME:-}")"
} >"$tmp" 2>/dev/null || ! mv -f "$tmp" "$dir/$job" 2>/dev/null; then
  rm -f "$tmp"
  log "job $job: cannot write $dir/$job: GPUs not noted"
fi
exit 0
