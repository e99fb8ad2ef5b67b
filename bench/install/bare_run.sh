#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 15's "runs anywhere" check, on the GPU machine (Ubuntu 24.04, NVIDIA
# driver, none of Debian's packages): the two release binaries alone in an empty
# folder, started with an empty environment (no LD_LIBRARY_PATH), read the live
# GPU, record, report with the built-in price and peak tables, and serve /metrics.
#   BIN=.devstatic OUT=DIR bench/install/bare_run.sh
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
# The calibration recording is committed as .xz; nothing here configured CMake to restore it.
"$repo/scripts/fixtures.sh" >/dev/null || exit 1
out=${OUT:?OUT must name the output folder}
work=$(mktemp -d)
cp "$repo/${BIN:-.devstatic}/gpulens" "$repo/${BIN:-.devstatic}/gpulens-serve" "$work/"
cd "$work"
bare() { env -i PATH=/usr/bin:/bin HOME="$work" "$@"; }
{
  echo "== $(. /etc/os-release; echo "$PRETTY_NAME"), glibc $(ldd --version | head -1 | awk '{print $NF}'), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
  echo "== folder: $(ls)"
  for b in gpulens gpulens-serve; do echo "== ldd $b"; ldd "./$b"; done
  echo "== gpulens --version"; bare ./gpulens --version; echo "exit $?"
  echo "== gpulens stream -c 3 (live)"; bare ./gpulens stream -c 3 --interval 0.5; echo "exit $?"
  echo "== gpulens record --duration 4, then report"
  bare ./gpulens record -q -o live.trace.jsonl --duration 4 --interval 0.5; echo "exit $?"
  bare ./gpulens report live.trace.jsonl | head -12; echo "exit ${PIPESTATUS[0]}"
  echo "== gpulens report on the calibration recording: price and MFU from the built-in tables"
  bare ./gpulens report "$repo/examples/calibration-h100.trace.jsonl" | grep -E 'Cost at|MFU' | head -4
  echo "== gpulens-serve live for 5 s"
  bare ./gpulens-serve --listen 127.0.0.1:9412 >serve.log 2>&1 &
  pid=$!
  sleep 5
  curl -s http://127.0.0.1:9412/metrics >metrics.prom
  echo "metrics: $(grep -c '^gpulens_' metrics.prom) samples; $(grep -m1 '^gpulens_gpu_utilization_ratio' metrics.prom)"
  kill "$pid"; wait "$pid" 2>/dev/null
  echo "serve log:"; head -5 serve.log
} 2>&1 | tee "$out/bare-run.txt"
