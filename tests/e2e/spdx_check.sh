#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/check-spdx.sh fails where it should: in a scratch git repository, a
# tracked C++ file, a script after its shebang, and a CMakeLists.txt without the
# licence line fail the check; --fix adds the lines, and the check then passes.
# Fixtures are not source and are never asked for the line.
set -euo pipefail
script=${1:?usage: spdx_check.sh SCRIPTS/check-spdx.sh}
command -v git >/dev/null || { echo "SKIP: git is not installed" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-spdx.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cd "$tmp"
git init -q .
mkdir -p src tests/fixtures
printf '// SPDX-License-Identifier: Apache-2.0\nint a;\n' >src/good.cpp
printf 'int b;\n' >src/bad.cpp
printf '#!/bin/sh\necho hi\n' >src/run.sh
printf 'add_library(x x.cpp)\n' >CMakeLists.txt
printf 'no header here\n' >tests/fixtures/data.sh
git add .
if out=$(bash "$script" "$tmp" 2>&1); then fail "passed with files lacking the line: $out"; fi
for f in src/bad.cpp src/run.sh CMakeLists.txt; do
  grep -qx "  $f" <<<"$out" || fail "$f not named: $out"
done
! grep -q -e good.cpp -e fixtures <<<"$out" || fail "named a file that needs no line: $out"
bash "$script" --fix "$tmp" >/dev/null 2>&1 || true
[[ $(sed -n 2p src/run.sh) == '# SPDX-License-Identifier: Apache-2.0' ]] || fail "--fix did not put the line after the shebang"
[[ $(head -1 src/bad.cpp) == '// SPDX-License-Identifier: Apache-2.0' ]] || fail "--fix did not add the C++ line"
bash "$script" "$tmp" || fail "the check fails after --fix"
echo "spdx check test passed"
