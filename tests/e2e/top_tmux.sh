#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `gpulens top` in a real terminal: tmux runs it on a recording and capture-pane
# gives the screen. Golden screens at 80x24 (full and compact), 120x40 and 200x60; keys (help, sort,
# filter, quit); a resize redraws to the same screen as a fresh start at that size;
# NO_COLOR and a non-UTF-8 locale. GPULENS_UPDATE_GOLDEN=1 rewrites the goldens.
set -euo pipefail

bin=${GPULENS_BIN:?set GPULENS_BIN to the gpulens binary}
src=$(cd "$(dirname "$0")/../.." && pwd)
golden=$src/tests/golden
# 300 ticks in: GPU 0 busy and power-capped, GPU 1 waiting on it.
trace=$src/tests/fixtures/traces/multi-gpu-h200x2.trace.jsonl
command -v tmux >/dev/null || { echo "tmux is required (scripts/setup.sh installs it)" >&2; exit 1; }

sock=gpulens-top-test-$$
conf=$(mktemp)
echo 'set -g default-terminal "tmux-256color"' >"$conf"
t() { tmux -L "$sock" -f "$conf" "$@"; }
trap 't kill-server >/dev/null 2>&1 || true; rm -f "$conf"' EXIT
failures=0

# start NAME WIDTH HEIGHT [ENV=VALUE...] [-- TOP-ARGS...]
start() {
  local name=$1 w=$2 h=$3
  shift 3
  local envs=(TZ=UTC LANG=C.UTF-8 LC_ALL=C.UTF-8) args=()
  while (($#)) && [[ $1 != -- ]]; do envs+=("$1"); shift; done
  if (($#)); then shift; args=("$@"); fi
  t new-session -d -s "$name" -x "$w" -y "$h" \
    "env -u NO_COLOR ${envs[*]} $bin top --replay ${replay:-$trace} --speed 0 --count 300 ${args[*]}; sleep 30"
}

capture() { t capture-pane -p -t "$1" "${@:2}"; }

# Waits (up to 20 s: a loaded CI machine) until the pane shows TEXT.
wait_for() {
  local name=$1 text=$2
  for _ in $(seq 200); do
    if capture "$name" | grep -qF -- "$text"; then return 0; fi
    sleep 0.1
  done
  echo "FAIL: '$text' never appeared in $name; screen:" >&2
  capture "$name" >&2 || true
  return 1
}

# Waits until the pane no longer shows TEXT.
wait_gone() {
  local name=$1 text=$2
  for _ in $(seq 200); do
    if ! capture "$name" | grep -qF -- "$text"; then return 0; fi
    sleep 0.1
  done
  return 1
}

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

check_golden() {
  local name=$1 file=$golden/$2
  local got
  got=$(capture "$name")
  if [[ ${GPULENS_UPDATE_GOLDEN:-0} == 1 ]]; then
    printf '%s\n' "$got" >"$file"
    return
  fi
  if ! diff -u "$file" <(printf '%s\n' "$got") >&2; then fail "$name differs from $2"; fi
}

for size in 80x24 120x40 200x60; do
  start "g$size" "${size%x*}" "${size#*x}"
  wait_for "g$size" "end of recording"
  check_golden "g$size" "top-$size.txt"
done

# Compact view (c): one line per GPU, the words under them.
start compact 80 24
wait_for compact "end of recording"
t send-keys -t compact c
wait_for compact "SM ACT"
check_golden compact top-80x24-compact.txt

# Resize: the 80x24 screen grown to 200x60 reads as a fresh 200x60 start.
t resize-window -t g80x24 -x 200 -y 60
if [[ ${GPULENS_UPDATE_GOLDEN:-0} != 1 ]]; then
  for _ in $(seq 200); do
    [[ $(capture g80x24) == "$(cat "$golden/top-200x60.txt")" ]] && break
    sleep 0.1
  done
  diff -u "$golden/top-200x60.txt" <(capture g80x24) >&2 || fail "resized screen differs"
fi

# Keys.
start keys 120 40
wait_for keys "end of recording"
t send-keys -t keys '?'
wait_for keys "reverse the sort order"
t send-keys -t keys x
wait_for keys "COMMAND"
capture keys | grep -q "GPU-MEM▼" || fail "default sort is not device memory, descending"
t send-keys -t keys '>'
wait_for keys "SM%▼"
t send-keys -t keys r
wait_for keys "SM%▲"
t send-keys -t keys '/' p y t h
wait_for keys "filter: pyth_"
t send-keys -t keys Enter
wait_for keys "matching 'pyth'"
t send-keys -t keys '/' z z z z Enter
wait_for keys "no process matches the filter"
t send-keys -t keys Escape
wait_gone keys "matching" || fail "Escape did not clear the filter"
wait_for keys " 2 processes"
t send-keys -t keys q
# After q, gpulens has exited: the pane runs only the trailing sleep.
for _ in $(seq 100); do
  [[ $(t display-message -p -t keys '#{pane_current_command}') == sleep ]] && break
  sleep 0.1
done
[[ $(t display-message -p -t keys '#{pane_current_command}') == sleep ]] || fail "q did not quit"

# Signals: a replay signals nothing. The recording's first process is given the PID
# of a real one of ours (a sleep): T, K and I say why and ask nothing, and y after
# them sends nothing; the sleep lives on. (Live signals: tests/unit/cli/process_signal_test.cpp.)
sleep 300 &
victim=$!
replay=$(mktemp)
sed -e "s/\"pid\": 594,/\"pid\": $victim,/g" "$trace" >"$replay"
start signal 120 40
wait_for signal "end of recording"
t send-keys -t signal Down T
wait_for signal "replay: the processes are a recording's, not this machine's"
capture signal | grep -qF "? y/n" && fail "a replay asked to signal"
t send-keys -t signal y K y I y
sleep 0.5
capture signal | grep -qF "sent " && fail "a replay sent a signal"
kill -0 "$victim" 2>/dev/null || fail "a replay signalled PID $victim"
t send-keys -t signal '?'
wait_for signal "off: replay: the processes are a recording's"
kill "$victim" 2>/dev/null || true
rm -f "$replay"
unset replay

# A terminal that cannot move the cursor is refused with a pointer to --once.
start dumb 80 24 TERM=dumb
wait_for dumb "cannot move the cursor; use gpulens top --once"

# Colours: present by default, absent with NO_COLOR and on a monochrome terminal;
# ASCII in a non-UTF-8 locale.
start color 120 40
start nocolor 120 40 NO_COLOR=1
start ascii 120 40 LANG=C LC_ALL=C
start mono 120 40 TERM=vt100
for s in color nocolor ascii mono; do wait_for $s "end of recording"; done
sgr_colors='\[([0-9;]*;)?(3[0-7]|9[0-7]|38;5;[0-9]+)(;[0-9;]*)?m'
capture color -e | grep -Eq "$sgr_colors" || fail "no colours by default"
capture nocolor -e | grep -Eq "$sgr_colors" && fail "colours despite NO_COLOR"
capture nocolor -e | grep -q $'\e\[7m' || capture nocolor -e | grep -q $'\e\[1m' ||
  fail "NO_COLOR lost the bold/reverse attributes"
capture mono -e | grep -Eq "$sgr_colors" && fail "colours on a monochrome terminal (vt100)"
LC_ALL=C capture ascii | grep -q $'[\x80-\xff]' && fail "non-ASCII output in the C locale"
capture ascii | grep -q 'util   \[#' || fail "no ASCII bars in the C locale"

if ((failures)); then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "top tmux checks passed"
