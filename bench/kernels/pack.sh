#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds (release) what bench/kernels/device_run.sh carries to the GPU machine and
# puts it in .devbin/ (or $GPULENS_DEVBIN): gpulens and libgpulens_kernels.so (gpulens-serve is not
# needed there), and any shared library they need that a bare Ubuntu 24.04 lacks
# (none today: libstdc++ and libgcc are linked in, libsqlite3 comes with python3;
# the check below fails the pack if that changes).
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${GPULENS_DEVBIN:-.devbin}
export CCACHE_DIR=${CCACHE_DIR:-/work/.ccache} CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD/..} CCACHE_NOHASHDIR=1
if [ ! -f build/release/CMakeCache.txt ]; then
  cmake --preset release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DGPULENS_BUILD_TESTS=OFF \
    -DGPULENS_BUILD_BENCH=OFF
fi
nice -n 10 cmake --build build/release -j2 --target gpulens gpulens_injection
mkdir -p "$dest"
cp build/release/gpulens build/release/libgpulens_kernels.so "$dest/"
# Libraries found on this machine but not part of glibc or the base system.
allowed='linux-vdso|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|ld-linux|libz\.so|libsqlite3|libcrypt\.so|libssl|libcrypto'
for f in "$dest/gpulens" "$dest/libgpulens_kernels.so"; do
  extra=$(ldd "$f" | awk '{print $1}' | grep -Ev "$allowed" || true)
  if [ -n "$extra" ]; then
    echo "pack: $f needs libraries the GPU machine may lack: $extra" >&2
    exit 1
  fi
done
# The injection library must export its two entry points and nothing of C++.
nm -D --defined-only "$dest/libgpulens_kernels.so" | awk '{print $3}' | sort >/tmp/gpulens-kernels-exports
grep -qx InitializeInjection /tmp/gpulens-kernels-exports
grep -qx cuptiActivityRegisterCallbacks /tmp/gpulens-kernels-exports
ls -la "$dest/"
