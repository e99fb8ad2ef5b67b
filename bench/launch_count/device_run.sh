#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU machine: libgpulens_launches.so as `gpulens run` loads it (on by
# default), one call of about four minutes. Needs .devbin/gpulens and
# .devbin/libgpulens_launches.so beside it (carried; any build of gpulens), and
# .devbin/gpulens-serve for the agent phase (`gpulens serve` runs it). Each phase leaves
# several files: return $OUT as one tarball (the device tool returns only a few files).
#  1. counts: known_launches.py under `gpulens run -o report.json`: the whole job
#     profiled by torch.profiler, whose kernel launches by name the report's must equal;
#     CUDA-graph replays, whose count the report's graph launches must equal; the same
#     with --kernels too (CUPTI in the same processes); a job run as user nobody.
#  2. cost: bench/kernel_cost/launch_cost.cu's empty-kernel launches from 1 and 4
#     threads, in processes alternating, in a random order each round, between n (alone),
#     g (under libgpulens_launches.so, counting and writing its record every 10 s) and h
#     (under bench/kernel_cost/launch_hook.cpp counting: the same launch path, whose
#     cost was measured in paired slots in one process), $SLOTS slots of $SLOT_MS each.
#   OUT=/tmp/lc ROUNDS=8 bash bench/launch_count/device_run.sh; then tar $OUT
#  3. paired: launch_cost's paired slots in one process (mode p), with
#     libgpulens_launches.so first in LD_PRELOAD and the bench hook after it only to
#     hand the harness the driver's own cuLaunchKernel: slots of the driver called
#     directly (D) against slots through libgpulens_launches.so's cuLaunchKernel, which
#     counts (P, C and S alike: the bench hook's modes do not reach it), $CYCLES cycles.
#     PAIRED_THREADS (default "1 4") the thread counts; PAIRED_KINDS=DC only the D and C
#     slots each cycle (launch_cost.cu), twice the cycles in the same time.
#  4. agent: the counts through the node agent, as a fleet runs them: `gpulens serve
#     --kernels-socket`, and jobs started outside `gpulens run` with the environment
#     that deploy/slurm/gpulens-task-prolog.sh prints; /metrics is scraped after each
#     job (agent/metrics.NAME.txt): its launches must be the job's own (agent_check.py).
#  5. bound: a launch-bound loop (known_launches.py eager) under `gpulens run`: the
#     verdict and its first fix with the launch counts as evidence (bound.report.txt).
#  6. graph: graph_paired.py, a CUDA-graph batch-1 server's replays in paired slots,
#     the driver's cuGraphLaunch against the library's, $GRAPH_CYCLES cycles.
#  7. train: train_job.py, GPU-bound bf16 training, bare (n) and under the library (g)
#     in a random order each of $TRAIN_ROUNDS rounds, $TRAIN_SECONDS timed each.
# PHASES (default "counts cost paired") picks the parts.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/lc}
ROUNDS=${ROUNDS:-8}
SLOTS=${SLOTS:-10}
SLOT_MS=${SLOT_MS:-200}
PHASES=${PHASES:-counts cost paired}
CYCLES=${CYCLES:-100}
mkdir -p "$OUT"
bin=$PWD/.devbin
here=bench/launch_count
cuda=${CUDA_HOME:-/usr/local/cuda}
inc=$(dirname "$(find "$cuda"/ -name cupti.h 2>/dev/null | head -1)")
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "$(nvcc --version | tail -1); $(nproc) cores"
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)'
} | tee "$OUT/machine.txt"

