#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The .deb as a user gets it: CPack packs the build's binaries (cmake/install.cmake),
# dpkg -x unpacks it into a scratch root, and from another directory the installed
# gpulens prints its version and reports on the installed example with a price and
# MFU (the tables are built in; no data/ is near). Also checks what the install
# promises: the unit runs the installed binary, a man page per command, the
# completions, the docs; and builds the .rpm where rpmbuild is installed.
# Usage: package.sh BUILD_DIR. Exit 77 (skipped) only when a packaging tool is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
command -v dpkg-deb >/dev/null 2>&1 || { echo "SKIP: dpkg-deb is not installed (Debian: dpkg)" >&2; exit 77; }
command -v dpkg-shlibdeps >/dev/null 2>&1 ||
  { echo "SKIP: dpkg-shlibdeps is not installed (Debian: dpkg-dev)" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-package.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
prefix=$(sed -n 's/^set(CPACK_PACKAGING_INSTALL_PREFIX "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
[[ -n "$version" && -n "$prefix" ]] || fail "no version or prefix in $build/CPackConfig.cmake"

# No compression: the test checks the contents, not the archive, and xz or gzip
# of a debug build would be most of its time.
(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" \
  -D CPACK_DEBIAN_COMPRESSION_TYPE=none >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log" >&2; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/out/gpulens_*.deb)
echo "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB)"

field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == gpulens ]] || fail "Package is $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version is $(field Version), the project's is $version"
[[ -n $(field Maintainer) ]] || fail "no Maintainer"
[[ $(field Depends) == *libc6* ]] || fail "Depends does not name glibc: $(field Depends)"
[[ $(field Depends) != *nvidia* ]] || fail "NVML is the driver's, not a dependency: $(field Depends)"
echo "Depends: $(field Depends)"

root="$tmp/root"
dpkg -x "$deb" "$root"
p="$root$prefix"
for f in bin/gpulens bin/gpulens-serve share/gpulens/gpu_peaks.json share/gpulens/prices.json \
  share/gpulens/examples/calibration-h100.trace.jsonl lib/systemd/system/gpulens.service \
  share/doc/gpulens/README.md share/doc/gpulens/report.md \
  share/bash-completion/completions/gpulens share/bash-completion/completions/gpulens-serve \
  share/zsh/vendor-completions/_gpulens share/fish/vendor_completions.d/gpulens.fish; do
  [[ -e "$p/$f" ]] || fail "$prefix/$f is not in the package"
done
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

# A man page per command that the binary declares (its fish completion lists them).
if grep -q '^GPULENS_HELP2MAN:FILEPATH=/' "$build/CMakeCache.txt"; then
  [[ -e "$p/share/man/man1/gpulens.1.gz" || -e "$p/share/man/man1/gpulens.1" ]] || fail "no gpulens.1"
  for c in $(sed -n "s/^complete -c gpulens -n '__fish_use_subcommand' -f -a \([a-z]*\) .*/\1/p" \
    "$p/share/fish/vendor_completions.d/gpulens.fish"); do
    ls "$p/share/man/man1/gpulens-$c.1"* >/dev/null 2>&1 || fail "no man page for gpulens $c"
  done
  echo "man pages: $(ls "$p/share/man/man1" | tr '\n' ' ')"
else
  echo "note: this build has no help2man, so no man pages to check"
fi

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

# The .rpm, where Debian's rpm package provides rpmbuild.
if command -v rpmbuild >/dev/null 2>&1; then
  (cd "$tmp" && cpack -G RPM --config "$build/CPackConfig.cmake" -B "$tmp/rpm" >"$tmp/rpm.log" 2>&1) ||
    { cat "$tmp/rpm.log" >&2; fail "cpack -G RPM"; }
  rpm=$(ls "$tmp"/rpm/gpulens-*.rpm)
  echo "built $(basename "$rpm")"
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
