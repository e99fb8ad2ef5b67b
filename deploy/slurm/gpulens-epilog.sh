#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
#
# Slurm epilog: the verdict of the job that just ended on this node's GPUs, from
# the gpulens agent's history (`gpulens report --slurm-job`), kept per job where
# admins keep such things (docs/slurm.md, "A verdict per Slurm job"):
#
#   $GPULENS_SLURM_DIR/<job>.txt   the text verdict's first lines (bounded)
#   $GPULENS_SLURM_DIR/<job>.json  the whole verdict as JSON (when not too large)
#
# and, when turned on, the job's AdminComment (one short plain line, as Jobstats
# keeps its summary there) and a mail of the verdict's first lines to the user.
#
# slurm.conf:  Epilog=/usr/share/gpulens/slurm/gpulens-epilog.sh
# (or call it from an existing epilog). slurmd runs it as root with SLURM_JOB_ID
# and SLURM_JOB_USER set. Settings come from the environment or from
# $GPULENS_EPILOG_CONF (default /etc/default/gpulens-epilog, a shell fragment
# of VAR=value lines, read when it exists):
#
#   GPULENS_BIN                   gpulens to run (default: gpulens on PATH)
#   GPULENS_HISTORY               the agent's history file (default: gpulens' own
#                                 default, /var/lib/gpulens/history.db for root)
#   GPULENS_SLURM_DIR             where summaries go (/var/lib/gpulens/slurm)
#   GPULENS_SLURM_LINES           text lines kept per job (40)
#   GPULENS_SLURM_MAX_BYTES       at most this much text per job (8192)
#   GPULENS_SLURM_JSON_MAX_BYTES  a larger JSON verdict is not kept (1048576)
#   GPULENS_SLURM_TIMEOUT         seconds each report may take (30)
#   GPULENS_SLURM_SETTLE          seconds to wait first, so the agent commits the
#                                 job's last second (2)
#   GPULENS_SLURM_ADMIN_COMMENT   1: set the job's AdminComment (0)
#   GPULENS_SLURM_COMMENT_MAX     the AdminComment's length at most (250)
#   GPULENS_SLURM_MAIL            1: mail the verdict's first lines to the job's
#                                 user with `mail` (0)
#   GPULENS_SLURM_MAIL_LINES      lines mailed (12)
#   GPULENS_ALLOC_DIR             the prolog's allocation entries, whose entry
#                                 for this job is removed (/run/gpulens/slurm-jobs)
#   GPULENS_SLURM_AGENT_URL       a job over several nodes: each node's agent,
#                                 %n standing for the node (http://%n:9401)
#   GPULENS_SLURM_AGENTS          ... or per node, "node=URL node=URL" (wins)
#   GPULENS_SLURM_CURL_CONFIG     a curl config file (-K) for the agents: user,
#                                 cacert (keep it root's: it holds the password)
#
# A job over several nodes, when either agent setting is given: only the first
# node of SLURM_JOB_NODELIST writes, and its summary is the one verdict of the
# whole job, from every node's part as its agent serves it
# (/api/v1/slurm/job?id=JOB, `gpulens report --slurm-job JOB --part ...`); the
# other nodes write nothing, so epilogs ending at once never overwrite each other.
# A node whose agent does not answer is named in the summary as missing.
#
# It never fails the epilog (a failing epilog drains the node): every problem is
# logged to stderr (slurmd's log) and syslog, and it exits 0.

conf=${GPULENS_EPILOG_CONF:-/etc/default/gpulens-epilog}
# shellcheck disable=SC1090
[ -r "$conf" ] && . "$conf"

bin=${GPULENS_BIN:-gpulens}
dir=${GPULENS_SLURM_DIR:-/var/lib/gpulens/slurm}
lines=${GPULENS_SLURM_LINES:-40}
max_bytes=${GPULENS_SLURM_MAX_BYTES:-8192}
json_max=${GPULENS_SLURM_JSON_MAX_BYTES:-1048576}
limit=${GPULENS_SLURM_TIMEOUT:-30}
settle=${GPULENS_SLURM_SETTLE:-2}
comment_max=${GPULENS_SLURM_COMMENT_MAX:-250}
mail_lines=${GPULENS_SLURM_MAIL_LINES:-12}
job=${SLURM_JOB_ID:-}

log() {
  echo "gpulens-epilog: $*" >&2
  command -v logger >/dev/null 2>&1 && logger -t gpulens-epilog -p user.warning -- "$*"
  return 0
}

# A number setting, or its default when it is none.
number() {
  case $1 in '' | *[!0-9]*) echo "$2" ;; *) echo "$1" ;; esac
}
lines=$(number "$lines" 40)
max_bytes=$(number "$max_bytes" 8192)
json_max=$(number "$json_max" 1048576)
limit=$(number "$limit" 30)
settle=$(number "$settle" 2)
comment_max=$(number "$comment_max" 250)
mail_lines=$(number "$mail_lines" 12)

