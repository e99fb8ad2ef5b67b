#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 29 on a 2-GPU machine (bench/multi_gpu/pack.sh and bench/kernels/pack.sh
# first; carry .devbin): the node's gpulens-serve with --kernels-socket, and
#   - a training job on GPU 0, opted in (CUDA_INJECTION64_PATH + GPULENS_KERNELS_AGENT),
#   - a batch-1 inference service on GPU 1, opted in,
#   - a launch loop on GPU 0, not opted in;
# the agent is killed with SIGKILL mid-run and started again; at the end the
# API, /metrics and health are saved, and each job's steps before, during and
# after the agent's absence are compared. Then the sending's cost on the
# inference job: injection with the agent variable vs without, ABAB, 30 s each.
# Everything lands under $OUT; a short table is printed.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH="$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:?OUT must name the output folder}
w=/tmp/agent-kernels
rm -rf "$w" && mkdir -p "$w"
sock=$w/kernels.sock
port=9477
base=http://127.0.0.1:$port
inj=$PWD/.devbin/libgpulens_kernels.so
nvidia-smi -L >"$out/gpus.txt"

start_serve() {
  .devbin/gpulens-serve --listen "127.0.0.1:$port" --history "$w/history.db" \
    --kernels-socket "$sock" >>"$w/serve.log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 1 100); do
    curl -fsS "$base/api/v1/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "gpulens-serve did not answer" >&2
  return 1
}

start_serve || exit 1
t0=$(date +%s.%N)
echo "t0 $t0" >"$w/timeline.txt"
CUDA_VISIBLE_DEVICES=0 CUDA_INJECTION64_PATH=$inj GPULENS_KERNELS_AGENT=$sock \
  python3 bench/kernels/workloads.py --seconds 100 --workloads train --steps-out "$w/train.steps" \
  >"$w/train.log" 2>&1 &
train=$!
CUDA_VISIBLE_DEVICES=1 CUDA_INJECTION64_PATH=$inj GPULENS_KERNELS_AGENT=$sock \
  python3 bench/kernels/workloads.py --seconds 100 --workloads batch1 --steps-out "$w/infer.steps" \
  >"$w/infer.log" 2>&1 &
infer=$!
CUDA_VISIBLE_DEVICES=0 python3 bench/kernels/workloads.py --seconds 100 --workloads launch \
  --steps-out "$w/plain.steps" >"$w/plain.log" 2>&1 &
plain=$!
echo "pids train $train infer $infer plain $plain" >>"$w/timeline.txt"

sleep 50
curl -fsS "$base/api/v1/kernels" >"$w/kernels-before-kill.json" 2>/dev/null
kill -9 "$serve_pid"
echo "kill $(date +%s.%N)" >>"$w/timeline.txt"
sleep 12
start_serve || exit 1
echo "restart $(date +%s.%N)" >>"$w/timeline.txt"
wait "$train"; echo "train exit $?" >>"$w/timeline.txt"
wait "$infer"; echo "infer exit $?" >>"$w/timeline.txt"
wait "$plain"; echo "plain exit $?" >>"$w/timeline.txt"
curl -fsS "$base/api/v1/kernels" >"$w/kernels.json"
curl -fsS "$base/api/v1/health" >"$w/health.json"
curl -fsS "$base/metrics" >"$w/metrics.txt"
curl -fsS "$base/" >"$w/index.html"
curl -fsS "$base/assets/app.js" | grep -c "Where the time went" >"$w/dashboard-panel.txt"
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null

# The sending's cost on the inference job: both with the injection library,
# A with the agent variable (the agent up again), B without.
start_serve || exit 1
for round in 1 2; do
  for arm in agent none; do
    if [ "$arm" = agent ]; then extra="GPULENS_KERNELS_AGENT=$sock"; else extra="GPULENS_KERNELS_AGENT="; fi
    env CUDA_VISIBLE_DEVICES=1 CUDA_INJECTION64_PATH="$inj" $extra python3 bench/kernels/workloads.py \
      --seconds 30 --workloads batch1 --steps-out "$w/cost-$arm-$round.steps" >"$w/cost-$arm-$round.log" 2>&1
  done
done
curl -fsS "$base/api/v1/health" >"$w/health-cost.json"
kill "$serve_pid"; wait "$serve_pid" 2>/dev/null

python3 bench/agent_kernels/table.py "$w" | tee "$w/table.txt"
tar -C /tmp -czf "$out/agent-kernels.tgz" agent-kernels
cp "$w/table.txt" "$out/"
