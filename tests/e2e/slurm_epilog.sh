#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/slurm/gpulens-epilog.sh with a fake gpulens, sacctmgr, mail and logger
# on PATH: the files it keeps per job (whole, bounded), the arguments it passes,
# AdminComment and mail only when turned on, and exit 0 whatever fails (a
# failing gpulens, a job not in the history, a bad job id, an unwritable
# directory, no gpulens at all). No sleeps: GPULENS_SLURM_SETTLE=0.
set -euo pipefail
epilog=${1:?usage: slurm_epilog.sh deploy/slurm/gpulens-epilog.sh}
epilog=$(cd "$(dirname "$epilog")" && pwd)/$(basename "$epilog")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-epilog-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

bin="$tmp/bin"
calls="$tmp/calls"
mkdir -p "$bin" "$calls"
# gpulens: logs its arguments; FAKE_MODE picks what it does.
cat >"$bin/gpulens" <<'FAKE'
#!/bin/sh
echo "$*" >>"$CALLS/gpulens"
case ${FAKE_MODE:-ok} in
  fail) echo "gpulens report: cannot read /var/lib/gpulens/history.db: Permission denied" >&2; exit 1 ;;
  absent) echo "gpulens report: no Slurm job $3 in the history at /h.db (jobs seen, newest first: 7)" >&2; exit 1 ;;
esac
case "$*" in
  *"--format json"*) echo '{"verdict": "fake", "source": {"kind": "slurm_job"}}' ;;
  *)
    echo "gpulens: Slurm job $3 on node-7, 2 min"
    echo "  verdict  GPUs 0, 1 waited on the input pipeline 61 % of the time"
    echo "  slurm    job $3, user alice, account physics, step 0"
    i=0
    while [ "$i" -lt "${FAKE_LINES:-20}" ]; do echo "  line $i of the verdict $(printf '%0100d' 0)"; i=$((i + 1)); done
    ;;
esac
FAKE
cat >"$bin/sacctmgr" <<'FAKE'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >"$CALLS/sacctmgr"
FAKE
cat >"$bin/mail" <<'FAKE'
#!/bin/sh
printf '%s\n' "$@" >"$CALLS/mail.args"
cat >"$CALLS/mail.body"
FAKE
cat >"$bin/logger" <<'FAKE'
#!/bin/sh
printf '%s\n' "$*" >>"$CALLS/logger"
FAKE
chmod +x "$bin"/*

# Runs the epilog for job $1 with a clean record of calls; its exit status must be 0.
run() {
  rm -rf "$calls" && mkdir -p "$calls"
  env -i PATH="$bin:/usr/bin:/bin" CALLS="$calls" TMPDIR="$tmp" GPULENS_EPILOG_CONF=/nonexistent \
    GPULENS_SLURM_SETTLE=0 GPULENS_SLURM_DIR="$tmp/jobs" GPULENS_HISTORY=/srv/h.db \
    GPULENS_ALLOC_DIR="$tmp/alloc" \
    SLURM_JOB_ID="$1" SLURM_JOB_USER=alice SLURMD_NODENAME=node-7 "${@:2}" \
    sh "$epilog" 2>"$tmp/stderr" || fail "job $1: exit status $? (must always be 0)"
}

# 1. The files, the arguments, nothing else by default; the prolog's allocation
# entry of the job is gone, another job's stays.
mkdir -p "$tmp/alloc"
echo "job=4242" >"$tmp/alloc/4242"
echo "job=4241" >"$tmp/alloc/4241"
run 4242
[[ ! -e $tmp/alloc/4242 ]] || fail "the job's allocation entry was not removed"
[[ -e $tmp/alloc/4241 ]] || fail "another job's allocation entry was removed"
[[ -f "$tmp/jobs/4242.txt" && -f "$tmp/jobs/4242.json" ]] || fail "no summary files: $(ls -la "$tmp/jobs" 2>&1)"
head -n 1 "$tmp/jobs/4242.txt" | grep -qx "gpulens: Slurm job 4242 on node-7, 2 min" || fail "txt: $(head -n 2 "$tmp/jobs/4242.txt")"
grep -q '"kind": "slurm_job"' "$tmp/jobs/4242.json" || fail "json not kept"
grep -qx -- "report --slurm-job 4242 --format text --history /srv/h.db" "$calls/gpulens" || fail "gpulens args: $(cat "$calls/gpulens")"
grep -qx -- "report --slurm-job 4242 --format json --history /srv/h.db" "$calls/gpulens" || fail "gpulens args: $(cat "$calls/gpulens")"
[[ ! -e "$calls/sacctmgr" && ! -e "$calls/mail.args" ]] || fail "AdminComment or mail without being asked"
shopt -s nullglob dotglob
for f in "$tmp/jobs"/*; do
  case ${f##*/} in 4242.txt | 4242.json) ;; *) fail "temporary file left: $f" ;; esac
done
shopt -u nullglob dotglob

