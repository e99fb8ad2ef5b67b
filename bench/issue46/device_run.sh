#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 46 on one GPU, one device call (about 4 minutes), with the carried
# binary (.devbin/gpulens; bench/kernels/pack.sh fills it with
# libgpulens_kernels.so beside it):
#   1. the evidence set's workloads recorded after their labels and that need
#      this binary (leak_fast: the job's own out-of-memory words are read from
#      its stderr; fused_add_bf16: labelled after fused_half's premise failed);
#   2. bench/oom/run.sh: out-of-memory deaths, the headline and the forecast's lead;
#   3. bench/pcie_pinned_pageable.py: pinned and pageable copy rates on this link;
#   4. two corpus workloads under `gpulens run --kernels`, so the first fix can
#      name the synchronisations and element-wise kernels it rests on.
#   OUT=/tmp/out bash bench/issue46/device_run.sh
# $OUT ends with summary.txt and issue46.tgz (recordings, reports, logs).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?OUT must name the output folder}
B=$PWD/.devbin
export GPULENS=$B/gpulens
if [ -d "$B/lib" ]; then export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
work=$(mktemp -d)
{
  echo "== record (corpus, evidence set)"
  LIMIT_S=120 calibration/corpus/record.sh "$work/rec" leak_fast fused_add_bf16
  echo "== oom"
  timeout 240 bench/oom/run.sh "$GPULENS" "$work/oom"
  echo "== pcie"
  timeout 90 python3 bench/pcie_pinned_pageable.py
  echo "== kernels"
  mkdir -p "$work/kernels"
  for w in item_every_op unfused_fp32; do
    timeout 120 "$GPULENS" run -q --kernels --interval 0.1 --trace "$work/kernels/$w.trace.jsonl" \
      -o "$work/kernels/$w.json" -- python3 calibration/corpus/corpus.py "$w" \
      >"$work/kernels/$w.log" 2>&1
    echo "$w: exit $?"
    python3 - "$work/kernels/$w.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("  headline:", (r.get("headline") or "")[:300])
for f in (r.get("fixes") or [])[:2]:
    print("  fix:", str(f)[:600])
for p in r.get("phases") or []:
    fx = p.get("fixes") or [""]
    print(f"  phase {p.get('name')} gpu {p.get('gpu')}: {p.get('state')}: {str(fx[0])[:600]}")
PY
  done
} 2>&1 | tee "$OUT/summary.txt"
tar czf "$OUT/issue46.tgz" -C "$work" .
