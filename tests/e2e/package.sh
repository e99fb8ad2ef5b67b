#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The .deb as a user gets it: CPack packs the build's binaries (cmake/install.cmake),
# dpkg -x unpacks it into a scratch root, and from another directory the installed
# gpulens prints its version and reports on the installed example with a price and
# MFU (the tables are built in; no data/ is near). Also checks what the install
# promises: the package installs under /usr whatever the build's install prefix, the
# unit runs the installed binary, the help names the installed example, `run
# --kernels` finds the injection library in lib/gpulens, a man page per command,
# the completions, the docs and Debian's copyright and changelog; Depends names the
# newest glibc the packaged binaries need; the copyright file gives Apache-2.0;
# lintian finds no error and no warning; dpkg installs it over an older version (in a
# scratch --instdir, no chroot) and leaves the user's /etc/gpulens and history; the
# maintainer scripts, with systemctl and deb-systemd-* stubbed, enable and start
# the agent on install, restart it on upgrade, stop it on remove, leave no Python
# bytecode behind, keep a hand-copied unit and a hand-written /etc/default/gpulens
# (a conffile) and, on purge, the history unless asked; `cmake --install
# --prefix` elsewhere gets its own paths; and builds the .rpm where rpmbuild is
# installed.
# Usage: package.sh BUILD_DIR. Exit 77 (skipped) only when a packaging tool is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
command -v dpkg-deb >/dev/null 2>&1 || { echo "SKIP: dpkg-deb is not installed (Debian: dpkg)" >&2; exit 77; }
command -v dpkg-shlibdeps >/dev/null 2>&1 ||
  { echo "SKIP: dpkg-shlibdeps is not installed (Debian: dpkg-dev)" >&2; exit 77; }