# The job id goes into a file name and a command line: digits only, as Slurm prints it.
case $job in
  '' | *[!0-9]* | 0*) log "SLURM_JOB_ID '$job' is not a job id: nothing done"; exit 0 ;;
esac
if [ "${#job}" -gt 10 ]; then
  log "SLURM_JOB_ID '$job' is not a job id: nothing done"
  exit 0
fi
# The job holds its GPUs no longer: its prolog's entry (gpulens-prolog.sh) goes
# first, whatever else fails below, so that the agent stops charging them to it.
rm -f "${GPULENS_ALLOC_DIR:-/run/gpulens/slurm-jobs}/$job"

if ! command -v "$bin" >/dev/null 2>&1; then
  log "job $job: $bin not found (set GPULENS_BIN): no summary"
  exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-epilog.XXXXXX") || {
  log "job $job: cannot make a temporary directory: no summary"
  exit 0
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 0' HUP INT TERM

[ "$settle" -gt 0 ] && sleep "$settle"

# The agent of node $1: from GPULENS_SLURM_AGENTS, else the URL template.
agent_url() {
  for pair in ${GPULENS_SLURM_AGENTS:-}; do
    case $pair in "$1="*) echo "${pair#*=}"; return 0 ;; esac
  done
  [ -n "${GPULENS_SLURM_AGENT_URL:-}" ] && echo "$GPULENS_SLURM_AGENT_URL" | sed "s/%n/$1/g"
}

# The job's nodes, one per line, when it spans several and the agents are named.
nodes=
if [ -n "${SLURM_JOB_NODELIST:-}" ] &&
  { [ -n "${GPULENS_SLURM_AGENTS:-}" ] || [ -n "${GPULENS_SLURM_AGENT_URL:-}" ]; }; then
  if command -v scontrol >/dev/null 2>&1; then
    nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | head -n 256)
  else
    log "job $job: scontrol is not on PATH: this node's part alone"
  fi
fi
parts=   # with several nodes: "--part FILE" for each node that answered
missing= # nodes whose agent did not answer
if [ "$(printf '%s\n' "$nodes" | grep -c .)" -gt 1 ]; then
  me=${SLURMD_NODENAME:-$(uname -n)}
  first=$(printf '%s\n' "$nodes" | head -n 1)
  if [ "$me" != "$first" ]; then
    echo "gpulens-epilog: job $job: node $first writes the job's summary" >&2
    exit 0
  fi
  if ! command -v curl >/dev/null 2>&1; then
    log "job $job: curl is not on PATH: cannot ask the other nodes' agents"
    exit 0
  fi
  for n in $nodes; do
    case $n in *[!A-Za-z0-9._-]*) log "job $job: node name '$n' skipped"; continue ;; esac
    url=$(agent_url "$n")
    if [ -z "$url" ]; then
      missing="$missing $n"
      continue
    fi
    set -- -sS --max-time "$limit" -o "$tmp/part.$n" -w '%{http_code}'
    [ -n "${GPULENS_SLURM_CURL_CONFIG:-}" ] && set -- "$@" -K "$GPULENS_SLURM_CURL_CONFIG"
    # An agent builds one part at a time (429 while busy with another job's): retry.
    tries=0
    while :; do
      code=$(curl "$@" "$url/api/v1/slurm/job?id=$job" 2>"$tmp/curl.err")
      tries=$((tries + 1))
      [ "$code" = 429 ] && [ "$tries" -lt 10 ] || break
      sleep 1
    done
    case $code in
      200) parts="$parts --part $tmp/part.$n" ;;
      404) ;;  # the job held no GPU of that node
      *)
        missing="$missing $n"
        log "job $job: the agent of node $n ($url) did not give its part: HTTP ${code:-none} $(head -c 200 "$tmp/curl.err")"
        ;;
    esac
  done
  if [ -z "$parts" ]; then
    echo "gpulens-epilog: job $job: no node's agent holds it: not in the nodes' GPU history" >&2
    exit 0
  fi
fi

# gpulens report with a time limit where timeout(1) exists; its exit status.
report() {
  format=$1
  shift
  set -- "$bin" report --slurm-job "$job" --format "$format" "$@"
  if [ -n "$parts" ]; then
    # shellcheck disable=SC2086 # one word per part: paths under $tmp, without spaces
    set -- "$@" $parts
  elif [ -n "${GPULENS_HISTORY:-}" ]; then
    set -- "$@" --history "$GPULENS_HISTORY"
  fi
  if command -v timeout >/dev/null 2>&1; then
    timeout -k 5 "$limit" "$@" >"$tmp/$format" 2>"$tmp/$format.err"
  else
    "$@" >"$tmp/$format" 2>"$tmp/$format.err"
  fi
}

