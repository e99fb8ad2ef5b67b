#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 16's live multi-GPU check, on a machine with N >= 2 GPUs: runs
# calibration/multi_gpu/phases.py (one NCCL rank per GPU, phase marks) under
# `gpulens run --interval 0.1`, then scores the recording against
# calibration/multi_gpu/expected.json and checks NVLink and PCIe rates against
# what the program moved.
#
#   calibration/multi_gpu.sh OUTDIR [N]
#
# A run kept as a fixture (tests/fixtures/multi_gpu/RUN/): its multi.trace.jsonl is
# committed packed (scripts/fixtures.sh pack).
# Environment: GPULENS (default .devbin/gpulens), SCALE (phase length factor),
# PLAN (main: expected.json, the default; holdout: expected-holdout.json; advice:
# expected-advice.json; advice_holdout: expected-advice-holdout.json; advice_holdout2:
# expected-advice-holdout2.json).
# NVLink multicast stays off in every rank (the GPU machines require it).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: calibration/multi_gpu.sh OUTDIR [N]}
n=${2:-0}
plan=${PLAN:-main}
expected=calibration/multi_gpu/expected.json
[[ $plan == holdout ]] && expected=calibration/multi_gpu/expected-holdout.json
[[ $plan == advice ]] && expected=calibration/multi_gpu/expected-advice.json
[[ $plan == advice_holdout ]] && expected=calibration/multi_gpu/expected-advice-holdout.json
[[ $plan == advice_holdout2 ]] && expected=calibration/multi_gpu/expected-advice-holdout2.json
gpulens=${GPULENS:-.devbin/gpulens}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$out/ranks"
t0=$(date +%s)
"$gpulens" run -q --interval 0.1 --trace "$out/multi.trace.jsonl" -o "$out/multi.verdict.json" -- \
  python3 calibration/multi_gpu/phases.py --gpus "$n" --out "$out/ranks" --scale "${SCALE:-1}" --plan "$plan" \
  >"$out/multi.log" 2>&1
rc=$?
echo "phases.py under gpulens run: exit $rc after $(($(date +%s) - t0)) s" | tee "$out/score.txt"
tail -n 20 "$out/multi.log" | grep -E 'rank|Error|error' | tail -n 12
"$gpulens" report "$out/multi.trace.jsonl" >"$out/multi.report.txt" 2>&1
python3 calibration/multi_gpu/score.py --bin "$gpulens" --trace "$out/multi.trace.jsonl" \
  --ranks "$out/ranks" --expected "$expected" | tee -a "$out/score.txt"
exit "${PIPESTATUS[0]}"