command -v lintian >/dev/null 2>&1 ||
  { echo "FAIL: lintian is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
prefix=$(sed -n 's/^set(CPACK_PACKAGING_INSTALL_PREFIX "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
[[ -n "$version" && -n "$prefix" ]] || fail "no version or prefix in $build/CPackConfig.cmake"
# Packages go under /usr, whatever prefix `cmake --install` has (/usr/local here).
[[ $prefix == /usr ]] || fail "the packages install under $prefix, not /usr"

# Compressed as shipped: lintian judges the archive too.
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/out/gpulens_*.deb)
echo "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == gpulens ]] || fail "Package is $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version is $(field Version), the project's is $version"
[[ -n $(field Maintainer) ]] || fail "no Maintainer"
[[ $(field Depends) != *nvidia* ]] || fail "NVML is the driver's, not a dependency: $(field Depends)"
echo "Depends: $(field Depends)"

root="$tmp/root"
dpkg -x "$deb" "$root"
p="$root$prefix"
for f in bin/gpulens bin/gpulens-serve share/gpulens/gpu_peaks.json share/gpulens/prices.json \
  share/gpulens/examples/calibration-h100.trace.jsonl share/gpulens/gpulens_marks.py \
  share/gpulens/slurm/gpulens-epilog.sh share/gpulens/slurm/gpulens-prolog.sh \
  share/gpulens/slurm/gpulens-task-prolog.sh lib/gpulens/libgpulens_launches.so \
  lib/systemd/system/gpulens.service share/doc/gpulens/README.md share/doc/gpulens/report.md \
  share/doc/gpulens/copyright share/doc/gpulens/changelog.gz \
  share/bash-completion/completions/gpulens share/bash-completion/completions/gpulens-serve \
  share/zsh/vendor-completions/_gpulens share/fish/vendor_completions.d/gpulens.fish; do
  [[ -e "$p/$f" ]] || fail "$prefix/$f is not in the package"
done
[[ -f "$root/etc/default/gpulens" ]] || fail "/etc/default/gpulens is not in the package"
# The injection library of `gpulens run --kernels`, where this build made one.
kernels_lib=''
if [[ -e "$build/libgpulens_kernels.so" ]]; then
  kernels_lib="$p/lib/gpulens/libgpulens_kernels.so"
  [[ -f $kernels_lib ]] || fail "$prefix/lib/gpulens/libgpulens_kernels.so is not in the package"
  [[ ! -e "$p/bin/libgpulens_kernels.so" ]] || fail "the injection library is still in bin/"
fi
# The Python package, where the source tree has one, with its shared table; and
# the same package as a wheel for the user's own Python, importable as it is
# (a pure-Python wheel is a zip on sys.path), of the package's version.
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
for py in "$src"/python/gpulens/*.py "$src"/python/gpulens/*.json; do
  [[ -e $py ]] || continue
  [[ -f "$p/lib/python3/dist-packages/gpulens/$(basename "$py")" ]] ||
    fail "$prefix/lib/python3/dist-packages/gpulens/$(basename "$py") is not in the package"
done
if [[ -d "$src/python/gpulens" ]]; then
  wheel="$p/share/gpulens/gpulens-$version-py3-none-any.whl"
  [[ -f $wheel ]] || fail "$prefix/share/gpulens/gpulens-$version-py3-none-any.whl is not in the package"
  got=$(cd "$tmp" && python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import gpulens; print(gpulens.__version__, len(gpulens.METRICS))" "$wheel") ||
    fail "the packaged wheel does not import"
  [[ $got == "$version "* ]] || fail "the packaged wheel says: $got"
fi
grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
  "$p/share/doc/gpulens/copyright" || fail "the copyright file is not machine-readable (DEP-5)"
# The licence in the .deb's metadata: gpulens' own files are Apache-2.0, and the
# licence's text is there.
copyright="$p/share/doc/gpulens/copyright"
[[ $(awk '/^Files: \*$/ {f=1; next} f && /^License:/ {print $2; exit}' "$copyright") == Apache-2.0 ]] ||
  fail "the copyright file does not give Files: * the License Apache-2.0"
grep -qx 'License: Apache-2.0' "$copyright" && grep -q 'Apache License, Version 2.0' "$copyright" ||
  fail "the copyright file lacks the Apache-2.0 licence paragraph"
[[ $(gzip -dc "$p/share/doc/gpulens/changelog.gz" | head -1) == "gpulens ($version) "* ]] ||
  fail "the changelog's first entry is not $version"

# Depends: glibc no older than the newest GLIBC_ version any packaged ELF file
# needs, and (a static build, held to its floor) exactly that: not the 2.34 that
# dpkg-shlibdeps would say from symbol names.
newest=''
while IFS= read -r -d '' f; do
  readelf -h "$f" >/dev/null 2>&1 || continue
  v=$( (objdump -T "$f"; readelf -V "$f") 2>/dev/null | grep -o 'GLIBC_2\.[0-9][0-9.]*' | sort -uV | tail -1)
  [[ -n $v ]] && newest=$(printf '%s\n%s\n' "$newest" "${v#GLIBC_}" | sed '/^$/d' | sort -V | tail -1)
done < <(find "$root" -type f -print0)
[[ -n $newest ]] || fail "no GLIBC_ version read from the packaged binaries"
libc_dep=$(field Depends | grep -o 'libc6 (>= [0-9.]*)' || true)
[[ -n $libc_dep ]] || fail "Depends does not name glibc: $(field Depends)"
declared=${libc_dep#libc6 (>= }
declared=${declared%)}
if grep -q '^GPULENS_STATIC:BOOL=ON' "$build/CMakeCache.txt"; then
  [[ $(field Depends) == "libc6 (>= $newest)" ]] ||
    fail "Depends is '$(field Depends)'; the packaged binaries need glibc $newest and nothing else"
else
  [[ $(printf '%s\n%s\n' "$newest" "$declared" | sort -V | tail -1) == "$declared" ]] ||
    fail "Depends declares glibc $declared; the packaged binaries need $newest"
fi
echo "the packaged binaries need glibc $newest; Depends: $(field Depends)"

# lintian: no errors and no warnings (the notes it gives are listed in docs/install.md).
lintian --fail-on error,warning "$deb" >"$tmp/lintian.log" 2>&1 ||
  { cat "$tmp/lintian.log" >&2; fail "lintian reports errors or warnings"; }
echo "lintian: $(grep -c '^E:' "$tmp/lintian.log" || true) errors, $(grep -c '^W:' "$tmp/lintian.log" || true) warnings"
sed 's/^/  /' "$tmp/lintian.log"

grep -q "^ExecStart=$prefix/bin/gpulens serve " "$p/lib/systemd/system/gpulens.service" ||
  fail "the unit's ExecStart is not $prefix/bin/gpulens: $(grep ^ExecStart "$p/lib/systemd/system/gpulens.service")"

# The completion scripts parse in their shells (where those shells are installed).
bash -n "$p/share/bash-completion/completions/gpulens" || fail "the bash completion does not parse"
if command -v zsh >/dev/null 2>&1; then
  zsh -n "$p/share/zsh/vendor-completions/_gpulens" || fail "the zsh completion does not parse"
fi
if command -v fish >/dev/null 2>&1; then
  fish --no-execute "$p/share/fish/vendor_completions.d/gpulens.fish" || fail "the fish completion does not parse"
  got=$(fish -c "source '$p/share/fish/vendor_completions.d/gpulens.fish'; complete -C 'gpulens report --data'")
  [[ $got == --data-dir* ]] || fail "fish completes 'gpulens report --data' as: $got"
fi

# A man page per command that the binary declares (its fish completion lists them),
# gzipped as Debian wants (CPack installs files as they are: cmake/man.cmake gzips),
# with this prefix's example path filled in.
man1="$p/share/man/man1"
[[ -e "$man1/gpulens.1.gz" ]] || fail "no gpulens.1.gz"
for c in $(sed -n "s/^complete -c gpulens -n '__fish_use_subcommand' -f -a \([a-z]*\) .*/\1/p" \
  "$p/share/fish/vendor_completions.d/gpulens.fish"); do
  [[ -e "$man1/gpulens-$c.1.gz" ]] || fail "no man page for gpulens $c"
done
for page in "$man1"/*; do
  [[ $page == *.1.gz ]] || fail "$(basename "$page") in man1 is not a gzipped page"
  gzip -t "$page" || fail "$(basename "$page") is not a whole gzip file"
  zgrep -q '^\.SH NAME' "$page" || fail "$(basename "$page") has no NAME section"
done
zgrep -qF -- "$prefix/share/gpulens/examples/calibration" "$man1/gpulens.1.gz" ||
  fail "gpulens.1 does not name the installed example under $prefix"
echo "man pages: $(ls "$man1" | tr '\n' ' ')"

# Run from elsewhere, with nothing pointing at data files.
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
unset GPULENS_DATA_DIR
out=$("$p/bin/gpulens" --version)
[[ "$out" == "gpulens $version" ]] || fail "--version says: $out"
echo "$out"
example="$p/share/gpulens/examples/calibration-h100.trace.jsonl"
help=$("$p/bin/gpulens" --help)
grep -qF -- "--replay $example" <<<"$help" ||
  fail "--help does not point at the installed example $example"
"$p/bin/gpulens" report "$example" >report.txt 2>report.err || { cat report.err >&2; fail "gpulens report"; }
! grep -q "not found" report.txt report.err || fail "a table was not found: $(grep "not found" report.txt report.err)"
grep -q "Cost at \$[0-9.]* per GPU-hour" report.txt || fail "no price in the report"
grep -q "MFU (bf16 dense peak" report.txt || fail "no MFU in the report"
grep -E "Cost at|MFU \(" report.txt

# `gpulens run --kernels` of the package finds its injection library in lib/gpulens
# and hands it to the job (which prints what it got).
if [[ -n $kernels_lib ]]; then
  got=$(env -u CUDA_INJECTION64_PATH -u GPULENS_KERNELS_LIB "$p/bin/gpulens" run --kernels -q \
    --replay "$example" --speed 0 -o kernels.json -- sh -c 'echo "[$CUDA_INJECTION64_PATH]"' 2>/dev/null)
  [[ $got == "[$(readlink -f "$kernels_lib")]" ]] ||
    fail "the packaged gpulens run --kernels gave the job '$got', not $kernels_lib"
  echo "run --kernels injects $prefix/lib/gpulens/libgpulens_kernels.so"
fi

# dpkg installs the package over an older version: into a scratch --instdir with
# its own --admindir (no chroot, no root needed; glibc is not in that database,
# hence --force-depends). The older one is this package with a lower version.
dpkg_root="$tmp/dpkg-root"
mkdir -p "$dpkg_root/admin/info" "$dpkg_root/admin/updates" "$dpkg_root/admin/triggers" "$dpkg_root/inst"
touch "$dpkg_root/admin/status"
dpkg-deb -R "$deb" "$tmp/older"
sed -i "s/^Version: .*/Version: 0.0.1/" "$tmp/older/DEBIAN/control"
echo "a file the newer version no longer ships" >"$tmp/older$prefix/share/gpulens/obsolete.txt"
dpkg-deb -Znone -b "$tmp/older" "$tmp/older.deb" >/dev/null
# The maintainer scripts run chrootless (DPKG_ROOT is the scratch root) with
# systemctl, deb-systemd-helper and deb-systemd-invoke stubbed: each call is logged,
# nothing reaches this machine's systemd. The scratch root's /run/systemd/system
# says "systemd runs there", which the scripts ask before starting or stopping.
stubs="$tmp/stubs"
mkdir -p "$stubs" "$dpkg_root/inst/run/systemd/system"
for tool in systemctl deb-systemd-helper deb-systemd-invoke; do
  printf '#!/bin/sh\necho "%s $*" >>"$GPULENS_STUB_LOG"\nexit 0\n' "$tool" >"$stubs/$tool"
  chmod +x "$stubs/$tool"
done
export GPULENS_STUB_LOG="$tmp/systemd-calls.log"
dpkg_scratch() {
  PATH="$stubs:$PATH" dpkg --instdir="$dpkg_root/inst" --admindir="$dpkg_root/admin" --force-not-root \
    --force-depends --force-script-chrootless --no-triggers "$@"
}
# What the scripts asked of systemd since the last look.
calls() { cat "$GPULENS_STUB_LOG" 2>/dev/null; : >"$GPULENS_STUB_LOG"; }
expect_call() { grep -qxF "$1" <<<"$2" || fail "$3: no '$1' among the calls: $(tr '\n' ';' <<<"$2")"; }
# Bad input first: a unit copied by hand from older instructions, and an
# /etc/default/gpulens written before the package came. The package must leave
# both as they are (dpkg asks about a conffile that differs; --force-confold is
# the answer "keep mine").
mkdir -p "$dpkg_root/inst/etc/systemd/system" "$dpkg_root/inst/etc/default"
printf '[Service]\nExecStart=/usr/local/bin/gpulens serve --listen :9999\n' \
  >"$dpkg_root/inst/etc/systemd/system/gpulens.service"
printf 'ARGS="--listen :9401 --web-config /etc/gpulens/web.yml"  # mine\n' >"$dpkg_root/inst/etc/default/gpulens"
cp "$dpkg_root/inst/etc/systemd/system/gpulens.service" "$tmp/user-unit"
cp "$dpkg_root/inst/etc/default/gpulens" "$tmp/user-default"
dpkg_scratch --force-confold -i "$tmp/older.deb" >"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i of the older package"; }
got=$(calls)
expect_call "deb-systemd-helper enable gpulens.service" "$got" "first install"
expect_call "systemctl --system daemon-reload" "$got" "first install"
expect_call "deb-systemd-invoke start gpulens.service" "$got" "first install"
grep -q "overrides the packaged unit" "$tmp/dpkg.log" || fail "postinst does not say that the hand-copied unit wins"
cmp -s "$tmp/user-default" "$dpkg_root/inst/etc/default/gpulens" || fail "the first install replaced the user's /etc/default/gpulens"
cmp -s "$root/etc/default/gpulens" "$dpkg_root/inst/etc/default/gpulens.dpkg-dist" ||
  fail "the package's /etc/default/gpulens is not beside the user's as .dpkg-dist"