run_job() {  # NAME [gpulens run options] -- CMD...: the job under gpulens run
  local name=$1
  shift
  "$bin/gpulens" run -q -o "$OUT/$name.report.json" --trace "$OUT/$name.trace.jsonl" "$@" \
    >"$OUT/$name.stdout" 2>"$OUT/$name.stderr"
  echo "$name: exit $?" | tee -a "$OUT/exits.txt"
}
if [[ " $PHASES " == *" counts "* ]]; then
run_job profiled -- python3 $here/known_launches.py profiled 20000 50
run_job graphs -- python3 $here/known_launches.py graphs 5000
run_job kernels --kernels -- python3 $here/known_launches.py graphs 2000
if command -v setpriv >/dev/null; then
  chmod -R a+rwX "$OUT" "$bin"
  setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp \
    "$bin/gpulens" run -q -o "$OUT/nobody.report.json" -- python3 $here/known_launches.py graphs 100 \
    >"$OUT/nobody.stdout" 2>"$OUT/nobody.stderr"
  echo "nobody: exit $?" | tee -a "$OUT/exits.txt"
fi
fi
if [[ " $PHASES " == *" agent "* ]]; then
  mkdir -p "$OUT/agent"
  # A directory of its own, readable by all, as /run/gpulens is: the job as user
  # nobody must reach the socket (0666 by default).
  sockdir=$(mktemp -d /tmp/gpulens-agent.XXXXXX)
  chmod 755 "$sockdir"
  sock=$sockdir/kernels.sock
  "$bin/gpulens" serve --listen 127.0.0.1:19401 --kernels-socket "$sock" --no-history \
    --interval 0.5 --kernels-top 50 >"$OUT/agent/serve.log" 2>&1 &
  serve=$!
  get() { python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen("http://127.0.0.1:19401" + sys.argv[1], timeout=10).read().decode())' "$1"; }
  for _ in $(seq 100); do get /api/v1/health >/dev/null 2>&1 && [[ -S $sock ]] && break; sleep 0.2; done
  if ! get /metrics >"$OUT/agent/metrics.start.txt" 2>/dev/null || [[ ! -S $sock ]]; then
    # No jobs then: their counts would read as zeros, not as the agent's absence.
    echo "agent: did not start (gpulens-serve beside .devbin/gpulens?); its log:" | tee -a "$OUT/exits.txt"
    tail -5 "$OUT/agent/serve.log"
    rm -f "$OUT/agent/metrics.start.txt"
    kill "$serve" 2>/dev/null
  fi
  GPULENS_PROLOG_CONF=/nonexistent GPULENS_LAUNCHES_LIBRARY="$bin/libgpulens_launches.so" \
    GPULENS_LAUNCHES_SOCKET="$sock" sh deploy/slurm/gpulens-task-prolog.sh >"$OUT/agent/prolog.txt"
  agent_job() {  # NAME [setpriv ...] CMD...: the job with the prolog's environment, outside gpulens run
    local name=$1
    shift
    (
      eval "$(cat "$OUT/agent/prolog.txt")"
      exec "$@"
    ) >"$OUT/agent/$name.stdout" 2>"$OUT/agent/$name.stderr"
    echo "agent $name: exit $?" | tee -a "$OUT/exits.txt"
    sleep 2  # the exit send, and a sample or two of the agent after it
    get /metrics >"$OUT/agent/metrics.$name.txt"
  }
  [[ -f $OUT/agent/metrics.start.txt ]] || PHASES=${PHASES/agent/agent-failed}
fi
if [[ " $PHASES " == *" agent "* ]]; then
  agent_job profiled python3 $here/known_launches.py profiled 20000 50
  agent_job graphs python3 $here/known_launches.py graphs 5000
  agent_job eager python3 $here/known_launches.py eager 5
  if command -v setpriv >/dev/null; then
    chmod -R a+rwX "$OUT" "$bin"
    agent_job nobody setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp \
      python3 $here/known_launches.py graphs 2000
  fi
  get /api/v1/health >"$OUT/agent/health.json"
  kill "$serve"
  wait "$serve"
  echo "agent serve: exit $?" >>"$OUT/agent/serve.exit"
  python3 $here/agent_check.py "$OUT/agent" | tee "$OUT/agent/summary.txt"
fi
if [[ " $PHASES " == *" bound "* ]]; then
  run_job bound -- python3 $here/known_launches.py eager 20
  "$bin/gpulens" report "$OUT/bound.trace.jsonl" >"$OUT/bound.report.txt" 2>&1
  echo "bound report: exit $?" >>"$OUT/exits.txt"
