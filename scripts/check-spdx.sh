#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a tracked source file does not name its licence in its first line
# (after a shebang, or an HTML doctype): `// SPDX-License-Identifier: Apache-2.0`
# in C, C++, CUDA and JavaScript, `/* ... */` in CSS, `<!-- ... -->` in HTML,
# `# SPDX-License-Identifier: Apache-2.0` in shell, Python, CMake and the
# configuration gpulens ships (YAML, TOML, the systemd unit, the Containerfile).
# Data (JSON has no comments), test fixtures, golden files, fuzz corpora, vendored
# code and the generated reports of examples/ are not source.
# Usage: check-spdx.sh [--fix] [SOURCE_DIR]   (--fix adds the line where missing)
set -euo pipefail
fix=0
if [[ ${1:-} == --fix ]]; then
  fix=1
  shift
fi
cd "${1:-$(dirname "$0")/..}"
command -v git >/dev/null && git rev-parse --show-toplevel >/dev/null 2>&1 ||
  { echo "check-spdx: not a git checkout; nothing to check" >&2; exit 0; }

spdx='SPDX-License-Identifier: Apache-2.0'
excluded='(^|/)(fixtures|golden|vendor)/|^fuzz/corpus/|^bench/results/|^examples/.*\.html$'
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.c' '*.cu' '*.cuh' '*.sh' '*.py' \
  '*.cmake' '*CMakeLists.txt' '*.js' '*.mjs' '*.css' '*.html' '*.yml' '*.yaml' '*.toml' \
  '*.service' '*Containerfile' | grep -Ev "$excluded")
((${#files[@]} > 0)) || { echo "check-spdx: no source files found" >&2; exit 1; }

missing=()
for f in "${files[@]}"; do
  [[ -f $f ]] || continue  # deleted in the work tree, not yet in the index
  case $f in
    *.sh | *.py | *.cmake | *CMakeLists.txt | *.yml | *.yaml | *.toml | *.service | *Containerfile)
      line="# $spdx" ;;
    *.css) line="/* $spdx */" ;;
    *.html) line="<!-- $spdx -->" ;;
    *) line="// $spdx" ;;
  esac
  first=$(head -n 1 "$f")
  if [[ $first == '#!'* || ($f == *.html && ${first,,} == '<!doctype'*) ]]; then
    expected_at=2
    got=$(sed -n 2p "$f")
  else
    expected_at=1
    got=$first
  fi
  [[ $got == "$line" ]] && continue
  if ((fix)); then
    sed -i "${expected_at}i\\$line" "$f"
  else
    missing+=("$f")
  fi
done
if ((${#missing[@]} > 0)); then
  printf '  %s\n' "${missing[@]}" >&2
  echo "check-spdx: ${#missing[@]} source file(s) do not start with the line" \
    "'// $spdx' (C/C++, JavaScript), '# $spdx' (shell, Python, CMake, YAML, TOML)," \
    "'/* $spdx */' (CSS) or '<!-- $spdx -->' (HTML), after any shebang or doctype;" \
    "scripts/check-spdx.sh --fix adds it" >&2
  exit 1
fi
echo "check-spdx: ${#files[@]} source files carry '$spdx'"
