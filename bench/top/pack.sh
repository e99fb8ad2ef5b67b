#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds .devtop/ for bench/top/device_top.sh: a release gpulens, the shared
# libraries it needs that an Ubuntu GPU machine may lack (ldd decides), Debian's
# tmux with its libraries, and terminfo entries for the terminals used there.
#   bench/top/pack.sh [BUILD_DIR]     (default build/release, built if missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/release}
if [[ ! -x $build/gpulens ]]; then
  cmake --preset release >/dev/null
  nice -n 10 cmake --build "$build" -j2 --target gpulens
fi
# Packed beside, then swapped in, so that a copy taken meanwhile is never half-made.
final=.devtop
dest=.devtop.new
rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/terminfo"
cp "$build/gpulens" "$dest/"
strip "$dest/gpulens"
tmux_bin=$(command -v tmux)
cp "$tmux_bin" "$dest/tmux"

# Libraries outside glibc's own (libc, libm, libdl, libpthread, libresolv, ld.so):
# Ubuntu has glibc (newer, compatible) but not necessarily the rest.
copy_libs() {
  ldd "$1" | awk '/=> \// { print $3 }' | while read -r lib; do
    case $(basename "$lib") in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | libresolv.so.* | librt.so.*) ;;
      *) cp -L "$lib" "$dest/lib/" ;;
    esac
  done
}
copy_libs "$dest/gpulens"
copy_libs "$tmux_bin"

# terminfo: tmux's inner terminal and the usual outer ones.
for entry in t/tmux t/tmux-256color s/screen s/screen-256color x/xterm x/xterm-256color l/linux \
  d/dumb v/vt100; do
  for dir in /lib/terminfo /usr/share/terminfo /etc/terminfo; do
    if [[ -f $dir/$entry ]]; then
      mkdir -p "$dest/terminfo/$(dirname "$entry")"
      cp "$dir/$entry" "$dest/terminfo/$entry"
      break
    fi
  done
done
rm -rf "$final.old"
[[ -d $final ]] && mv "$final" "$final.old"
mv "$dest" "$final"
rm -rf "$final.old"
echo "packed $final:"
(cd "$final" && find . -type f | sort | xargs ls -l | awk '{ print "  " $5, $9 }')
du -sh "$final"