fi
if [[ " $PHASES " == *" graph "* ]]; then
  mkdir -p "$OUT/records/graph"
  GPULENS_LAUNCHES_DIR="$OUT/records/graph" LD_PRELOAD="$bin/libgpulens_launches.so" \
    python3 $here/graph_paired.py "${GRAPH_CYCLES:-150}" 200 >"$OUT/graph.jsonl" 2>"$OUT/graph.stderr"
  echo "graph: exit $?" | tee -a "$OUT/exits.txt"
fi
if [[ " $PHASES " == *" train "* ]]; then
  mkdir -p "$OUT/records/train"
  for round in $(seq 1 "${TRAIN_ROUNDS:-6}"); do
    for kind in $(printf 'n\ng\n' | shuf); do
      if [[ $kind == g ]]; then
        GPULENS_LAUNCHES_DIR="$OUT/records/train" LD_PRELOAD="$bin/libgpulens_launches.so" \
          python3 $here/train_job.py "${TRAIN_SECONDS:-12}" >>"$OUT/train.g.jsonl" 2>>"$OUT/train.stderr"
      else
        python3 $here/train_job.py "${TRAIN_SECONDS:-12}" >>"$OUT/train.n.jsonl" 2>>"$OUT/train.stderr"
      fi
      echo "train $round $kind: exit $?" >>"$OUT/exits.txt"
    done
  done
fi
if [[ " $PHASES " != *" cost "* && " $PHASES " != *" paired "* ]]; then
  python3 $here/check.py "$OUT" | tee "$OUT/summary.txt"
  exit
fi

# 2. cost
nvcc -O2 -std=c++17 -cudart shared -I"$inc" -o "$OUT/launch_cost" bench/kernel_cost/launch_cost.cu -ldl || exit 1
CUDA_INCLUDE="$cuda/include" bash bench/kernel_cost/build_hook.sh "$OUT/liblaunch_hook.so" || exit 1
pin="taskset -c 2-7"
command -v taskset >/dev/null || pin=""
if [[ " $PHASES " == *" paired "* ]]; then
  mkdir -p "$OUT/records/paired"
  for threads in ${PAIRED_THREADS:-1 4}; do
    GPULENS_LAUNCHES_DIR="$OUT/records/paired" HOOK_PAIRED_SAMPLE=0 \
      LD_PRELOAD="$bin/libgpulens_launches.so:$OUT/liblaunch_hook.so" \
      $pin "$OUT/launch_cost" p "$threads" "$CYCLES" 200 >"$OUT/paired.$threads.jsonl"
  done
fi
[[ " $PHASES " == *" cost "* ]] || ROUNDS=0
for round in $(seq 1 "$ROUNDS"); do
  for threads in 1 4; do
    for kind in $(printf 'n\ng\nh\n' | shuf); do
      if [[ $kind == g ]]; then
        mkdir -p "$OUT/records/r$round.t$threads"
        GPULENS_LAUNCHES_DIR="$OUT/records/r$round.t$threads" LD_PRELOAD="$bin/libgpulens_launches.so" \
          $pin "$OUT/launch_cost" g "$threads" "$SLOTS" "$SLOT_MS" >>"$OUT/cost.$kind.$threads.jsonl"
      elif [[ $kind == h ]]; then
        LD_PRELOAD="$OUT/liblaunch_hook.so" LAUNCH_HOOK_SAMPLE=0 \
          $pin "$OUT/launch_cost" h "$threads" "$SLOTS" "$SLOT_MS" >>"$OUT/cost.$kind.$threads.jsonl"
      else
        $pin "$OUT/launch_cost" n "$threads" "$SLOTS" "$SLOT_MS" >>"$OUT/cost.$kind.$threads.jsonl"
      fi
    done
  done
done
python3 $here/check.py "$OUT" | tee "$OUT/summary.txt"
