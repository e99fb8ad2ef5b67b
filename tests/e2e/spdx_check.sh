#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/check-spdx.sh fails where it should: in a scratch git repository, a
# tracked C++ file, a script after its shebang, a CMakeLists.txt, the dashboard's
# JavaScript, CSS and HTML (after its doctype) and a YAML manifest without the
# licence line fail the check; --fix adds the lines, and the check then passes.
# Fixtures and examples/' generated reports are not source and are never asked.
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
mkdir -p web/src deploy examples
printf 'const a = 1;\n' >web/src/app.js
printf 'body { margin: 0; }\n' >web/src/app.css
printf '<!doctype html>\n<html></html>\n' >web/src/index.html
printf 'kind: Service\n' >deploy/service.yaml
printf '<!DOCTYPE html>\n<p>a generated report</p>\n' >examples/report.html
git add .
if out=$(bash "$script" "$tmp" 2>&1); then fail "passed with files lacking the line: $out"; fi
for f in src/bad.cpp src/run.sh CMakeLists.txt web/src/app.js web/src/app.css web/src/index.html \
  deploy/service.yaml; do
  grep -qx "  $f" <<<"$out" || fail "$f not named: $out"
done
! grep -q -e good.cpp -e fixtures -e examples <<<"$out" || fail "named a file that needs no line: $out"
bash "$script" --fix "$tmp" >/dev/null 2>&1 || true
[[ $(sed -n 2p src/run.sh) == '# SPDX-License-Identifier: Apache-2.0' ]] || fail "--fix did not put the line after the shebang"
[[ $(head -1 src/bad.cpp) == '// SPDX-License-Identifier: Apache-2.0' ]] || fail "--fix did not add the C++ line"
[[ $(head -1 web/src/app.js) == '// SPDX-License-Identifier: Apache-2.0' ]] || fail "--fix did not add the JavaScript line"
[[ $(head -1 web/src/app.css) == '/* SPDX-License-Identifier: Apache-2.0 */' ]] || fail "--fix did not add the CSS line"
[[ $(sed -n 2p web/src/index.html) == '<!-- SPDX-License-Identifier: Apache-2.0 -->' ]] ||
  fail "--fix did not put the HTML line after the doctype"
[[ $(head -1 deploy/service.yaml) == '# SPDX-License-Identifier: Apache-2.0' ]] || fail "--fix did not add the YAML line"
bash "$script" "$tmp" || fail "the check fails after --fix"
echo "spdx check test passed"
