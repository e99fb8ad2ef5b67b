#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What dcgm-exporter's fields beyond the classic set cost per tick on a real GPU
# (issue 48, item 4: encoder/decoder utilization, remapped rows, PCIe replays,
# NVLink errors). Runs on the GPU host and builds nothing: it uses the release
# gpulens_nvml_probe in .devbin/ (bench/multi_gpu/pack.sh fills it; GPULENS_DEVBIN
# names another folder). No network.
#   1. each new NVML call timed alone on GPU 0 (gpulens_nvml_probe --call-costs)
#   2. full samples of every GPU at 10 Hz, as the sampler takes them, in three ways:
#      without the fields (--no-dcgm-fields), with them at the default cadence (PCIe
#      replays and NVLink errors every 30 s), and with those two read every tick
#      (--link-errors-refresh 0, the cost the slow cadence avoids)
# and prints a table of mean CPU ms per GPU per tick. TICKS (default 450: 45 s, so
# that the 30 s counters are read once after open) and ROUNDS (default 2, the modes
# alternate) tune it. Everything lands in $OUT (default /tmp/gpulens-dcgm-fields).
set -uo pipefail
OUT=${OUT:-/tmp/gpulens-dcgm-fields}
B=${GPULENS_DEVBIN:-$PWD/.devbin}
PROBE=$B/gpulens_nvml_probe
TICKS=${TICKS:-450}
ROUNDS=${ROUNDS:-2}
die() {
  echo "bench/dcgm_fields/run.sh: $*" >&2
  exit 1
}
mkdir -p "$OUT" || die "cannot create $OUT"
command -v python3 >/dev/null || die "python3 is needed to summarize (Ubuntu 24.04 has it)"
[[ -x $PROBE ]] || die "no $PROBE: fill .devbin from a release build (bench/multi_gpu/pack.sh build/release) or set GPULENS_DEVBIN"
# Libraries an Ubuntu GPU machine may lack travel in .devbin/lib (bench/multi_gpu/pack.sh).
[[ -d $B/lib ]] && export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[[ $TICKS =~ ^[1-9][0-9]*$ && $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "TICKS and ROUNDS must be positive integers"

# A probe built before these fields refuses the flag (usage, exit 2); one that cannot
# open NVML says why (exit 1).
"$PROBE" --count 0 --no-dcgm-fields >"$OUT/check.jsonl" 2>"$OUT/check.err"
case $? in
  0) ;;
  2) die "$PROBE does not know --no-dcgm-fields: it predates issue 48's fields; rebuild .devbin from a tree that has bench/dcgm_fields" ;;
  *) die "$PROBE cannot open NVML: $(tr '\n' ' ' <"$OUT/check.err")" ;;
esac

echo "== call costs on GPU 0 (200 calls each; the PCIe replay counter 50)"
"$PROBE" --call-costs 200 >"$OUT/call-costs.jsonl" 2>"$OUT/call-costs.err" ||
  die "--call-costs failed: $(tr '\n' ' ' <"$OUT/call-costs.err")"

declare -A FLAGS=([without]="--no-dcgm-fields" [with]="" [every_tick]="--link-errors-refresh 0")
for round in $(seq 1 "$ROUNDS"); do
  for mode in without with every_tick; do
    echo "== round $round: $mode ($TICKS ticks at 10 Hz)"
    # shellcheck disable=SC2086 # FLAGS holds zero or more words on purpose
    "$PROBE" --count "$TICKS" --interval 0.1 ${FLAGS[$mode]} >"$OUT/$mode-$round.jsonl" \
      2>"$OUT/$mode-$round.err" || die "$mode run failed: $(tr '\n' ' ' <"$OUT/$mode-$round.err")"
  done
done

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def lines(path):
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    yield json.loads(line)
                except ValueError:
                    pass

wanted = ("nvmlDeviceGetEncoderUtilization", "nvmlDeviceGetDecoderUtilization",
          "nvmlDeviceGetRemappedRows", "nvmlDeviceGetPcieReplayCounter",
          "nvmlDeviceGetNvLinkErrorCounter", "nvmlDeviceGetUtilizationRates")
print("\ncall (GPU 0)                                         cpu us   wall us  result")
for j in lines(f"{out}/call-costs.jsonl"):
    name = j.get("call", "")
    if not name.startswith(wanted):
        continue
    if j.get("missing"):
        print(f"{name:<52} {'missing in this driver':>18}")
    else:
        print(f"{name:<52} {j['cpu_us']:7.2f} {j['wall_us']:9.2f}  {j['ret']}")

header = None
modes = {}
for mode in ("without", "with", "every_tick"):
    for r in range(1, rounds + 1):
        for j in lines(f"{out}/{mode}-{r}.jsonl"):
            if j.get("format") == "gpu-trace" and mode == "with":
                header = j
            if j.get("summary"):
                modes.setdefault(mode, []).append(j)
if header:
    for d in header.get("devices", []):
        print(f"\nGPU {d.get('index')}: {d.get('name')}; active NVLink links: "
              f"{d.get('nvlink_count', '?')}")
        # The "with" runs' header: why a field is absent on this GPU, if it is.
        for key, reason in (d.get("unsupported") or {}).items():
            if key.startswith(("x_enc", "x_dec", "x_remap", "x_row", "x_pcie", "x_nvlink")):
                print(f"  {key}: {reason}")
print("\nmean CPU ms per GPU per tick (10 Hz)   classic   total   classic vs without")
base = None
for mode, label in (("without", "without the fields"), ("with", "with them (30 s, 300 s cadences)"),
                    ("every_tick", "with them, counters every tick")):
    runs = modes.get(mode, [])
    if not runs:
        print(f"{label:<38} no summary (see {out}/{mode}-*.err)")
        continue
    classic = sum(r["classic_ms"] for r in runs) / len(runs)
    total = sum(r["total_ms"] for r in runs) / len(runs)
    if base is None and mode == "without":
        base = classic
    delta = f"{(classic - base) * 1000:+8.1f} us" if base is not None else ""
    print(f"{label:<38} {classic:7.3f} {total:7.3f}   {delta}")
print(f"\nraw output: {out}")
PY