grep -qx /etc/default/gpulens "$dpkg_root/admin/info/gpulens.conffiles" || fail "/etc/default/gpulens is not a conffile"
# What the user made meanwhile: a configuration and the agent's history, where the
# unit keeps them (ConfigurationDirectory, StateDirectory). The package ships neither
# path, so an upgrade must leave both byte for byte.
mkdir -p "$dpkg_root/inst/etc/gpulens" "$dpkg_root/inst/var/lib/gpulens"
printf 'price_per_gpu_hour = 1.23\n' >"$dpkg_root/inst/etc/gpulens/config.toml"
printf '{"about": "the prices of this site"}\n' >"$dpkg_root/inst/etc/gpulens/prices.json"  # --data-dir's
head -c 65536 /dev/urandom >"$dpkg_root/inst/var/lib/gpulens/history.db"
mkdir -p "$tmp/user-files/etc" "$tmp/user-files/var/lib"
cp -a "$dpkg_root/inst/etc/gpulens" "$tmp/user-files/etc/"
cp -a "$dpkg_root/inst/var/lib/gpulens" "$tmp/user-files/var/lib/"
# No --force-confold: the conffile is the same in both versions, so dpkg keeps the
# user's without asking.
dpkg_scratch -i "$deb" >>"$tmp/dpkg.log" 2>&1 </dev/null || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i over the older package"; }
got=$(calls)
expect_call "deb-systemd-invoke restart gpulens.service" "$got" "upgrade"
! grep -q "invoke stop" <<<"$got" || fail "the upgrade stopped the agent instead of restarting it"
cmp -s "$tmp/user-default" "$dpkg_root/inst/etc/default/gpulens" || fail "the upgrade replaced the user's /etc/default/gpulens"
cmp -s "$tmp/user-unit" "$dpkg_root/inst/etc/systemd/system/gpulens.service" || fail "the upgrade changed the user's unit"
unit_in="$dpkg_root/inst$prefix/lib/systemd/system/gpulens.service"
grep -qx 'EnvironmentFile=-/etc/default/gpulens' "$unit_in" || fail "the unit does not read /etc/default/gpulens"
grep -qx "ExecStart=$prefix/bin/gpulens serve \$ARGS" "$unit_in" || fail "the unit's ExecStart does not pass \$ARGS"
# The default file as shipped is what the unit runs without it.
shipped=$(sed -n 's/^ARGS="\(.*\)"$/\1/p' "$root/etc/default/gpulens")
grep -qxF "Environment=\"ARGS=$shipped\"" "$unit_in" || fail "the unit's default ARGS is not /etc/default/gpulens' ($shipped)"
[[ $(dpkg_scratch -s gpulens | sed -n 's/^Version: //p') == "$version" ]] ||
  fail "after the upgrade dpkg knows gpulens as: $(dpkg_scratch -s gpulens | grep ^Version)"
