#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The job-side cost of sending kernel summaries to the agent, alone: the same
# batch-1 inference job under `gpulens run --kernels` (trace windows, a record)
# with and without GPULENS_KERNELS_AGENT, ABAB, 3 rounds of 30 s, beside a
# running gpulens-serve. Both arms trace the same windows; only the sending
# differs. Needs .devbin (bench/multi_gpu/pack.sh, then libgpulens_kernels.so).
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH="$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:?OUT must name the output folder}
w=/tmp/send-cost
rm -rf "$w" && mkdir -p "$w"
sock=$w/kernels.sock
.devbin/gpulens-serve --listen 127.0.0.1:9478 --kernels-socket "$sock" >"$w/serve.log" 2>&1 &
serve=$!
for _ in $(seq 1 100); do curl -fsS http://127.0.0.1:9478/api/v1/health >/dev/null 2>&1 && break; sleep 0.1; done
for round in 1 2 3; do
  for arm in run agent; do
    if [ "$arm" = agent ]; then export GPULENS_KERNELS_AGENT=$sock; else unset GPULENS_KERNELS_AGENT; fi
    CUDA_VISIBLE_DEVICES=0 .devbin/gpulens run --kernels -o "$w/$arm-$round.txt" -- python3 \
      bench/kernels/workloads.py --seconds 30 --workloads batch1 --steps-out "$w/$arm-$round.steps" \
      >"$w/$arm-$round.log" 2>&1
  done
done
unset GPULENS_KERNELS_AGENT
curl -fsS http://127.0.0.1:9478/api/v1/health >"$w/health.json"
kill "$serve"
python3 - "$w" <<'PY' | tee "$w/table.txt"
import json, statistics, sys
w = sys.argv[1]
def p50(path):
    st = json.loads(open(path).readline())["steps"]
    return 1e3 * statistics.median(s for _, s in st)
print("batch-1 inference p50 step (ms) under gpulens run --kernels; agent = summaries sent too")
ratios = []
for r in (1, 2, 3):
    a, b = p50(f"{w}/agent-{r}.steps"), p50(f"{w}/run-{r}.steps")
    ratios.append(a / b)
    print(f"round {r}: run {b:.4f}  run+agent {a:.4f}  ratio {a / b:.4f}")
m, s = statistics.mean(ratios), statistics.stdev(ratios)
print(f"ratio mean {m:.4f}, sd {s:.4f} over 3 rounds")
h = json.load(open(f"{w}/health.json"))["kernels"]
print(f"agent accepted {h['accepted']} summaries, refused {sum(h['refused'].values())}")
PY
grep -h "agent" "$w"/agent-*.txt | head -3
tar -C /tmp -czf "$out/send-cost.tgz" send-cost
cp "$w/table.txt" "$out/send-cost.txt"
