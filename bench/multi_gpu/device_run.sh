#!/usr/bin/env bash
# Issue 16 in one device call on nvidia-h200-x2/-x4/-x8 (bench/multi_gpu/pack.sh
# first, then carry .devbin and .devprom):
#   1. calibration/multi_gpu.sh: phases, expected states/alerts, NVLink/PCIe checks
#   2. bench/overhead/run_overhead.sh: collector cost per GPU beside nvidia-smi dmon
#   3. bench/multi_gpu/serve_check.sh: serve + Prometheus for a minute, top --once
# Everything lands under $OUT; the tables are printed.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH="$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:?OUT must name the output folder}
n=$(nvidia-smi -L | wc -l)
nvidia-smi -L >"$out/gpus.txt"
nvidia-smi topo -m >>"$out/gpus.txt" 2>&1
echo "== $n GPUs"
calibration/multi_gpu.sh "$out/multi" "$n"
echo "== collector cost on $n GPUs"
calibration/build.sh >"$out/workload-build.log" 2>&1 &&
  OUT="$out/overhead" OVERHEAD_SECONDS=40 bench/overhead/run_overhead.sh
echo "== serve on $n GPUs"
bench/multi_gpu/serve_check.sh "$out/serve"
tar -C "$out" -czf "$out/multi-raw.tgz" multi/ranks multi/multi.log serve/serve.log 2>/dev/null