[[ $("$dpkg_root/inst$prefix/bin/gpulens" --version) == "gpulens $version" ]] || fail "the upgraded gpulens --version"
[[ ! -e "$dpkg_root/inst$prefix/share/gpulens/obsolete.txt" ]] || fail "the upgrade left the older version's file"
for d in etc/gpulens var/lib/gpulens; do
  diff -r "$tmp/user-files/$d" "$dpkg_root/inst/$d" >&2 || fail "the upgrade changed the user's /$d"
done
echo "dpkg -i over 0.0.1 (scratch --instdir): gpulens $version installed, /etc/gpulens and /var/lib/gpulens as they were"

# Remove: the agent stopped, the unit masked while removed; Python's bytecode (as
# `import gpulens` run by root leaves it) goes, so no empty `gpulens` directory is
# left to import as a namespace package; the user's files stay.
dist="$dpkg_root/inst$prefix/lib/python3/dist-packages"
if [[ -d $dist/gpulens ]] && command -v python3 >/dev/null 2>&1; then
  python3 -m compileall -q "$dist/gpulens" >/dev/null
  [[ -d $dist/gpulens/__pycache__ ]] || fail "compileall wrote no __pycache__ (the remove check would prove nothing)"
fi
dpkg_scratch -r gpulens >>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg -r"; }
got=$(calls)
expect_call "deb-systemd-invoke stop gpulens.service" "$got" "remove"
expect_call "deb-systemd-helper mask gpulens.service" "$got" "remove"
[[ ! -e "$dist/gpulens" ]] || fail "dpkg -r left $(find "$dist/gpulens" | tr '\n' ' ')"
if command -v python3 >/dev/null 2>&1; then
  ! python3 -c "import sys; sys.path[:0] = ['$dist']; import gpulens; print(gpulens)" 2>/dev/null ||
    fail "after dpkg -r, 'import gpulens' still succeeds"
