#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds calibration/build/gpulens-workload with nvcc for Hopper (sm_90).
# cudart is linked statically. cuBLAS is linked statically when the toolkit
# has its .a files, else dynamically with an rpath to the toolkit's lib dir.
# Env: NVCC (default /usr/local/cuda/bin/nvcc, else nvcc on PATH),
#      CUDA_ARCH (default sm_90), BUILD_DIR (default calibration/build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${BUILD_DIR:-$here/build}"
nvcc="${NVCC:-/usr/local/cuda/bin/nvcc}"
[ -x "$nvcc" ] || nvcc="$(command -v nvcc)" || { echo "build.sh: nvcc not found" >&2; exit 1; }
cuda_home="$(cd "$(dirname "$nvcc")/.." && pwd)"
libdir="$cuda_home/lib64"
arch="${CUDA_ARCH:-sm_90}"

if [ -f "$libdir/libcublas_static.a" ] && [ -f "$libdir/libcublasLt_static.a" ]; then
    blas=(-lcublas_static -lcublasLt_static -lculibos)
    how="static cuBLAS"
else
    blas=(-lcublas -Xlinker "-rpath=$libdir")
    how="dynamic cuBLAS (rpath $libdir)"
fi

mkdir -p "$out"
"$nvcc" -O2 -std=c++20 -arch="$arch" -lineinfo \
    -Xcompiler -Wall,-Wextra \
    -cudart static \
    -o "$out/gpulens-workload" \
    "$here/main.cu" "$here/workloads.cu" "$here/kernels.cu" \
    "$here/phase.cpp" "$here/common.cpp" \
    -L"$libdir" "${blas[@]}" -ldl -lpthread -lrt
echo "build.sh: built $out/gpulens-workload ($arch, static cudart, $how)"
