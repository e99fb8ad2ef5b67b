#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One device call of the corpus recording: records the named workloads with the
# carried binary (.devbin/gpulens and its libraries in .devbin/lib) and leaves
# traces, verdicts and logs in $OUT/corpus.tgz (the device tool returns at most
# eight files), with nvidia-smi's view of the GPU and the summary table beside it.
#
#   calibration/corpus/device_record.sh WORKLOAD...
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH="$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:?OUT must name the output folder}
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.max,pcie.link.width.max,power.limit --format=csv >"$out/gpu.csv" 2>&1
python3 -c 'import torch, cupy; print("torch", torch.__version__, "cupy", cupy.__version__)' >"$out/versions.txt" 2>&1
calibration/corpus/record.sh "$work" "$@" | tee "$out/summary.txt"
tar czf "$out/corpus.tgz" -C "$work" .
