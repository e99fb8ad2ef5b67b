#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The collector's cost per GPU as the GPU count grows, on one multi-GPU machine:
# bench/overhead/run_overhead.sh limited to the first 1, 2, 4 (and 8) GPUs in
# turn (gpulens --gpus, nvidia-smi dmon -i), then one table of CPU per GPU per
# tick and peak RSS against the GPU count (bench/multi_gpu/cost_table.py).
#   OUT=DIR bench/multi_gpu/cost_scaling.sh        (OVERHEAD_SECONDS, default 30)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:?OUT must name the output folder}
n=$(nvidia-smi -L | wc -l)
export OVERHEAD_SECONDS=${OVERHEAD_SECONDS:-30}
[[ -x calibration/build/gpulens-workload ]] || calibration/build.sh >"$out/workload-build.log" 2>&1
dirs=()
for k in 1 2 4 8; do
  ((k <= n)) || break
  gpus=$(seq -s, 0 $((k - 1)))
  echo "== $k GPU(s): $gpus"
  GPUS=$gpus OUT="$out/cost-$k" bench/overhead/run_overhead.sh >"$out/cost-$k.log" 2>&1
  dirs+=("$out/cost-$k")
done
python3 bench/multi_gpu/cost_table.py "${dirs[@]}" | tee "$out/cost-scaling.txt"
