#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a tracked source file does not name its licence in its first line
# (after a shebang): `// SPDX-License-Identifier: Apache-2.0` in C, C++ and CUDA,
# `# SPDX-License-Identifier: Apache-2.0` in shell, Python and CMake. Data, test
# fixtures, golden files, fuzz corpora and vendored code are not source.
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
excluded='(^|/)(fixtures|golden|vendor)/|^fuzz/corpus/|^bench/results/'
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.c' '*.cu' '*.cuh' '*.sh' '*.py' \
  '*.cmake' '*CMakeLists.txt' | grep -Ev "$excluded")
((${#files[@]} > 0)) || { echo "check-spdx: no source files found" >&2; exit 1; }

missing=()
for f in "${files[@]}"; do
  [[ -f $f ]] || continue  # deleted in the work tree, not yet in the index
  case $f in
    *.sh | *.py | *.cmake | *CMakeLists.txt) line="# $spdx" ;;
    *) line="// $spdx" ;;
  esac
  first=$(head -n 1 "$f")
  if [[ $first == '#!'* ]]; then
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
    "'// $spdx' (C/C++) or '# $spdx' (shell, Python, CMake), after any shebang;" \
    "scripts/check-spdx.sh --fix adds it" >&2
  exit 1
fi
echo "check-spdx: ${#files[@]} source files carry '$spdx'"
