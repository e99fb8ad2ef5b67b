#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/kernel_cost/launch_hook.cpp, built by build_hook.sh, preloaded into
# tests/fakes/launch_fake_job.cpp, which links the stand-in libcuda.so.1 of
# tests/fakes/launch_fake_driver.cpp. For each way a job reaches the launch calls
# (cudart's cuGetProcAddress, legacy and per-thread-stream; the PLT; eight threads),
# the hook's tally must hold every launch the job made, by the name the driver gives,
# and the driver must have received each of them: once against a driver that hands
# out its own functions, once against one that hands out what the process resolves
# their names to (SHIM_DIR, put first by LD_LIBRARY_PATH), the hook's own entry points.
# And dlsym(RTLD_NEXT) from the job must still resolve from the job (the hook's dlsym
# leaves by a jump).
#   bash tests/e2e/launch_hook.sh PATH/TO/gpulens_launch_fake_job SHIM_DIR
set -euo pipefail
job=${1:?usage: launch_hook.sh FAKE_JOB SHIM_DIR}
shim=${2:?usage: launch_hook.sh FAKE_JOB SHIM_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$here/../../bench/kernel_cost/build_hook.sh" "$tmp/hook.so"

run() {  # NAME ARGS...: the job under the hook, its tallies in $tmp/NAME.PID.json
  local name=$1
  shift
  LD_PRELOAD="$tmp/hook.so" LAUNCH_HOOK_OUT="$tmp/$name.%p.json" "$job" "$@" >"$tmp/$name.out"
}
run cudart cudart 1000
LD_LIBRARY_PATH=$shim run shim cudart 1000
run plt plt 1000
run threads threads 5000
run rtld rtld_next

python3 - "$tmp" <<'PY'
import glob, json, os, sys

tmp = sys.argv[1]
failed = []


def check(name):
    made = json.load(open(os.path.join(tmp, f"{name}.out")))
    tallies = glob.glob(os.path.join(tmp, f"{name}.*.json"))
    if len(tallies) != 1:
        failed.append(f"{name}: {len(tallies)} tallies, want 1")
        return
    kernels = json.load(open(tallies[0]))["kernels"]
    counted = {k["name"]: k["launches"] for k in kernels if not k["graph"]}
    graphs = sum(k["launches"] for k in kernels if k["graph"])
    total_made = sum(made["made"].values()) + made["graphs"]
    if counted != made["made"]:
        failed.append(f"{name}: counted {counted}, made {made['made']}")
    if graphs != made["graphs"]:
        failed.append(f"{name}: counted {graphs} graph launches, made {made['graphs']}")
    if made["received"] != total_made:
        failed.append(f"{name}: the driver received {made['received']} of {total_made}")
    print(f"launch_hook: {name}: {total_made} launches made, counted and passed on")


for name in ("cudart", "shim", "plt", "threads"):
    check(name)
rtld = json.load(open(os.path.join(tmp, "rtld.out")))
if not rtld["rtld_next_is_global"]:
    failed.append("dlsym(RTLD_NEXT) from the job resolved from the hook, not from the job")
for f in failed:
    print("launch_hook:", f, file=sys.stderr)
sys.exit(1 if failed else 0)
PY
