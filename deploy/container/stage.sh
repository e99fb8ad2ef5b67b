#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Makes the build context of deploy/container/Containerfile from a build
# directory, with nothing downloaded:
#   CONTEXT/rootfs   `cmake --install --strip` of the build (prefix /usr), passwd,
#                    group, the history directory and /tmp
#   CONTEXT/libs     every library that `ldd` lists for gpulens and gpulens-serve,
#                    and the rest of glibc that NVML (dlopen()ed) needs, at their paths
# Usage: deploy/container/stage.sh BUILD_DIR CONTEXT_DIR
set -euo pipefail
build=$1
ctx=$2
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$ctx"
cp "$here/Containerfile" "$ctx/Containerfile"
DESTDIR="$ctx/rootfs" cmake --install "$build" --prefix /usr --strip >/dev/null
bins=("$ctx/rootfs/usr/bin/gpulens" "$ctx/rootfs/usr/bin/gpulens-serve")

libs=()
for bin in "${bins[@]}"; do
  # "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
  while read -r lib; do libs+=("$lib"); done < <(ldd "$bin" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p')
done
libc=$(printf '%s\n' "${libs[@]}" | grep '/libc\.so\.6$' | head -1)
[[ -n "$libc" ]] || { echo "stage.sh: ldd lists no libc.so.6 for ${bins[*]}" >&2; exit 1; }
# libnvidia-ml.so.1 needs these beside libc; glibc 2.34+ keeps them as stubs.
for name in libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1; do
  [[ -e "$(dirname "$libc")/$name" ]] && libs+=("$(dirname "$libc")/$name")
done
for lib in $(printf '%s\n' "${libs[@]}" | sort -u); do
  mkdir -p "$ctx/libs$(dirname "$lib")"
  cp -L "$lib" "$ctx/libs$lib"
done

mkdir -p "$ctx/rootfs/etc" "$ctx/rootfs/var/lib/gpulens" "$ctx/rootfs/tmp"
chmod 1777 "$ctx/rootfs/tmp"
printf 'gpulens:x:65532:65532:gpulens agent:/var/lib/gpulens:/sbin/nologin\n' >"$ctx/rootfs/etc/passwd"
printf 'gpulens:x:65532:\n' >"$ctx/rootfs/etc/group"