if ! report text; then
  why=$(head -c 600 "$tmp/text.err" | tr '\n' ' ')
  case $why in
    # A job that held no GPU of this node (CPU only, or the agent was not running).
    *"gpulens report: no Slurm job $job in the history"*)
      echo "gpulens-epilog: job $job: not in this node's GPU history" >&2 ;;
    *) log "job $job: gpulens report failed: ${why:-no message}" ;;
  esac
  exit 0
fi

# Writes stdin to $dir/$1 whole or not at all: a temporary file, then a rename.
store() {
  if ! mkdir -p "$dir" 2>"$tmp/mkdir.err"; then
    log "job $job: cannot create $dir: $(head -c 300 "$tmp/mkdir.err")"
    return 1
  fi
  part="$dir/.$1.$$"
  if cat >"$part" 2>/dev/null && mv -f "$part" "$dir/$1" 2>/dev/null; then
    return 0
  fi
  rm -f "$part"
  log "job $job: cannot write $dir/$1"
  return 1
}

umask 027
if [ -n "$missing" ]; then
  # Said right under the headline line, where a reader of the summary looks.
  sed "1a\\
  missing  nodes$missing: their agents did not answer, their GPUs are not in this verdict" \
    "$tmp/text" >"$tmp/text.m" && mv "$tmp/text.m" "$tmp/text"
fi
head -n "$lines" "$tmp/text" | head -c "$max_bytes" >"$tmp/summary"
store "$job.txt" <"$tmp/summary"

if report json; then
  size=$(wc -c <"$tmp/json")
  if [ "$size" -le "$json_max" ]; then
    store "$job.json" <"$tmp/json"
  else
    log "job $job: the JSON verdict is $size bytes, over GPULENS_SLURM_JSON_MAX_BYTES: not kept"
  fi
else
  log "job $job: gpulens report --format json failed: $(head -c 300 "$tmp/json.err" | tr '\n' ' ')"
fi

# One plain line: "gpulens <node>: <the verdict's headline>", printable ASCII only.
headline() {
  verdict=$(sed -n 's/^  verdict  //p' "$tmp/text" | head -n 1)
  [ -n "$verdict" ] || verdict=$(head -n 1 "$tmp/text" | sed 's/^gpulens: //')
  printf 'gpulens %s: %s' "${SLURMD_NODENAME:-$(uname -n)}" "$verdict" |
    LC_ALL=C tr -c '[:print:]' ' ' | head -c "$comment_max"
}

# Through slurmdbd, as Jobstats does: by the time an epilog runs, slurmctld refuses
# `scontrol update` of the job ("Job has already finished", Slurm 22.05 and later).
# The first task of an array has the array's own id, which sacctmgr would take for
# every task: name the task as <array>_<task> then.
accounting_id() {
  case ${SLURM_ARRAY_JOB_ID:-}:${SLURM_ARRAY_TASK_ID:-} in
    "$job":[0-9]*) case $SLURM_ARRAY_TASK_ID in *[!0-9]*) echo "$job" ;; *) echo "${job}_$SLURM_ARRAY_TASK_ID" ;; esac ;;
    *) echo "$job" ;;
  esac
}

if [ "${GPULENS_SLURM_ADMIN_COMMENT:-0}" = 1 ]; then
  if command -v sacctmgr >/dev/null 2>&1; then
    if ! sacctmgr -i modify job where "jobid=$(accounting_id)" set "AdminComment=$(headline)" \
      >"$tmp/sacctmgr.err" 2>&1; then
      log "job $job: sacctmgr modify job AdminComment failed: $(head -c 300 "$tmp/sacctmgr.err" | tr '\n' ' ')"
    fi
  else
    log "job $job: GPULENS_SLURM_ADMIN_COMMENT=1 but sacctmgr is not on PATH"
  fi
fi

if [ "${GPULENS_SLURM_MAIL:-0}" = 1 ]; then
  user=${SLURM_JOB_USER:-}
  case $user in
    '' | -* | *[!A-Za-z0-9._-]*) log "job $job: SLURM_JOB_USER '$user' is no mail address: no mail" ;;
    *)
      if command -v mail >/dev/null 2>&1; then
        head -n "$mail_lines" "$tmp/text" |
          mail -s "gpulens: Slurm job $job on ${SLURMD_NODENAME:-$(uname -n)}" "$user" \
            2>"$tmp/mail.err" ||
          log "job $job: mail to $user failed: $(head -c 300 "$tmp/mail.err")"
      else
        log "job $job: GPULENS_SLURM_MAIL=1 but mail is not on PATH"
      fi
      ;;
  esac
fi
exit 0