fi
cmp -s "$tmp/user-default" "$dpkg_root/inst/etc/default/gpulens" || fail "dpkg -r removed the user's /etc/default/gpulens"
for d in etc/gpulens var/lib/gpulens; do
  diff -r "$tmp/user-files/$d" "$dpkg_root/inst/$d" >&2 || fail "dpkg -r changed the user's /$d"
done
# Purge: dpkg removes the conffile, the scripts drop the unit's state; the user's
# /etc/gpulens (not empty) and the history stay, and the purge says where.
dpkg_scratch --purge gpulens >>"$tmp/dpkg.log" 2>"$tmp/purge.log" || { cat "$tmp/purge.log" >&2; fail "dpkg --purge"; }
got=$(calls)
expect_call "deb-systemd-helper purge gpulens.service" "$got" "purge"
[[ ! -e "$dpkg_root/inst/etc/default/gpulens" ]] || fail "the purge left /etc/default/gpulens"
for d in etc/gpulens var/lib/gpulens; do
  diff -r "$tmp/user-files/$d" "$dpkg_root/inst/$d" >&2 || fail "the purge changed the user's /$d"
done
grep -q "history is kept in /var/lib/gpulens" "$tmp/purge.log" || fail "the purge does not say where the history stays"
cmp -s "$tmp/user-unit" "$dpkg_root/inst/etc/systemd/system/gpulens.service" || fail "the purge changed the user's unit"
# Asked to, the purge removes the history too (and an /etc/gpulens left empty).
dpkg_scratch -i "$deb" >>"$tmp/dpkg.log" 2>&1 </dev/null || { cat "$tmp/dpkg.log" >&2; fail "dpkg -i after the purge"; }
rm -f "$dpkg_root/inst"/etc/gpulens/*
GPULENS_PURGE_HISTORY=yes dpkg_scratch --purge gpulens >>"$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log" >&2; fail "dpkg --purge"; }
[[ ! -e "$dpkg_root/inst/var/lib/gpulens" ]] || fail "GPULENS_PURGE_HISTORY=yes: the purge left /var/lib/gpulens"
[[ ! -e "$dpkg_root/inst/etc/gpulens" ]] || fail "the purge left an empty /etc/gpulens"
calls >/dev/null
echo "maintainer scripts: enable+start on install, restart on upgrade, stop+mask on remove, purge keeps the history unless asked; the user's unit and /etc/default/gpulens kept"

# `cmake --install` keeps its own prefix: the unit runs that prefix's binary, the
# help names that prefix's example, the injection library is in its lib/gpulens.
local_prefix="$tmp/local prefix"
cmake --install "$build" --prefix "$local_prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install --prefix"; }
grep -qF "ExecStart=$local_prefix/bin/gpulens serve " "$local_prefix/lib/systemd/system/gpulens.service" ||
  fail "cmake --install's unit: $(grep ^ExecStart "$local_prefix/lib/systemd/system/gpulens.service")"
grep -qF -- "--replay $local_prefix/share/gpulens/examples/calibration-h100.trace.jsonl" \
  <<<"$("$local_prefix/bin/gpulens" --help)" || fail "cmake --install's --help does not name its example"
if [[ -n $kernels_lib ]]; then
  [[ -f "$local_prefix/lib/gpulens/libgpulens_kernels.so" ]] || fail "cmake --install: no lib/gpulens/libgpulens_kernels.so"
fi
echo "cmake --install --prefix: unit, help and library under that prefix"

# The .rpm, where Debian's rpm package provides rpmbuild.
if command -v rpmbuild >/dev/null 2>&1; then
  (cd "$tmp" && cpack -G RPM --config "$build/CPackConfig.cmake" -B "$tmp/rpm" >"$tmp/rpm.log" 2>&1) ||
    { cat "$tmp/rpm.log" >&2; fail "cpack -G RPM"; }
  rpm=$(ls "$tmp"/rpm/gpulens-*.rpm)
  echo "built $(basename "$rpm")"
  rpm_license=$(rpm -qp --queryformat '%{LICENSE}' "$rpm" 2>/dev/null)
  [[ $rpm_license == Apache-2.0 ]] || fail "the .rpm's License is '$rpm_license', not Apache-2.0"
  rpm_prefix_files=$(rpm -qlp "$rpm" 2>/dev/null | grep -c "^$prefix/bin/gpulens$" || true)
  [[ $rpm_prefix_files == 1 ]] || fail "the .rpm does not install $prefix/bin/gpulens"
  rpm -qcp "$rpm" 2>/dev/null | grep -qx /etc/default/gpulens ||
    fail "the .rpm does not mark /etc/default/gpulens as a configuration file"
  if command -v rpm2cpio >/dev/null 2>&1 && command -v cpio >/dev/null 2>&1; then
    mkdir "$tmp/rpmroot"
    (cd "$tmp/rpmroot" && rpm2cpio "$rpm" | cpio -idm --quiet)
    [[ $("$tmp/rpmroot$prefix/bin/gpulens" --version) == "gpulens $version" ]] || fail "the .rpm's gpulens --version"
    rpm_report=$("$tmp/rpmroot$prefix/bin/gpulens" report "$tmp/rpmroot$prefix/share/gpulens/examples/calibration-h100.trace.jsonl")
    grep -q "MFU (bf16" <<<"$rpm_report" || fail "the .rpm's gpulens report has no MFU"
    grep -q "Cost at" <<<"$rpm_report" || fail "the .rpm's gpulens report has no price"
    echo "the .rpm unpacks (rpm2cpio) and its gpulens reports with price and MFU"
  fi
else
  echo "note: rpmbuild is not installed (Debian: rpm), so no .rpm"
fi
echo "package test passed"
