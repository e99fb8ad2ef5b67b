#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue 49 on a GPU machine (one H200, the image's own Python with PyTorch,
# Lightning and transformers, no network): writes the gpulens wheel, installs it
# into that Python with no index, and drives the callbacks in a real Lightning
# fit and a real transformers Trainer loop (bench/py49/callbacks_gpu.py). Writes
# results.md and results.json to $OUT (else ./py49-out); commit them under
# bench/results/python-2026-11-29/.
# Usage, from the repository root: bash bench/py49/run.sh
set -uo pipefail
out=${OUT:-$PWD/py49-out}
mkdir -p "$out"
log="$out/install.log"
py=${PYTHON:-python3}
wheel_dir=$(mktemp -d /tmp/gpulens-wheel.XXXXXX)
"$py" python/build_wheel.py --out-dir "$wheel_dir" >"$log" 2>&1 || { cat "$log"; exit 1; }
wheel=$(ls "$wheel_dir"/gpulens-*-py3-none-any.whl)
echo "python: $("$py" -c 'import sys; print(sys.executable, sys.version.split()[0])')" | tee -a "$log"
echo "wheel: $(basename "$wheel")" | tee -a "$log"

# Into the image's Python itself, as a user would; where its site-packages is
# read-only or it has no pip, into a directory on PYTHONPATH instead (the same
# wheel, the same pip, --target).
route=''
if ! "$py" -m pip --version >>"$log" 2>&1; then
  "$py" -m ensurepip >>"$log" 2>&1 || true  # bundled with Python: no network
fi
if "$py" -m pip install --no-index --no-deps "$wheel" >>"$log" 2>&1; then
  route="pip install --no-index $(basename "$wheel") (into $("$py" -c 'import sys; print(sys.prefix)'))"
elif "$py" -m pip install --no-index --no-deps --target /tmp/gpulens-site "$wheel" >>"$log" 2>&1; then
  export PYTHONPATH=/tmp/gpulens-site${PYTHONPATH:+:$PYTHONPATH}
  route="pip install --no-index --target /tmp/gpulens-site $(basename "$wheel")"
elif command -v uv >/dev/null 2>&1 &&
  uv pip install --offline --no-deps --python "$py" "$wheel" >>"$log" 2>&1; then
  route="uv pip install --offline $(basename "$wheel")"
else
  cat "$log"
  echo "FAIL: the wheel did not install" >&2
  exit 1
fi
echo "installed by: $route" | tee -a "$log"
# From elsewhere, so that the checkout's python/ is not what gets imported.
cd /tmp && PYTHONUNBUFFERED=1 INSTALL_ROUTE="$route" "$py" "$OLDPWD/bench/py49/callbacks_gpu.py" "$out"
