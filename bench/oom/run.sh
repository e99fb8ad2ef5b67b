#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real out-of-memory deaths under `gpulens run` on one GPU (issue 46): the
# headline must quote the job's own message with its figures, the memory_growth
# forecast must come at least 5 s before a fast leak's death, and a step's
# saw-tooth must not fire it. Needs PyTorch (and JAX for jax_leak) with CUDA.
#
#   bench/oom/run.sh [GPULENS_BIN] [OUT_DIR]
#
# Keeps each recording (OUT_DIR/<job>.trace.jsonl: new corpus material, with the
# job_end mark's stderr fields) and report, and prints one line per job.
set -u
bin=${1:-build/release/gpulens}
out=${2:-${OUT:-bench/results/oom}}
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
for job in fast_leak big_request sawtooth jax_leak; do
  if [ "$job" = jax_leak ] && ! python3 -c 'import jax' 2>/dev/null; then
    echo "$job: skipped (no jax)"
    continue
  fi
  "$bin" run -q --gpus 0 --interval 0.1 --trace "$out/$job.trace.jsonl" -o "$out/$job.json" \
    -- python3 "$here/jobs.py" "$job" 2>"$out/$job.stderr"
  echo "exit $?" >>"$out/$job.stderr"
  python3 - "$out/$job.json" "$job" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
job = r.get("job") or {}
o = job.get("outcome") or {}
s = o.get("stderr") or {}
growth = [a for a in r.get("alerts", []) if a.get("rule") == "memory_growth"]
lead = (job["end"] - growth[0]["fired_at"]) if growth and job.get("end") else None
print(f"{sys.argv[2]}: exit {job.get('exit_code')} oom={o.get('out_of_memory')} "
      f"basis={o.get('out_of_memory_basis')} peak={o.get('memory_peak_mib')}/"
      f"{o.get('memory_total_mib')} MiB scan={s.get('scan')} source={s.get('oom_source')} "
      f"tried={s.get('oom_tried_mib')} free={s.get('oom_free_mib')} "
      f"memory_growth={'%.1f s before the end' % lead if lead is not None else 'no'}")
print("  headline:", (r.get("headline_items") or [{}])[0].get("text", "")[:400])
PY
done
