#!/usr/bin/env bash
# Builds the dashboard: installs the pinned npm packages (package-lock.json) and
# embeds the bundle into src/exposition/web_assets_data.cpp, which is committed so
# that building gpulens itself needs neither node nor the network.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v npm >/dev/null; then
  echo "web/build.sh: npm is not installed (Debian: apt-get install npm)" >&2
  exit 1
fi
npm ci --no-audit --no-fund --loglevel=error
node scripts/embed.mjs
