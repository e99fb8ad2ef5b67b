#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Refreshes the vendored uPlot build (web/vendor/uplot) from the pinned npm
# package (package-lock.json). Only needed to upgrade uPlot: building gpulens
# embeds web/src and web/vendor at build time (web/embed.cmake, run by CMake)
# and needs neither node nor the network.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null; then
  echo "web/build.sh: npm is not installed (Debian: apt-get install npm)" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
mkdir -p vendor/uplot
cp node_modules/uplot/dist/uPlot.iife.min.js node_modules/uplot/dist/uPlot.min.css \
  node_modules/uplot/LICENSE vendor/uplot/
node -p 'require("./node_modules/uplot/package.json").version' >vendor/uplot/VERSION
echo "web/build.sh: vendored uPlot $(cat vendor/uplot/VERSION); rebuild gpulens to embed it"