# 2. Bounded: lines, then bytes.
run 4243 FAKE_LINES=500
[[ $(wc -l <"$tmp/jobs/4243.txt") -eq 40 ]] || fail "txt not cut at 40 lines: $(wc -l <"$tmp/jobs/4243.txt")"
run 4244 FAKE_LINES=500 GPULENS_SLURM_LINES=1000 GPULENS_SLURM_MAX_BYTES=2000
[[ $(wc -c <"$tmp/jobs/4244.txt") -le 2000 ]] || fail "txt over 2000 bytes: $(wc -c <"$tmp/jobs/4244.txt")"
run 4245 GPULENS_SLURM_JSON_MAX_BYTES=10
[[ -f "$tmp/jobs/4245.txt" && ! -e "$tmp/jobs/4245.json" ]] || fail "an oversized JSON was kept"
grep -q "over GPULENS_SLURM_JSON_MAX_BYTES" "$tmp/stderr" || fail "oversized JSON not logged"

# 3. AdminComment when turned on: one short plain line.
run 4246 GPULENS_SLURM_ADMIN_COMMENT=1 GPULENS_SLURM_COMMENT_MAX=60
[[ $(sed -n 1,6p "$calls/sacctmgr" | tr '\n' ' ') == "-i modify job where jobid=4246 set " ]] ||
  fail "sacctmgr args: $(cat "$calls/sacctmgr")"
comment=$(sed -n 7p "$calls/sacctmgr")
[[ $comment == "AdminComment=gpulens node-7: GPUs 0, 1 waited on the input pipeline"* ]] || fail "comment: $comment"
[[ ${#comment} -le $((13 + 60)) ]] || fail "comment over 60 bytes: ${#comment}"
[[ $(wc -l <"$calls/sacctmgr") -eq 7 ]] || fail "comment not one line"
# The first task of an array has the array's id: named <array>_<task>, or sacctmgr
# would set the comment of every task; a later task keeps its own id.
run 4246 GPULENS_SLURM_ADMIN_COMMENT=1 SLURM_ARRAY_JOB_ID=4246 SLURM_ARRAY_TASK_ID=3
[[ $(sed -n 5p "$calls/sacctmgr") == "jobid=4246_3" ]] || fail "array task: $(cat "$calls/sacctmgr")"
run 4251 GPULENS_SLURM_ADMIN_COMMENT=1 SLURM_ARRAY_JOB_ID=4246 SLURM_ARRAY_TASK_ID=5
[[ $(sed -n 5p "$calls/sacctmgr") == "jobid=4251" ]] || fail "later array task: $(cat "$calls/sacctmgr")"

# 4. Mail when turned on: the first lines, to the job's user.
run 4247 GPULENS_SLURM_MAIL=1 GPULENS_SLURM_MAIL_LINES=3
[[ $(tr '\n' '|' <"$calls/mail.args") == "-s|gpulens: Slurm job 4247 on node-7|alice|" ]] || fail "mail args: $(cat "$calls/mail.args")"
[[ $(wc -l <"$calls/mail.body") -eq 3 ]] || fail "mail body: $(cat "$calls/mail.body")"
run 4248 GPULENS_SLURM_MAIL=1 SLURM_JOB_USER='-oProgramMode'
[[ ! -e "$calls/mail.args" ]] || fail "mailed a user name that is an option"

# 5. A failing gpulens: logged, no file, an older summary untouched, exit 0.
echo "kept from before" >"$tmp/jobs/4249.txt"
run 4249 FAKE_MODE=fail
grep -q "job 4249: gpulens report failed: gpulens report: cannot read" "$tmp/stderr" || fail "failure not logged: $(cat "$tmp/stderr")"
grep -q "gpulens report failed" "$calls/logger" || fail "failure not sent to syslog"
[[ $(cat "$tmp/jobs/4249.txt") == "kept from before" && ! -e "$tmp/jobs/4249.json" ]] || fail "a failed report touched the files"

# 6. A job that held no GPU here: no file, no syslog noise.
run 4250 FAKE_MODE=absent
[[ ! -e "$tmp/jobs/4250.txt" && ! -e "$calls/logger" ]] || fail "a job without GPUs here was logged or kept"
grep -q "not in this node's GPU history" "$tmp/stderr" || fail "absent job not said: $(cat "$tmp/stderr")"

# 7. A job id that is none: gpulens is never run.
for id in '12;touch x' '' '007' '12345678901' '../1'; do
  run "$id"
  [[ ! -e "$calls/gpulens" ]] || fail "gpulens ran for job id '$id'"
  grep -q "is not a job id" "$tmp/stderr" || fail "bad id '$id' not logged"
done

# 8. A directory that cannot be made, and no gpulens at all.
touch "$tmp/file"
run 4251 GPULENS_SLURM_DIR="$tmp/file/jobs"
grep -q "job 4251: cannot create $tmp/file/jobs" "$tmp/stderr" || fail "unwritable dir not logged: $(cat "$tmp/stderr")"
run 4252 GPULENS_BIN=/nonexistent/gpulens
grep -q "job 4252: /nonexistent/gpulens not found" "$tmp/stderr" || fail "missing gpulens not logged"

# 9. The history option is left to gpulens when unset.
run 4253 GPULENS_HISTORY=
grep -qx -- "report --slurm-job 4253 --format text" "$calls/gpulens" || fail "args without history: $(cat "$calls/gpulens")"
echo "slurm epilog: all cases pass"
