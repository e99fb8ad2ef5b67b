#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The binaries carried to GPU machines need nothing but glibc and the NVIDIA
# driver: their NEEDED entries name only glibc's own libraries, they need no
# GLIBC_x.y newer than the floor (docs/serve.md lists the distributions) nor any
# other GLIBC_ version (GLIBC_ABI_DT_RELR, GLIBC_PRIVATE), and no
# libstdc++/libgcc versions at all (those are linked in). NVML is dlopen'ed, so
# it is never NEEDED.
#
# Below 2.34 a version binds a name, not a library: pthread_create@GLIBC_2.2.5
# is found on glibc 2.28 only if libpthread.so.0 is loaded (dl* in libdl.so.2,
# timer_*, mq_*, aio_*, shm_* in librt.so.1), though the build's glibc links it
# from libc.so.6 and the binary starts fine there. So with a floor below 2.34 a
# binary that binds such a symbol at a version below 2.34 must NEED that library
# (src/platform/glibc_compat_x86_64.cpp has the table). The rule is by name and
# errs on the safe side: 2.28's libc had a few pthread_* of its own.
# Usage: static_binaries.sh STATIC(0|1) FLOOR BINARY...
# Exit 77 (skipped) when the binaries are built without GPULENS_STATIC.
set -euo pipefail
static=${1:?usage: static_binaries.sh STATIC FLOOR BINARY...}
floor=${2:-}
shift 2
if [[ $static != 1 ]]; then
  echo "static_binaries: built without GPULENS_STATIC; nothing to check" >&2
  exit 77
fi
[[ $floor =~ ^2\.[0-9]+$ ]] || { echo "static_binaries: bad glibc floor '$floor'" >&2; exit 1; }
for tool in readelf objdump; do
  command -v "$tool" >/dev/null || { echo "static_binaries: $tool missing (binutils)" >&2; exit 1; }
done

# glibc's own libraries, the dynamic loader of any architecture included.
allowed='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|ld-linux[-a-z0-9_.]*\.so\.[0-9]+)$'
floor_minor=${floor#2.}
failed=0
for bin in "$@"; do
  name=$(basename "$bin")
  needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  [[ -n $needed ]] || { echo "$name: no NEEDED entries read" >&2; failed=1; }
  while read -r lib; do
    [[ -z $lib || $lib =~ $allowed ]] && continue
    echo "$name: NEEDS $lib, which is not part of glibc" >&2
    failed=1
  done <<<"$needed"
  symbols=$(objdump -T "$bin")
  # The loader checks every version the binary needs (.gnu.version_r) before it
  # binds a symbol, and some are needed without one (GLIBC_ABI_DT_RELR, 2.36).
  version_needs=$(readelf -V "$bin" | sed -n 's/.*Name: \(GLIBC_[A-Za-z0-9_.]*\).*/\1/p' | sort -u)
  while read -r version; do
    [[ -z $version || $version =~ ^GLIBC_2\.[0-9.]+$ ]] && continue
    echo "$name: needs $version (floor $floor)" >&2
    failed=1
  done <<<"$version_needs"
  newest=0
  while read -r version; do
    minor=${version#GLIBC_2.}
    minor=${minor%%.*}
    ((minor > newest)) && newest=$minor
    if ((minor > floor_minor)); then
      echo "$name: needs $version (floor $floor):" >&2
      grep -F "($version)" <<<"$symbols" | awk '{print "  " $NF}' >&2
      failed=1
    fi
  done < <(grep -ho 'GLIBC_2\.[0-9.]*' <(echo "$symbols") <(echo "$version_needs") | sort -u)
  if grep -Eq '\((GLIBCXX|CXXABI|GCC)_[0-9]' <<<"$symbols"; then
    echo "$name: needs the shared libstdc++ or libgcc_s:" >&2
    grep -E '\((GLIBCXX|CXXABI|GCC)_[0-9]' <<<"$symbols" | head -5 >&2
    failed=1
  fi
  if ((floor_minor < 34)); then
    declare -A bound_from=()
    while read -r version symbol; do
      [[ $version =~ ^\(?GLIBC_2\.([0-9]+) ]] || continue
      ((BASH_REMATCH[1] < 34)) || continue
      lib=''
      if [[ $symbol =~ ^(__?)?pthread_|^(sem|thrd|mtx|cnd|tss)_|^call_once$ ]]; then
        lib=libpthread.so.0
      elif [[ $symbol =~ ^dl(open|mopen|sym|vsym|close|error|addr|addr1|info)$ ]]; then
        lib=libdl.so.2
      elif [[ $symbol =~ ^(aio_|lio_listio|mq_|__mq_open_2$|shm_(open|unlink)$|timer_) ]] ||
        [[ $symbol =~ ^clock_ && $version == *GLIBC_2.2.5* ]]; then
        lib=librt.so.1
      fi
      [[ -n $lib ]] && bound_from[$lib]+=" $symbol@${version//[()]/}"
    done < <(awk '/\*UND\*/ {print $(NF-1), $NF}' <<<"$symbols")
    for lib in "${!bound_from[@]}"; do
      grep -qxF "$lib" <<<"$needed" && continue
      echo "$name: does not NEED $lib, where glibc before 2.34 has these (floor $floor):" \
        "${bound_from[$lib]:1}" >&2
      failed=1
    done
    unset bound_from
  fi
  echo "$name: NEEDED $(tr '\n' ' ' <<<"$needed"); newest GLIBC_2.$newest (floor $floor)"
done
exit "$failed"
