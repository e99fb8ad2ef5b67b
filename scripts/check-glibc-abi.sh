#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks x86_64 binaries against an old glibc without that glibc at hand: every
# symbol@version a binary imports must be exported, at that version, by one of
# the glibc libraries it NEEDs, as glibc's own ABI lists (abilist files) of that
# release say. This is the link-level half of running on it: a missing symbol or
# a library not NEEDED (pthread_create@GLIBC_2.2.5 without libpthread.so.0)
# shows here. Not part of ctest, which has no glibc sources; the static_binaries
# test checks the floor and NEEDED by rule on every build.
#
#   scripts/check-glibc-abi.sh GLIBC_GIT_DIR [TAG] BINARY...
#   scripts/check-glibc-abi.sh ~/src/glibc glibc-2.28 build/release/gpulens build/release/gpulens-serve
#
# GLIBC_GIT_DIR is a clone of glibc (git://sourceware.org/git/glibc.git or a
# mirror); TAG defaults to glibc-2.28, the floor of the x86_64 binaries.
set -euo pipefail
git_dir=${1:?usage: check-glibc-abi.sh GLIBC_GIT_DIR [TAG] BINARY...}
shift
tag=glibc-2.28
if [[ ${1:-} == glibc-* ]]; then
  tag=$1
  shift
fi
(($# > 0)) || { echo "check-glibc-abi: no binary given" >&2; exit 2; }
abi_dir=sysdeps/unix/sysv/linux/x86_64/64
declare -A list_of=([libc.so.6]=libc [libm.so.6]=libm [libpthread.so.0]=libpthread
  [libdl.so.2]=libdl [librt.so.1]=librt [ld-linux-x86-64.so.2]=ld)
failed=0
for bin in "$@"; do
  name=$(basename "$bin")
  [[ $(readelf -h "$bin" | sed -n 's/.*Machine: *//p') == *X86-64* ]] ||
    { echo "$name: not an x86_64 binary" >&2; failed=1; continue; }
  exported=''
  while read -r lib; do
    [[ -z $lib ]] && continue
    [[ -n ${list_of[$lib]:-} ]] || { echo "$name: NEEDS $lib, which is not glibc's" >&2; failed=1; continue; }
    # "GLIBC_2.2.5 pthread_create F" -> "pthread_create@GLIBC_2.2.5"
    exported+=$(git -C "$git_dir" show "$tag:$abi_dir/${list_of[$lib]}.abilist" |
      awk '{print $2 "@" $1}')$'\n'
  done < <(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  checked=0
  while read -r import; do
    checked=$((checked + 1))
    grep -qxF "$import" <<<"$exported" && continue
    echo "$name: imports $import, which no library it NEEDS exports in $tag" >&2
    failed=1
  done < <(objdump -T "$bin" | awk '/\*UND\*/ && $(NF-1) ~ /GLIBC_/ {
    v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u)
  echo "$name: $checked versioned imports checked against $tag"
done
exit "$failed"
