#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A real one-node Slurm (Debian's slurmctld, slurmd and munged, configured in a
# scratch directory: proctrack/linuxproc, no cgroup plugin, no systemd, no
# slurmdbd) runs a job whose processes a fake libnvidia-ml.so.1 lists on GPUs:
# the batch script on GPU 1 and its `srun` step on GPU 0. gpulens-serve, given
# that library, must attribute both (job, step, user, account) in /metrics and
# /api/v1/latest, and Slurm's Epilog= (deploy/slurm/gpulens-epilog.sh) must keep
# the job's verdict from the agent's history and set its AdminComment. Last, a job
# whose step launches kernels (the stand-in CUDA job) under TaskProlog=
# (deploy/slurm/gpulens-task-prolog.sh): every launch must reach the agent's /metrics.
#
# Never skips: a missing Slurm, a daemon that does not start or a job that does
# not run fails with what its log says. Every wait polls against a deadline.
# Daemons run in the foreground (-D/-F) under this script and are killed by the
# EXIT trap; ports are picked free by the kernel, so parallel runs do not clash.
# Needs root (slurmd starts jobs as their user, as in production).
set -euo pipefail
gpulens=${1:?usage: slurm_cluster.sh GPULENS GPULENS_SERVE FAKE_NVML_DIR EPILOG PROLOG TASK_PROLOG LAUNCHES_LIB LAUNCH_FAKE_JOB}
serve=${2:?}
fake_nvml_dir=${3:?}
epilog=${4:?}
prolog=${5:?}
task_prolog=$(cd "$(dirname "${6:?}")" && pwd)/$(basename "$6")
launches_lib=${7:?}
launch_fake_job=${8:?}
epilog=$(cd "$(dirname "$epilog")" && pwd)/$(basename "$epilog")
prolog=$(cd "$(dirname "$prolog")" && pwd)/$(basename "$prolog")
started=$SECONDS

