#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds launch_hook.cpp's library (launch_hook.cpp + launch_samples.cpp) for
# LD_PRELOAD, on a machine with CUDA's headers, and checks that its dlsym leaves by a
# jump (so that glibc resolves RTLD_NEXT from the real caller). Only the symbols
# marked visible are exported.
#   bash bench/kernel_cost/build_hook.sh OUTPUT.so   (cuda.h from $CUDA_INCLUDE, else $CUDA_HOME/include)
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: build_hook.sh OUTPUT.so" >&2; exit 2; }
here=$(dirname "$0")
g++ -O2 -shared -fPIC -fvisibility=hidden -std=c++20 -I"${CUDA_INCLUDE:-${CUDA_HOME:-/usr/local/cuda}/include}" -o "$1" \
  "$here/launch_hook.cpp" "$here/launch_samples.cpp" -ldl
if ! objdump -d "$1" --no-show-raw-insn | awk '/<dlsym>:/,/^$/' | grep -q 'jmp  *\*%rax'; then
  echo "build_hook.sh: dlsym does not tail-call glibc's: RTLD_NEXT callers would resolve from the hook" >&2
  exit 1
fi
