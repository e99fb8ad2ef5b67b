#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a C++ file differs from .clang-format's layout (skipped if clang-format is absent).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format not installed; skipped" >&2
  exit 0
fi
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.hpp' 'tests/*.cpp' 'tests/*.hpp' 'bench/*.cpp' 'tools/*.cpp' 'tools/*.hpp' 2>/dev/null || true)
((${#files[@]} == 0)) && exit 0
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/gpulens-format.log; then
  head -40 /tmp/gpulens-format.log >&2
  echo "check-format: run 'clang-format -i' on the files above" >&2
  exit 1
fi
