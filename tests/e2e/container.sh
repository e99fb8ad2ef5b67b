#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The container recipe (deploy/container). Usage: container.sh lint|build BUILD_DIR
#   lint: stage the context from this build, and check that every COPY source is
#         in it, the image is FROM scratch, its USER is numeric, not root, and in
#         the image's /etc/passwd, the ENTRYPOINT binary is copied, the staged
#         loader and libraries run the staged binaries on their own, and the
#         DaemonSet runs this image (name and tag, the agent's arguments).
#   build: build the image offline (deploy/container/build.sh, podman or buildah,
#         vfs storage in a scratch directory), check its user and entrypoint, and
#         run its exported files under chroot as that user (as root);
#         77 (skipped) when neither podman nor buildah is installed, or when it
#         cannot build even a one-file image here (the machine's limits, not the recipe).
set -euo pipefail
mode=$1
build=$(cd "$2" && pwd)
repo="$(cd "$(dirname "$0")/../.." && pwd)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-container.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
image="ghcr.io/gpulens/gpulens:$version"

if [[ $mode == build ]]; then
  tool=""
  for t in podman buildah; do command -v "$t" >/dev/null 2>&1 && { tool=$t; break; }; done
  [[ -n "$tool" ]] || { echo "SKIP: neither podman nor buildah is installed (Debian: podman)" >&2; exit 77; }
  export GPULENS_CONTAINER_STORAGE="$tmp/storage"
  store=(--root "$tmp/storage/root" --runroot "$tmp/storage/run" --storage-driver vfs)
  # Can this machine build an image at all (rootless without subuids, no chroot
  # rights in a sandbox)? A one-file FROM scratch image tells the machine's limits
  # apart from a broken recipe: only the first is a skip.
  mkdir -p "$tmp/probe" && echo probe >"$tmp/probe/file"
  printf 'FROM scratch\nCOPY file /file\n' >"$tmp/probe/Containerfile"
  probe_build=(bud)
  [[ $tool == podman ]] && probe_build=(build)
  if ! "$tool" "${store[@]}" "${probe_build[@]}" --isolation chroot --pull=never \
    -f "$tmp/probe/Containerfile" -t localhost/gpulens-probe "$tmp/probe" >"$tmp/probe.log" 2>&1; then
    tail -n 3 "$tmp/probe.log" >&2
    echo "SKIP: $tool cannot build even a one-file image on this machine" >&2
    exit 77
  fi
  "$repo/deploy/container/build.sh" "$build" "$image" >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log" >&2; fail "building the image with $tool"; }
  user=$("$tool" "${store[@]}" inspect --format '{{.Config.User}}' "$image" 2>/dev/null ||
    "$tool" "${store[@]}" inspect --format '{{.OCIv1.Config.User}}' "$image")
  entry=$("$tool" "${store[@]}" inspect --format '{{json .Config.Entrypoint}}' "$image" 2>/dev/null ||
    "$tool" "${store[@]}" inspect --format '{{json .OCIv1.Config.Entrypoint}}' "$image")
  [[ "$user" == 65532:65532 ]] || fail "the image's user is '$user'"
  [[ "$entry" == '["/usr/bin/gpulens-serve"]' ]] || fail "the image's entrypoint is $entry"
  echo "built $image with $tool: user $user, entrypoint $entry"
  # `podman run` needs what a sandboxed CI machine may refuse (crun's setrlimit, for
  # one); the image's own files, exported, run under chroot as its user instead:
  # its loader and libraries, its passwd, its tables and example, its history directory.
  [[ $(id -u) == 0 ]] || { echo "note: not root, so the image's files were not run under chroot"; exit 0; }
  fs="$tmp/rootfs"
  mkdir "$fs"
  container=$("$tool" "${store[@]}" create "$image")
  "$tool" "${store[@]}" export "$container" | tar -x -C "$fs"
  "$tool" "${store[@]}" rm "$container" >/dev/null
  in_image() { (cd / && chroot --userspec="$user" "$fs" "$@"); }
  [[ $(in_image /usr/bin/gpulens --version) == "gpulens $version" ]] || fail "gpulens --version in the image"
  report=$(in_image /usr/bin/gpulens report /usr/share/gpulens/examples/calibration-h100.trace.jsonl)
  grep -q "Cost at" <<<"$report" && grep -q "MFU (bf16" <<<"$report" || fail "no price or MFU in the image's report"
  # The entrypoint with the image's default history path, to the end of a replay.
  in_image /usr/bin/gpulens-serve --listen 127.0.0.1:0 --history /var/lib/gpulens/history.db \
    --replay /usr/share/gpulens/examples/calibration-h100.trace.jsonl --speed 0 --exit-at-end \
    >"$tmp/serve.log" 2>&1 || { cat "$tmp/serve.log" >&2; fail "gpulens-serve in the image"; }
  [[ -s "$fs/var/lib/gpulens/history.db" ]] || fail "the agent wrote no history as $user"
  echo "the image's files run as $user under chroot: version, report with price and MFU, the agent to the end of a replay with history"
  exit 0
