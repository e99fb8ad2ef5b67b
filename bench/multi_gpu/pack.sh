#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fills .devbin (gpulens, gpulens-serve, gpulens_nvml_probe and the shared
# libraries they need that an Ubuntu GPU machine may lack) and .devprom (the
# prometheus binary from Debian's package) for bench/multi_gpu/device_run.sh.
#   bench/multi_gpu/pack.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
rm -rf .devbin .devprom
mkdir -p .devbin/lib .devprom
for b in gpulens gpulens-serve gpulens_nvml_probe; do
  cp "$build/$b" .devbin/
  strip .devbin/$b
  # Libraries outside glibc's core set travel beside the binaries.
  ldd "$build/$b" | awk '/=> \// { print $3 }' |
    { grep -vE '/(libc|libm|libdl|libpthread|librt|libgcc_s|ld-linux[^/]*)\.so' || true; } |
    xargs -r -I{} cp -Ln {} .devbin/lib/
done
# Compressed: the device tool carries at most 64 MiB, and prometheus alone is 48.
xz -T2 -6 -c "$(command -v prometheus)" >.devprom/prometheus.xz
du -sh .devbin .devprom
