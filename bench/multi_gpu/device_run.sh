#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 16 on nvidia-h200-x2/-x4/-x8 or nvidia-h100-x2/-x4 (bench/multi_gpu/pack.sh
# first, then carry .devbin and .devprom). Two calls on the same warm machine,
# each inside the device tool's 10 minutes:
#   bench/multi_gpu/device_run.sh phases   calibration/multi_gpu.sh (phases, expected
#                                          states and alerts, NVLink/PCIe checks), then
#                                          serve + Prometheus for a minute, top --once
#   bench/multi_gpu/device_run.sh holdout  calibration/multi_gpu.sh with PLAN=holdout
#                                          (expected-holdout.json), nothing else
#   bench/multi_gpu/device_run.sh advice   the same with PLAN=advice (expected-advice.json)
#   bench/multi_gpu/device_run.sh advice_holdout   the same, expected-advice-holdout.json
#   bench/multi_gpu/device_run.sh advice_holdout2  the same, expected-advice-holdout2.json
#   bench/multi_gpu/device_run.sh kernels  the advice plan under `gpulens run --kernels`
#                                          traced whole, reported from another directory
#   bench/multi_gpu/device_run.sh cost     bench/multi_gpu/cost_scaling.sh: collector
#                                          cost per GPU at 1, 2, 4 (8) GPUs beside dmon
#   bench/multi_gpu/device_run.sh prom     bench/multi_gpu/prom_scrape.sh: Prometheus
#                                          scraping gpulens-serve every second during
#                                          an NCCL job on every GPU (issue 53)
# Everything lands under $OUT as one archive plus the printed tables.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH="$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:?OUT must name the output folder}
stage=${1:?usage: device_run.sh phases|holdout|advice|advice_holdout|advice_holdout2|kernels|cost|prom}
n=$(nvidia-smi -L | wc -l)
work=/tmp/multi-gpu
mkdir -p "$work"
nvidia-smi -L >"$work/gpus.txt"
nvidia-smi topo -m >>"$work/gpus.txt" 2>&1
echo "== $n GPUs, stage $stage"
case $stage in
  phases)
    GPULENS=.devbin/gpulens calibration/multi_gpu.sh "$work/multi" "$n"
    echo "== serve on $n GPUs"
    bench/multi_gpu/serve_check.sh "$work/serve"
    cp "$work/multi/score.txt" "$work/serve/serve-check.txt" "$out/" 2>/dev/null
    ;;
  holdout | advice | advice_holdout | advice_holdout2)
    PLAN=$stage GPULENS=.devbin/gpulens calibration/multi_gpu.sh "$work/multi" "$n"
    cp "$work/multi/score.txt" "$out/" 2>/dev/null
    ;;
  kernels)
    # Issue 27: a DDP job (the advice plan: a slow rank 0, then an all-gather
    # hang) under `gpulens run --kernels` traced whole, then `gpulens report` on
    # its recording from another directory.
    .devbin/gpulens run --kernels --kernels-every 0 -o "$work/ddp-kernels.txt" \
      --trace "$work/ddp-kernels.trace.jsonl" -- python3 calibration/multi_gpu/phases.py \
      --gpus "$n" --plan advice --scale 0.5 --out "$work/ddp" >"$work/ddp-kernels.log" 2>&1
    echo "exit $?" >>"$work/ddp-kernels.log"
    here=$PWD
    (cd /tmp && "$here/.devbin/gpulens" report "$work/ddp-kernels.trace.jsonl" --format json \
      -o "$work/ddp-kernels.json" && "$here/.devbin/gpulens" report "$work/ddp-kernels.trace.jsonl" \
      -o "$work/ddp-kernels-report.txt") >>"$work/ddp-kernels.log" 2>&1
    grep -c '"x_kernels"' "$work/ddp-kernels.trace.jsonl" >>"$work/ddp-kernels.log"
    awk '/"x_kernels"/ { if (length($0) > m) m = length($0) } END { print "longest kernel line", m }' \
      "$work/ddp-kernels.trace.jsonl" >>"$work/ddp-kernels.log"
    cp "$work/ddp-kernels.txt" "$work/ddp-kernels.json" "$work/ddp-kernels-report.txt" \
      "$work/ddp-kernels.log" "$out/" 2>/dev/null
    tail -5 "$work/ddp-kernels.log"
    ;;
  cost)
    OUT="$work" bench/multi_gpu/cost_scaling.sh
    cp "$work/cost-scaling.txt" "$out/" 2>/dev/null
    ;;
  prom)
    OUT="$work" SECONDS_RUN=${SECONDS_RUN:-120} bench/multi_gpu/prom_scrape.sh
    cp "$work/prom-summary.txt" "$work/metrics-during-nccl.prom" "$out/" 2>/dev/null
    ;;
  *) echo "device_run.sh: unknown stage $stage" >&2; exit 2 ;;
esac
rm -rf "$work/multi/serve/tsdb" "$work/serve/tsdb"
tar -C "$work" -czf "$out/multi-gpu-$stage.tgz" .