fi

[[ $mode == lint ]] || fail "mode is lint or build, not $mode"
ctx="$tmp/ctx"
"$repo/deploy/container/stage.sh" "$build" "$ctx"
cf="$ctx/Containerfile"
problems=()
grep -qx 'FROM scratch' "$cf" || problems+=("not FROM scratch: nothing is to be pulled")
[[ $(grep -c '^FROM ' "$cf") == 1 ]] || problems+=("more than one FROM")
# COPY [--flag...] SRC... DEST: every SRC is in the staged context.
while read -r -a words; do
  srcs=()
  for w in "${words[@]:1}"; do [[ $w == --* ]] || srcs+=("$w"); done
  for src in "${srcs[@]:0:${#srcs[@]}-1}"; do
    [[ -e "$ctx/$src" ]] || problems+=("COPY source $src is not in the staged context")
  done
done < <(grep '^COPY ' "$cf")
user=$(sed -n 's/^USER //p' "$cf")
uid=${user%%:*}
[[ "$user" =~ ^[0-9]+:[0-9]+$ ]] || problems+=("USER '$user' is not numeric UID:GID")
[[ "$uid" != 0 ]] || problems+=("USER is root")
grep -q "^[a-z]*:x:$uid:${user#*:}:" "$ctx/rootfs/etc/passwd" || problems+=("no /etc/passwd entry for $user")
entry=$(sed -n 's/^ENTRYPOINT \["\([^"]*\)".*/\1/p' "$cf")
[[ $entry == /usr/bin/gpulens-serve ]] || problems+=("ENTRYPOINT is '$entry', not the agent")
grep -q "^COPY .*rootfs$entry .*$(dirname "$entry")/\$" "$cf" || problems+=("ENTRYPOINT $entry is not copied")
for f in gpu_peaks.json prices.json examples/calibration-h100.trace.jsonl; do
  [[ -f "$ctx/rootfs/usr/share/gpulens/$f" ]] || problems+=("usr/share/gpulens/$f is not staged")
done
# The staged loader runs the staged binaries with the staged libraries only.
loader=$(cd "$ctx/libs" && ls lib*/ld-linux*.so* | head -1)
libdirs=$(cd "$ctx/libs" && find . -name '*.so*' -printf '%h\n' | sort -u | sed "s|^\.|$ctx/libs|" | paste -sd:)
for bin in gpulens gpulens-serve; do
  ldd "$ctx/rootfs/usr/bin/$bin" | grep -q "not found" && problems+=("$bin: a library is missing on this machine")
done
out=$(env -i "$ctx/libs/$loader" --inhibit-cache --library-path "$libdirs" "$ctx/rootfs/usr/bin/gpulens" --version 2>&1) ||
  problems+=("the staged loader cannot run gpulens: $out")
[[ "$out" == "gpulens $version" ]] || problems+=("staged gpulens --version: $out")
env -i "$ctx/libs/$loader" --inhibit-cache --library-path "$libdirs" "$ctx/rootfs/usr/bin/gpulens-serve" --help >/dev/null 2>&1 ||
  problems+=("the staged loader cannot run gpulens-serve")
# The DaemonSet runs this image, with the agent's arguments (no 'serve': the
# entrypoint is gpulens-serve).
ds="$repo/deploy/kubernetes/base/daemonset.yaml"
grep -q "^ *image: $image\$" "$ds" || problems+=("the DaemonSet's image is not $image: $(grep 'image:' "$ds")")
first_arg=$(sed -n '/^ *args:/{n;p;q}' "$ds" | sed 's/^ *- *//')
[[ $first_arg == --* ]] || problems+=("the DaemonSet's first argument is '$first_arg': the entrypoint is already the agent")
if ((${#problems[@]})); then
  printf 'FAIL: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "recipe checks pass: $(grep -c '^COPY ' "$cf") COPY lines, USER $user, ENTRYPOINT $entry," \
  "$(find "$ctx/libs" -type f | wc -l) libraries staged, DaemonSet image $image"