fail() {
  echo "FAIL: $*" >&2
  for log in "${tmp:-/nonexistent}"/log/*; do
    [[ -s $log ]] || continue
    echo "---- last lines of $(basename "$log")" >&2
    tail -n 25 "$log" >&2
  done
  exit 1
}

for tool in munged slurmctld slurmd sbatch srun scontrol squeue sinfo scancel python3 curl; do
  command -v "$tool" >/dev/null ||
    fail "$tool is not installed: this test needs a real Slurm (scripts/setup.sh installs munge, slurmctld, slurmd and slurm-client)"
done
[[ $(id -u) -eq 0 ]] ||
  fail "needs root: slurmd starts a job's processes as the job's user (CI runs the tests as root)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-slurm.XXXXXX")
chmod 755 "$tmp"
pids=()      # daemons started here, newest first
stepds=()    # the job's slurmstepd processes, which outlive a killed slurmd
job=
idle_job=
cleanup() {
  local pid deadline=$((SECONDS + 10))
  # A test that failed midway: release the job and cancel it while slurmctld runs.
  touch "$tmp/release"
  for j in $job $idle_job; do
    scancel "$j" 2>/dev/null || true
    while ((SECONDS < deadline)) && squeue -h -j "$j" -o %T 2>/dev/null | grep -q .; do sleep 0.2; done
  done
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for pid in "${stepds[@]}"; do
    grep -qs '^slurmstepd' "/proc/$pid/cmdline" && kill -9 "$pid" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp"/{log,munge,state,spool,jobs,run,dev,alloc}
# Two GPUs as gres.conf names them: character devices with NVIDIA's major number
# (slurmd refuses other files; nothing opens them: no cgroup device plugin here),
# the fake NVML lists the devices.
mknod "$tmp/dev/nvidia0" c 195 0 && mknod "$tmp/dev/nvidia1" c 195 1 ||
  fail "mknod of the fake GPU devices failed (needs root with CAP_MKNOD)"
chmod 755 "$tmp/alloc"  # root's, as the agent requires of the prolog's directory

# Polls `$2...` until it succeeds, at most $1 seconds; the command's last output is kept.
until_ok() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >"$tmp/run/last" 2>&1; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

# Free TCP ports, picked by the kernel (bound then released: nothing else here takes them).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')

# munged, with its own key, socket, pid and seed files (it refuses a key others can read).
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 711 "$tmp/munge" && chmod 400 "$tmp/munge/munge.key"
munge_socket=$tmp/munge/munge.socket
munged -F --force --socket="$munge_socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munge/munged.pid" --seed-file="$tmp/munge/munged.seed" \
  --log-file="$tmp/log/munged.log" --num-threads=2 >"$tmp/log/munged.out" 2>&1 &
pids+=($!)
until_ok 10 test -S "$munge_socket" || fail "munged did not create its socket within 10 s"

node=gpulens-test-node
user=$(id -un)
cat >"$tmp/slurm.conf" <<EOF
ClusterName=gpulens-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
GresTypes=gpu
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
PlugStackConfig=$tmp/plugstack.conf
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
Epilog=$tmp/epilog.sh
Prolog=$tmp/prolog.sh
PrologFlags=Alloc
TaskProlog=$tmp/task-prolog.sh
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$(hostname -s) CPUs=2 Gres=gpu:2 State=UNKNOWN
PartitionName=gpu Nodes=$node Default=YES MaxTime=10 State=UP
EOF
: >"$tmp/plugstack.conf"
echo "NodeName=$node Name=gpu File=$tmp/dev/nvidia[0-1]" >"$tmp/gres.conf"
export SLURM_CONF=$tmp/slurm.conf

# The agent: gpulens-serve on the fake NVML, with per-process series and a history.
procs=$tmp/gpu-processes  # "GPU PID BYTES": what the fake NVML lists, read at each call
: >"$procs"
mkdir "$procs.d"  # the job's processes end when it is gone, whatever happened here
chmod 666 "$procs"
LD_LIBRARY_PATH=$fake_nvml_dir GPULENS_FAKE_NVML_GPUS=2 GPULENS_FAKE_NVML_PROCS=$procs \
  "$serve" --listen 127.0.0.1:0 --interval 0.2 --process-metrics --history "$tmp/history.db" \
  --hostname "$node" --slurm-allocations "$tmp/alloc" --log-level info \
  --kernels-socket "$tmp/kernels.sock" \
  >"$tmp/log/gpulens-serve.log" 2>&1 &
pids+=($!)
serve_port() { grep -oE 'on http://127\.0\.0\.1:[0-9]+' "$tmp/log/gpulens-serve.log" | head -n 1 | cut -d: -f3; }
until_ok 20 serve_port || fail "gpulens-serve did not start listening within 20 s"
url=http://127.0.0.1:$(serve_port)
until_ok 20 curl -fsS "$url/metrics" || fail "gpulens-serve's /metrics did not answer within 20 s"

# slurmd runs Epilog= with a clean environment (no PATH, nothing of its own), so
# the epilog's settings come from its configuration file, as on a real node; the
# wrapper only names that file (a real node uses /etc/default/gpulens-epilog).
cat >"$tmp/gpulens-epilog.conf" <<EOF
GPULENS_BIN=$gpulens
GPULENS_HISTORY=$tmp/history.db
GPULENS_SLURM_DIR=$tmp/jobs
GPULENS_SLURM_SETTLE=1
GPULENS_SLURM_ADMIN_COMMENT=1
GPULENS_ALLOC_DIR=$tmp/alloc
EOF
cat >"$tmp/prolog.sh" <<EOF
#!/bin/sh
GPULENS_ALLOC_DIR=$tmp/alloc GPULENS_PROLOG_CONF=/nonexistent exec $prolog 2>>$tmp/log/prolog.err
EOF
chmod 755 "$tmp/prolog.sh"
# The task prolog's settings, as a site's /etc/default/gpulens-prolog gives them.
cat >"$tmp/task-prolog.conf" <<EOF
GPULENS_LAUNCHES_LIBRARY=$launches_lib
GPULENS_LAUNCHES_SOCKET=$tmp/kernels.sock
EOF
cat >"$tmp/task-prolog.sh" <<EOF
#!/bin/sh
GPULENS_PROLOG_CONF=$tmp/task-prolog.conf exec $task_prolog
EOF
chmod 755 "$tmp/task-prolog.sh"
cat >"$tmp/epilog.sh" <<EOF
#!/bin/sh
GPULENS_EPILOG_CONF=$tmp/gpulens-epilog.conf exec $epilog 2>>$tmp/log/epilog.err
EOF
chmod 755 "$tmp/epilog.sh"

# slurmctld, then slurmd; the node must come up idle. Daemons stop in reverse order.
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
pids=("$!" "${pids[@]}")
until_ok 20 scontrol ping ||
  fail "slurmctld did not answer \`scontrol ping\` within 20 s: $(cat "$tmp/run/last")"
slurmd -D -N "$node" -f "$SLURM_CONF" >"$tmp/log/slurmd.out" 2>&1 &
pids=("$!" "${pids[@]}")
node_idle() { sinfo -h -n "$node" -o %t | grep -qx idle; }
until_ok 30 node_idle ||
  fail "node $node did not become idle within 30 s: $(sinfo -h -N -o '%N %t %E' 2>&1)"

# The idle job: it holds one GPU and runs nothing on it, as a job that waits on
# something else or forgot its GPUs does. Only Slurm's prolog can tell its owner.
idle_job=$(sbatch --parsable --account=idlers --job-name=gpulens-idle --gres=gpu:1 -c 1 \
  --output="$tmp/log/idle.out" --chdir="$tmp" \
  --wrap "while [ ! -e '$tmp/release' ]; do sleep 0.2; done") || fail "sbatch failed: $idle_job"
[[ $idle_job =~ ^[0-9]+$ ]] || fail "sbatch printed '$idle_job', not a job id"
until_ok 30 test -s "$tmp/alloc/$idle_job" ||
  fail "the prolog noted no GPU of job $idle_job within 30 s: $(cat "$tmp/log/prolog.err" 2>/dev/null; scontrol show job "$idle_job" 2>&1 | head -n 8)"
idle_gpu=$(sed -n 's/^gpus=//p' "$tmp/alloc/$idle_job")
[[ $idle_gpu =~ ^[01]$ ]] || fail "the prolog noted GPUs '$idle_gpu' for job $idle_job, expected one of 0, 1: $(cat "$tmp/alloc/$idle_job")"
work_gpu=$((1 - idle_gpu))

# The working job, beside it on the other GPU: its batch script and its srun
# step each write their PID where the fake NVML looks, and stay until released.
cat >"$tmp/job.sh" <<'JOB'
#!/bin/sh
g=${SLURM_JOB_GPUS:-$CUDA_VISIBLE_DEVICES}
echo "$g $$ 2147483648" >>"$GPU_PROCS"
exec srun --ntasks=1 sh -c 'echo "${SLURM_JOB_GPUS:-$CUDA_VISIBLE_DEVICES} $$ 4294967296" >>"$GPU_PROCS"; echo "step $$" >>"$GPU_PROCS.d/pids"; while [ ! -e "$RELEASE" ] && [ -d "$GPU_PROCS.d" ]; do sleep 0.1; done'
JOB
job=$(sbatch --parsable --account=physics --job-name=gpulens-e2e --gres=gpu:1 -c 1 \
  --output="$tmp/log/job.out" --chdir="$tmp" \
  --export="ALL,GPU_PROCS=$procs,RELEASE=$tmp/release" "$tmp/job.sh") ||
  fail "sbatch failed: $job"
[[ $job =~ ^[0-9]+$ ]] || fail "sbatch printed '$job', not a job id"
two_procs() { [[ $(wc -l <"$procs") -ge 2 && -s "$procs.d/pids" ]]; }
until_ok 30 two_procs ||
  fail "job $job's processes did not start within 30 s: $(scontrol show job "$job" 2>&1 | head -n 5)"
awk -v g="$work_gpu" '$1 != g { exit 1 }' "$procs" ||
  fail "job $job's processes ran on GPUs other than its own $work_gpu: $(cat "$procs")"
step_pid=$(awk '{print $2}' "$procs.d/pids")
batch_pid=$(awk -v s="$step_pid" '$2 != s {print $2}' "$procs")
for pid in "$batch_pid" "$step_pid"; do
  stepds+=("$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null)")
done

# /metrics: the per-process series carry the job, step and account.
series() {
  local pid=$1 step=$2
  curl -fsS "$url/metrics" | grep -E "^gpulens_process_memory_used_bytes\{" | grep "pid=\"$pid\"" |
    grep "slurm_job=\"$job\"" | grep "slurm_step=\"$step\"" | grep -q 'slurm_account="physics"'
}
until_ok 20 series "$step_pid" 0 ||
  fail "/metrics has no series of PID $step_pid with slurm_job=$job, slurm_step=0, slurm_account=physics: $(curl -fsS "$url/metrics" | grep '^gpulens_process_memory_used_bytes')"
# A batch script's environment has no SLURM_STEP_ID (Slurm sets it for srun's
# steps only) and without a Slurm cgroup nothing else names the step: empty.
series "$batch_pid" "" ||
  fail "/metrics has no series of PID $batch_pid with slurm_job=$job, slurm_step=\"\": $(curl -fsS "$url/metrics" | grep '^gpulens_process_memory_used_bytes')"
if curl -fsS "$url/metrics" | grep -E '^gpulens_gpu_' | grep -v '^gpulens_gpu_allocation_info{' |
  grep -q 'slurm_'; then
  fail "a per-GPU series carries a Slurm label (docs/slurm.md: only per-process series and the allocation's info series do)"
fi

# /api/v1/latest: job, step, user, account and where they came from.
curl -fsS "$url/api/v1/latest" >"$tmp/latest.json" || fail "/api/v1/latest did not answer"
python3 - "$tmp/latest.json" "$job" "$user" "$step_pid" "$batch_pid" <<'PY' || fail "/api/v1/latest: see above"
import json, sys
path, job, user, step_pid, batch_pid = sys.argv[1:]
doc = json.load(open(path))
found = {}
def walk(node):
    if isinstance(node, dict):
        if "pid" in node and "slurm" in node:
            found[str(node["pid"])] = node["slurm"]
        for v in node.values():
            walk(v)
    elif isinstance(node, list):
        for v in node:
            walk(v)
walk(doc)
want = {step_pid: "0", batch_pid: ""}
for pid, step in want.items():
    s = found.get(pid)
    expected = {"job": job, "step": step, "user": user, "account": "physics", "from": "environ"}
    got = {k: (s or {}).get(k) for k in expected}
    if got != expected:
        sys.exit(f"FAIL: PID {pid}: slurm is {s}, expected {expected} (processes with slurm: {found})")
PY

# A forged claim: a process outside any job sets SLURM_JOB_ID=999 (and an account
# to charge), on the working job's GPU. No Slurm cgroup here (proctrack/linuxproc) and
# no allocation of job 999: it is in no job, and says why.
env SLURM_JOB_ID=999 SLURM_JOB_ACCOUNT=victim sleep 300 &
forger=$!
pids+=("$forger")
echo "$work_gpu $forger 1073741824" >>"$procs"
forged_is_no_job() {
  curl -fsS "$url/api/v1/latest" | python3 -c '
import json, sys
pid = int(sys.argv[1])
for g in json.load(sys.stdin)["gpus"]:
    for p in g.get("processes") or []:
        if p["pid"] == pid:
            s = p.get("slurm") or {}
            sys.exit(0 if not s.get("job") and "SLURM_JOB_ID=999" in s.get("unknown", "") else 1)
sys.exit(1)' "$forger"
}
until_ok 20 forged_is_no_job ||
  fail "a process claiming SLURM_JOB_ID=999 (no such allocation) was not shown as in no job: $(curl -fsS "$url/api/v1/latest")"

# The allocation: the idle job holds its GPU with nothing on it, the working job its own.
alloc_series() {
  local m
  m=$(curl -fsS "$url/metrics") || return 1
  grep -E '^gpulens_gpu_allocation_info\{' <<<"$m" | grep "gpu=\"$idle_gpu\"" |
    grep "slurm_job=\"$idle_job\"" | grep -q 'slurm_account="idlers"' &&
    grep -E '^gpulens_gpu_allocation_info\{' <<<"$m" | grep "gpu=\"$work_gpu\"" |
    grep "slurm_job=\"$job\"" | grep -q 'slurm_account="physics"' &&
    grep -qE "^gpulens_gpu_allocated\{[^}]*gpu=\"$idle_gpu\"[^}]*\} 1\$" <<<"$m"
}
until_ok 20 alloc_series ||
  fail "/metrics does not charge GPU $idle_gpu to job $idle_job (idlers) and GPU $work_gpu to job $job (physics): $(curl -fsS "$url/metrics" | grep -E '^gpulens_gpu_allocat')"
curl -fsS "$url/api/v1/latest" >"$tmp/latest.json" || fail "/api/v1/latest did not answer"
curl -fsS "$url/api/v1/health" >"$tmp/health.json" || fail "/api/v1/health did not answer"
python3 - "$tmp/latest.json" "$tmp/health.json" "$idle_job" "$idle_gpu" <<'PY' || fail "allocation in /api/v1: see above"
import json, sys
latest, health, idle_job, idle_gpu = sys.argv[1:]
gpus = {str(g["gpu"]): g for g in json.load(open(latest))["gpus"]}
g = gpus[idle_gpu]
held = [a["job"] for a in g.get("allocation") or []]
if held != [idle_job]:
    sys.exit(f"FAIL: GPU {idle_gpu}'s allocation is {g.get('allocation')}, expected job {idle_job}")
if g.get("processes"):
    sys.exit(f"FAIL: GPU {idle_gpu} lists processes {g['processes']}, expected none (an idle job)")
alloc = json.load(open(health))["source"].get("allocation") or {}
if alloc.get("source") != "prolog" or alloc.get("jobs") != 2:
    sys.exit(f"FAIL: health's allocation is {alloc}, expected source prolog and 2 jobs")
PY

# The idle job's verdict from the history: held, ran nothing, and what it cost.
idle_held_2s() {
  "$gpulens" report --slurm-job "$idle_job" --history "$tmp/history.db" --format json \
    -o "$tmp/run/idle.json" &&
    python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["source"]
sys.exit(0 if s["to"] - s["from"] >= 2 and s["slurm"]["allocated"] else 1)' "$tmp/run/idle.json"
}
until_ok 20 idle_held_2s ||
  fail "the history did not hold 2 s of job $idle_job's allocation within 20 s: $(cat "$tmp/run/last")"
"$gpulens" report --slurm-job "$idle_job" --history "$tmp/history.db" --price 2 >"$tmp/run/idle.txt" ||
  fail "report --slurm-job $idle_job failed: $(cat "$tmp/run/idle.txt")"
grep -qE 'Held 1 GPU for .* and ran nothing on it: \$[0-9.]+ paid for an idle GPU' "$tmp/run/idle.txt" ||
  fail "the idle job's verdict does not say it held a GPU and ran nothing: $(head -n 6 "$tmp/run/idle.txt")"
grep -q "job $idle_job, user $user, account idlers, no process of it seen on a GPU" "$tmp/run/idle.txt" ||
  fail "the idle job's verdict does not name its user and account: $(head -n 6 "$tmp/run/idle.txt")"

# The job runs on until the agent's history holds 2 s of it (the verdict then has
# samples to judge), asked as the epilog will ask.
held_2s() {
  "$gpulens" report --slurm-job "$job" --history "$tmp/history.db" --format json -o "$tmp/run/report.json" &&
    python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["source"]
sys.exit(0 if s["to"] - s["from"] >= 2 else 1)' "$tmp/run/report.json"
}
until_ok 20 held_2s || fail "the history did not hold 2 s of job $job within 20 s: $(cat "$tmp/run/last")"

# The job ends; slurmd runs Epilog= (deploy/slurm/gpulens-epilog.sh), which asks
# the agent's history for the job's verdict and keeps it, and sets AdminComment.
touch "$tmp/release"
job_done() { ! squeue -h -j "$job" -o %T 2>/dev/null | grep -q .; }
until_ok 30 job_done || fail "job $job did not end within 30 s of its release: $(squeue -h -j "$job" -o '%T %r')"
until_ok 40 test -s "$tmp/jobs/$job.json" ||
  fail "the epilog kept no $tmp/jobs/$job.json within 40 s of the job's end (slurmd.log has the epilog's stderr)"
until_ok 5 test -s "$tmp/jobs/$job.txt" || fail "the epilog kept no $tmp/jobs/$job.txt"
grep -q "Slurm job $job on " "$tmp/jobs/$job.txt" ||
  fail "$job.txt does not name the job and node: $(head -n 5 "$tmp/jobs/$job.txt")"
grep -qE "job $job, user $user, account physics" "$tmp/jobs/$job.txt" ||
  fail "$job.txt does not give the job's user and account: $(head -n 8 "$tmp/jobs/$job.txt")"
grep -qE '^  Cost at \$[0-9.]+ per GPU-hour' "$tmp/jobs/$job.txt" ||
  fail "$job.txt has no cost: $(cat "$tmp/jobs/$job.txt")"
python3 - "$tmp/jobs/$job.json" "$job" "$user" "$work_gpu" <<'PY' || fail "$job.json: see above"
import json, sys
path, job, user, work_gpu = sys.argv[1:]
slurm = json.load(open(path))["source"]["slurm"]
want = {"job": job, "user": user, "account": "physics"}
got = {k: str(slurm.get(k)) for k in want}
if got != want:
    sys.exit(f"FAIL: source.slurm is {slurm}, expected {want}")
if [str(g) for g in slurm["gpus"]] != [work_gpu]:
    sys.exit(f"FAIL: source.slurm.gpus is {slurm['gpus']}, expected GPU {work_gpu} alone")
PY
# AdminComment goes through slurmdbd (sacctmgr), which this cluster has not: the
# epilog must say so and still end well, leaving the node idle, not drained.
until_ok 10 grep -q "job $job: sacctmgr modify job AdminComment failed" "$tmp/log/epilog.err" ||
  fail "the epilog did not report the AdminComment it could not set: $(cat "$tmp/log/epilog.err")"
until_ok 40 test -s "$tmp/jobs/$idle_job.txt" ||
  fail "the epilog kept no verdict of the idle job $idle_job within 40 s"
grep -q "Held 1 GPU for" "$tmp/jobs/$idle_job.txt" ||
  fail "$idle_job.txt does not say the job held a GPU idle: $(head -n 5 "$tmp/jobs/$idle_job.txt")"
for j in "$job" "$idle_job"; do
  [[ ! -e $tmp/alloc/$j ]] || fail "the epilog left job $j's allocation entry behind"
done
until_ok 10 node_idle ||
  fail "node $node is not idle after the epilog: $(sinfo -h -N -o '%N %t %E' 2>&1)"
# Launch counts: a step that launches kernels, its environment from TaskProlog= alone.
# It lists its pid where the fake NVML looks, waits until the agent has seen it on its
# GPU, then becomes the stand-in CUDA job (exec: the same pid), which counts its
# launches and sends them at its exit.
cat >"$tmp/launch_job.sh" <<'JOB'
#!/bin/sh
exec srun --ntasks=1 sh -c 'echo "${SLURM_JOB_GPUS:-$CUDA_VISIBLE_DEVICES} $$ 1073741824" >>"$GPU_PROCS"
echo "$$" >"$GPU_PROCS.d/launch-pid"
while [ ! -e "$GPU_PROCS.d/launch-go" ]; do sleep 0.1; done
env | grep -E "^(LD_PRELOAD|GPULENS_LAUNCHES_AGENT)=" | sort >"$GPU_PROCS.d/launch-env"
exec "$LAUNCH_FAKE_JOB" cudart 1000 >"$GPU_PROCS.d/launch-made.json"'
JOB
worked_job=$job
launch_job=$(sbatch --parsable --account=physics --job-name=gpulens-launches --gres=gpu:1 -c 1 \
  --output="$tmp/log/launch.out" --chdir="$tmp" \
  --export="ALL,GPU_PROCS=$procs,LAUNCH_FAKE_JOB=$launch_fake_job" "$tmp/launch_job.sh") ||
  fail "sbatch failed: $launch_job"
job=$launch_job  # the cleanup cancels it if the test fails from here
until_ok 30 test -s "$procs.d/launch-pid" ||
  fail "the launch job's step did not start within 30 s: $(cat "$tmp/log/launch.out" 2>/dev/null)"
launch_pid=$(cat "$procs.d/launch-pid")
pid_on_gpu() {
  curl -fsS "$url/api/v1/latest" | python3 -c '
import json, sys
pid = int(sys.argv[1])
sys.exit(0 if any(p["pid"] == pid for g in json.load(sys.stdin)["gpus"]
                  for p in g.get("processes") or []) else 1)' "$launch_pid"
}
until_ok 20 pid_on_gpu || fail "the agent did not see the launch step's PID $launch_pid on a GPU"
touch "$procs.d/launch-go"
until_ok 30 job_done || fail "the launch job $launch_job did not end within 30 s"
want_env="GPULENS_LAUNCHES_AGENT=$tmp/kernels.sock
LD_PRELOAD=$launches_lib"
[[ "$(cat "$procs.d/launch-env")" == "$want_env" ]] ||
  fail "the task prolog gave the step '$(cat "$procs.d/launch-env")', expected '$want_env'"
launches_counted() {
  curl -fsS "$url/metrics" >"$tmp/run/launch-metrics.txt" &&
    python3 - "$procs.d/launch-made.json" "$tmp/run/launch-metrics.txt" <<'PY'
import json, re, sys
made = json.load(open(sys.argv[1]))
want = sum(made["made"].values())
lines = (re.match(r'gpulens_kernel_launches_total\{.*\} (\S+)$', l) for l in open(sys.argv[2]))
sys.exit(0 if sum(float(m.group(1)) for m in lines if m) == want else 1)
PY
}
until_ok 20 launches_counted ||
  fail "/metrics does not hold the launch job's launches ($(cat "$procs.d/launch-made.json")): $(grep -E '^gpulens_kernel_launches_total|^gpulens_kernel_summaries_total' "$tmp/run/launch-metrics.txt")"

echo "slurm_cluster: job $worked_job attributed, idle job $idle_job charged, epilogs kept both verdicts, launch job $launch_job's launches counted; $((SECONDS - started)) s"
