#!/usr/bin/env bash
# One device call of the corpus recording: records the named workloads with the
# carried binary (.devbin/gpulens and its libraries in .devbin/lib) and leaves
# traces, verdicts and logs under $OUT, with nvidia-smi's view of the GPU first.
#
#   calibration/corpus/device_record.sh WORKLOAD...
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH="$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:?OUT must name the output folder}
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max,power.limit --format=csv >"$out/gpu.csv" 2>&1
python3 -c 'import torch, cupy; print("torch", torch.__version__, "cupy", cupy.__version__)' >"$out/versions.txt" 2>&1
calibration/corpus/record.sh "$out" "$@"
