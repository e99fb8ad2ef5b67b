#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# /metrics as gpulens-serve wrote it on real GPUs, scraped mid-job by a real
# Prometheus (bench/multi_gpu/prom_scrape.sh; tests/fixtures/metrics/*.prom, each
# named for its machine and job). Each passes `promtool check metrics`; every GPU
# has the same series as GPU 0 (a GPU whose read failed must not lose series
# silently); and the series per GPU stay inside the fleet's budget of 150
# (docs/fleet.md, "Series and samples").
# Usage: real_metrics.sh
set -euo pipefail
# lib.sh's helpers want a gpulens binary; this test reads files only. 77: skipped.
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null || { echo "SKIP: promtool is not installed (scripts/setup.sh installs prometheus)" >&2; exit 77; }
fixtures=("$(dirname "${BASH_SOURCE[0]}")"/../fixtures/metrics/*.prom)
[[ -e ${fixtures[0]} ]] || fail "no fixtures under tests/fixtures/metrics"
for f in "${fixtures[@]}"; do
  name=$(basename "$f")
  lint=$(promtool check metrics <"$f" 2>&1) || fail "$name: promtool check metrics: $lint"
  python3 - "$f" <<'PY' || fail "$name: series per GPU"
import re, sys
from collections import defaultdict
series = defaultdict(set)  # gpu -> {(metric, labels without gpu and uuid)}
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? ', line)
    if not m:
        sys.exit(f"unparsed line: {line[:80]}")
    labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
    if "gpu" not in labels:
        continue
    gpu = labels.pop("gpu")
    labels.pop("uuid", None)
    series[gpu].add((m.group(1), tuple(sorted(labels.items()))))
if len(series) < 2:
    sys.exit(f"{len(series)} GPU(s): a multi-GPU fixture is expected")
first = series[min(series, key=int)]
for gpu, s in sorted(series.items(), key=lambda kv: int(kv[0])):
    # Labels that name the GPU's own peers or links may differ; the families may not.
    missing = {n for n, _ in first} - {n for n, _ in s}
    if missing:
        sys.exit(f"GPU {gpu} lacks {sorted(missing)}")
    if len(s) > 150:
        sys.exit(f"GPU {gpu}: {len(s)} series, over the budget of 150")
    print(f"GPU {gpu}: {len(s)} series")
PY
  echo "ok: $name"
done
