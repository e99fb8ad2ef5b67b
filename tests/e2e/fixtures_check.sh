#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/fixtures.sh does what it says, in a scratch git repository: `check` fails
# on a tracked recording over 300 KB, on a restored copy that differs from its .xz
# and on a .xz that .gitignore does not list; `pack` writes the same .xz bytes each
# time, leaves a small recording as it is and lists the packed one in .gitignore
# (which git then ignores); `unpack` restores a missing copy byte for byte, with xz
# and, on a machine without xz, with Python's lzma, keeps a copy newer than its .xz,
# and fails on a cut .xz, leaving no file behind.
set -euo pipefail
script=${1:?usage: fixtures_check.sh SCRIPTS/fixtures.sh}
# git comes with scripts/setup.sh; without it the check cannot run, which is a failure.
command -v git >/dev/null || { echo "FAIL: git is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-fixtures.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_fail() { # expect_fail WORDS CMD...: CMD fails and its output holds WORDS
  local words=$1 out
  shift
  if out=$("$@" 2>&1); then fail "'$*' passed: $out"; fi
  grep -qF -- "$words" <<<"$out" || fail "'$*' did not say '$words': $out"
}

cd "$tmp"
git init -q .
mkdir -p scripts tests/fixtures/deep examples
cp "$script" scripts/fixtures.sh
printf '/build/\n' >.gitignore
# 400 KB of lines that differ, as a recording's do.
seq -f '{"t": %g, "gpu": 0, "sm_active": 0.5}' 1 10000 >tests/fixtures/deep/big.trace.jsonl
cp tests/fixtures/deep/big.trace.jsonl "$tmp/big.orig"
seq 1 100 >tests/fixtures/small.trace.jsonl
git add .
expect_fail "tests/fixtures/deep/big.trace.jsonl is tracked and over 300 KB" bash scripts/fixtures.sh check

bash scripts/fixtures.sh pack tests/fixtures/deep/big.trace.jsonl tests/fixtures/small.trace.jsonl >/dev/null
[[ -f tests/fixtures/deep/big.trace.jsonl.xz ]] || fail "pack wrote no .xz"
[[ ! -e tests/fixtures/small.trace.jsonl.xz ]] || fail "pack packed a recording under 300 KB"
first=$(sha256sum <tests/fixtures/deep/big.trace.jsonl.xz)
bash scripts/fixtures.sh pack tests/fixtures/deep/big.trace.jsonl >/dev/null
[[ $(sha256sum <tests/fixtures/deep/big.trace.jsonl.xz) == "$first" ]] || fail "pack is not deterministic"
[[ $(grep -c big.trace.jsonl .gitignore) == 1 ]] || fail "pack listed the recording more than once"
git rm -q --cached tests/fixtures/deep/big.trace.jsonl
git add .
git check-ignore -q tests/fixtures/deep/big.trace.jsonl || fail "git does not ignore the packed recording"
git check-ignore -q tests/fixtures/small.trace.jsonl && fail "git ignores a recording left as it is"
bash scripts/fixtures.sh check >/dev/null || fail "check fails on a packed tree"
expect_fail "only recordings under tests/fixtures/ or examples/" bash scripts/fixtures.sh pack .gitignore
# FILEs are named from where pack is called.
(cd tests/fixtures/deep && bash ../../../scripts/fixtures.sh pack big.trace.jsonl >/dev/null) ||
  fail "pack of a FILE named from its folder failed"
[[ $(sha256sum <tests/fixtures/deep/big.trace.jsonl.xz) == "$first" ]] || fail "pack from a folder wrote other bytes"

rm tests/fixtures/deep/big.trace.jsonl
bash scripts/fixtures.sh >/dev/null
cmp -s tests/fixtures/deep/big.trace.jsonl "$tmp/big.orig" || fail "unpack did not restore the bytes"
rm tests/fixtures/deep/big.trace.jsonl
mkdir "$tmp/bin"  # every command unpack runs, but not xz
for c in dirname find sort mv wc; do ln -s "$(command -v "$c")" "$tmp/bin/$c"; done
# The interpreter itself, not a pyenv shim (which would look for its tools on PATH).
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$tmp/bin/python3"
PATH=$tmp/bin "$BASH" scripts/fixtures.sh >/dev/null
cmp -s tests/fixtures/deep/big.trace.jsonl "$tmp/big.orig" || fail "unpack without xz did not restore the bytes"

echo '{"t": 9999}' >>tests/fixtures/deep/big.trace.jsonl  # newer than the .xz: kept
bash scripts/fixtures.sh >/dev/null
[[ $(tail -n 1 tests/fixtures/deep/big.trace.jsonl) == '{"t": 9999}' ]] || fail "unpack wrote over a newer copy"
expect_fail "tests/fixtures/deep/big.trace.jsonl differs from" bash scripts/fixtures.sh check
cp "$tmp/big.orig" tests/fixtures/deep/big.trace.jsonl

head -c 2000 tests/fixtures/deep/big.trace.jsonl.xz >examples/cut.jsonl.xz
expect_fail "examples/cut.jsonl.xz does not decompress" bash scripts/fixtures.sh
[[ -z $(find . -name '*-tmp') && ! -e examples/cut.jsonl ]] || fail "a failed unpack left a file behind"
rm examples/cut.jsonl.xz

cp tests/fixtures/deep/big.trace.jsonl.xz examples/other.jsonl.xz
bash scripts/fixtures.sh >/dev/null
expect_fail "< examples/other.jsonl" bash scripts/fixtures.sh check
echo "fixtures check test passed"
