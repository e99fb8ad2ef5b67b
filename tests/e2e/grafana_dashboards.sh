#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# deploy/grafana: the dashboards are what make_dashboards.py writes, and they
# type-check against Grafana's dashboard schema (npm: @grafana/schema, with the
# TypeScript compiler, installed in deploy/check by scripts/setup.sh). That every
# panel's query returns data is checked by fleet_simulation (tools/fleet).
# Exit 77 (skipped) without python3, node or the installed packages.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$repo/deploy/grafana" "$tmp/grafana"
python3 "$tmp/grafana/make_dashboards.py"
diff -r "$repo/deploy/grafana/dashboards" "$tmp/grafana/dashboards" ||
  { echo "FAIL: deploy/grafana/dashboards differ from make_dashboards.py's output: run it" >&2; exit 1; }
command -v node >/dev/null 2>&1 || { echo "SKIP: node is not installed (Debian: nodejs)" >&2; exit 77; }
[[ -d "$repo/deploy/check/node_modules/@grafana/schema" ]] ||
  { echo "SKIP: deploy/check/node_modules missing (scripts/setup.sh runs npm ci there)" >&2; exit 77; }
node "$repo/deploy/check/check-grafana.mjs" "$repo"/deploy/grafana/dashboards/*.json
