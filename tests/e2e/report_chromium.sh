#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End to end: headless Chromium renders the HTML report of each reference
# recording. Fails on any console message or uncaught error, including those of
# the hover script (a probe copy of each page moves the mouse over every chart).
# Screenshots of the unmodified pages are kept in the output directory.
#
#   tests/e2e/report_chromium.sh [OUT_DIR]      (default: build/e2e-report)
#   GPULENS_BIN=build/release/gpulens tests/e2e/report_chromium.sh
#
# Reports "skipped" to ctest (exit 77, with a message) when Chromium is not installed: Debian's
# package is `chromium` (apt-get install -y chromium).
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/e2e/find_tools.sh

find_chromium
find_binary gpulens GPULENS_BIN

out=${1:-build/e2e-report}
mkdir -p "$out"
out=$(cd "$out" && pwd)
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT

# Moves the mouse across every hover chart and then says so; any error before
# that line fails the run.
probe='<script>(function(){var n=0;document.querySelectorAll("svg[data-hover]").forEach(function(s){var r=s.getBoundingClientRect();for(var i=0;i<=10;i++){s.dispatchEvent(new MouseEvent("mousemove",{clientX:r.left+r.width*i/10,clientY:r.top+r.height/2,bubbles:true}));n++;}s.dispatchEvent(new MouseEvent("mouseleave"));});console.log("gl-probe-ok "+n);})();</script>'

render() {  # page.html shot.png -> the browser's log
  timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --enable-logging=stderr --v=0 --hide-scrollbars --window-size=1400,2000 \
    --virtual-time-budget=3000 --screenshot="$2" "file://$1" 2>&1 || true
}

failed=0
for name in calibration-h100 training-h100 multi-gpu-h200x2; do
  page="$out/report-$name.html"
  trace="tests/fixtures/traces/$name.trace.jsonl"
  [[ $name == calibration-h100 ]] && trace="examples/$name.trace.jsonl"  # its one copy
  "$bin" report --lenient "$trace" -o "$page" 2>/dev/null
  log=$(render "$page" "$out/report-$name.png")
  probe_page="$out/probe-$name.html"
  sed "s#</body>#${probe//&/\\&}</body>#" "$page" >"$probe_page"
  probe_log=$(render "$probe_page" "$out/probe-$name.png")
  rm -f "$probe_page" "$out/probe-$name.png"
  # Our pages log nothing; the probe logs exactly its one line.
  errors=$(printf '%s\n%s\n' "$log" "$probe_log" | grep -E ':CONSOLE|Uncaught' | grep -v 'gl-probe-ok' || true)
  if [[ -n "$errors" ]]; then
    echo "report_chromium: $name: console output:" >&2
    echo "$errors" >&2
    failed=1
  elif ! grep -q 'gl-probe-ok [1-9]' <<<"$probe_log"; then
    echo "report_chromium: $name: the hover probe did not run (no charts, or the page failed)" >&2
    failed=1
  elif [[ ! -s "$out/report-$name.png" ]]; then
    echo "report_chromium: $name: no screenshot" >&2
    failed=1
  else
    echo "report_chromium: $name: ok ($(stat -c %s "$page") bytes; screenshot $out/report-$name.png)"
  fi
done
exit $failed
