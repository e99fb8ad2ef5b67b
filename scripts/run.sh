#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quick start, command 1: install what building gpulens needs (no service, nothing
# the tests alone use: tests/e2e/setup_packages.py), build a release gpulens, and run it.
# With no arguments it streams the bundled H100 recording; otherwise it passes the
# arguments to gpulens (e.g. scripts/run.sh stream, scripts/run.sh record -o x.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The tests and benchmarks need packages the quick start does not install
# (GoogleTest, Google Benchmark); scripts/test.sh configures them back on.
cmake --preset release -DGPULENS_BUILD_TESTS=OFF -DGPULENS_BUILD_BENCH=OFF >/dev/null
cmake --build --preset release --target gpulens
if (($# == 0)); then
  set -- stream --replay examples/calibration-h100.trace.jsonl --speed 20
fi
exec build/release/gpulens "$@"
