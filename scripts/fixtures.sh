#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The recordings of tests/fixtures/ and examples/ over 300 KB are committed as
# NAME.xz, not NAME: the tracked tree stays small enough to carry to a GPU machine
# (the device tool refuses trees over 64 MiB). Git ignores NAME itself (the list at
# the end of .gitignore). Configuring CMake restores every NAME (cmake/fixtures.cmake);
# this script does the same without a build, and packs a new or refreshed recording.
#
#   scripts/fixtures.sh [unpack]     restore each NAME beside its NAME.xz where NAME is
#                                    missing or older than NAME.xz
#   scripts/fixtures.sh pack FILE... write FILE.xz (xz -9 -T1: the same bytes each time)
#                                    for each FILE over 300 KB or with a .xz already, and
#                                    list FILE in .gitignore; what to `git add` is printed
#   scripts/fixtures.sh check        fail when a restored NAME differs from its NAME.xz,
#                                    when .gitignore's list and the .xz files differ, or
#                                    when git tracks a file of those folders over 300 KB
#                                    that is not a .xz (ctest fixtures_packed)
#
# GPU machines whose image lacks xz-utils decompress with Python's lzma module.
set -euo pipefail
caller=$PWD  # pack's FILEs are named from where it was called
cd "$(dirname "$0")/.."
root=$PWD

limit=300000
folders=(tests/fixtures examples)
marker='# Recordings committed as NAME.xz (scripts/fixtures.sh pack): the restored NAMEs.'

packed() { find "${folders[@]}" -name '*.xz' -type f | LC_ALL=C sort; }
# The paths .gitignore lists after the marker line, without their leading slash.
ignored() { sed -n "\\|^$marker\$|,\$p" .gitignore | sed -n 's|^/||p' | LC_ALL=C sort; }
unxz() {
  if command -v xz >/dev/null; then
    xz -dc -- "$1"
  else
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"
  fi
}

unpack() {
  local xz plain restored=0
  while IFS= read -r xz; do
    plain=${xz%.xz}
    [[ -f $plain && ! $xz -nt $plain ]] && continue
    # A temporary name of this process, then a rename: an interrupted run leaves no
    # half recording, and two runs at once do not write into one file.
    if ! unxz "$xz" >"$plain.$$.unxz-tmp"; then
      rm -f -- "$plain.$$.unxz-tmp"
      echo "fixtures: $xz does not decompress" >&2
      exit 1
    fi
    mv -f "$plain.$$.unxz-tmp" "$plain"
    restored=$((restored + 1))
  done < <(packed)
  echo "fixtures: $restored of $(packed | wc -l) recordings restored from .xz"
}

pack() {
  (($# > 0)) || { echo "usage: scripts/fixtures.sh pack FILE..." >&2; exit 2; }
  local f rel added=()
  for f in "$@"; do
    rel=$(cd "$caller" && realpath --relative-to="$root" -- "$f")
    case $rel in
      tests/fixtures/* | examples/*) ;;
      *) echo "fixtures: $f: only recordings under tests/fixtures/ or examples/ are restored" >&2; exit 2 ;;
    esac
    [[ $rel != *.xz && -f $rel ]] || { echo "fixtures: $f: not a recording" >&2; exit 2; }
    if (($(stat -c %s "$rel") <= limit)) && [[ ! -f $rel.xz ]]; then
      echo "fixtures: $rel is 300 KB or less: committed as it is"
      continue
    fi
    xz -9 -T1 -c -- "$rel" >"$rel.$$.xz-tmp"
    mv -f "$rel.$$.xz-tmp" "$rel.xz"
    # Newer than the .xz, so neither CMake nor unpack writes over it.
    touch -- "$rel"
    grep -qxF -- "$rel" <(ignored) || added+=("$rel")
    echo "fixtures: $rel.xz written ($(stat -c %s "$rel.xz") bytes)"
  done
  if ((${#added[@]} > 0)); then
    # The list, sorted, stays the last lines of .gitignore, after the marker.
    local list
    list=$({ ignored; printf '%s\n' "${added[@]}"; } | LC_ALL=C sort -u | sed 's|^|/|')
    { sed "\\|^$marker\$|,\$d" .gitignore; echo "$marker"; echo "$list"; } >.gitignore.$$.xz-tmp
    mv -f .gitignore.$$.xz-tmp .gitignore
    echo "fixtures: listed in .gitignore: ${added[*]}; once: git rm --cached -q --ignore-unmatch ${added[*]}"
  fi
  echo "fixtures: commit the .xz files (git add -- FILE.xz .gitignore)"
}

check() {
  local xz plain failed=0 n=0
  while IFS= read -r xz; do
    plain=${xz%.xz}
    n=$((n + 1))
    if [[ ! -f $plain ]]; then
      echo "fixtures: $plain missing (configure CMake, or run scripts/fixtures.sh)" >&2
      failed=1
    elif ! unxz "$xz" | cmp -s - "$plain"; then
      echo "fixtures: $plain differs from $xz (a refreshed recording: scripts/fixtures.sh pack $plain)" >&2
      failed=1
    fi
  done < <(packed)
  local listed
  listed=$(diff <(packed | sed 's/\.xz$//') <(ignored) || true)
  if [[ -n $listed ]]; then
    echo "fixtures: .gitignore's list (>) and the .xz files (<) differ:" >&2
    echo "$listed" >&2
    failed=1
  fi
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    local f
    while IFS= read -r -d '' f; do
      [[ -f $f && $f != *.xz ]] && (($(stat -c %s "$f") > limit)) || continue
      echo "fixtures: $f is tracked and over 300 KB: scripts/fixtures.sh pack $f" >&2
      failed=1
    done < <(git ls-files -z -- "${folders[@]}")
  else
    echo "fixtures: not a git checkout: tracked sizes not checked"
  fi
  ((failed == 0)) || exit 1
  echo "fixtures: $n recordings match their .xz and .gitignore's list"
}

case ${1:-unpack} in
  unpack) unpack ;;
  pack) pack "${@:2}" ;;
  check) check ;;
  -h | --help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//' ;;
  *)
    echo "usage: scripts/fixtures.sh [unpack | pack FILE... | check]" >&2
    exit 2
    ;;
esac
