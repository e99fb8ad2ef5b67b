#!/usr/bin/env bash
# The container recipe (deploy/container). Usage: container.sh lint|build BUILD_DIR
#   lint: stage the context from this build, and check that every COPY source is
#         in it, the image is FROM scratch, its USER is numeric, not root, and in
#         the image's /etc/passwd, the ENTRYPOINT binary is copied, the staged
#         loader and libraries run the staged binaries on their own, and the
#         DaemonSet runs this image (name and tag, the agent's arguments).
#   build: build the image offline (deploy/container/build.sh, podman or buildah,
#         vfs storage in a scratch directory) and check its user and entrypoint;
#         77 (skipped) when neither podman nor buildah is installed.
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
  "$repo/deploy/container/build.sh" "$build" "$image" >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log" >&2; fail "building the image with $tool"; }
  store=(--root "$tmp/storage/root" --runroot "$tmp/storage/run" --storage-driver vfs)
  user=$("$tool" "${store[@]}" inspect --format '{{.Config.User}}' "$image" 2>/dev/null ||
    "$tool" "${store[@]}" inspect --format '{{.OCIv1.Config.User}}' "$image")
  entry=$("$tool" "${store[@]}" inspect --format '{{json .Config.Entrypoint}}' "$image" 2>/dev/null ||
    "$tool" "${store[@]}" inspect --format '{{json .OCIv1.Config.Entrypoint}}' "$image")
  [[ "$user" == 65532:65532 ]] || fail "the image's user is '$user'"
  [[ "$entry" == '["/usr/bin/gpulens-serve"]' ]] || fail "the image's entrypoint is $entry"
  echo "built $image with $tool: user $user, entrypoint $entry"
  # Running it needs a container runtime that this machine may not allow; the
  # build and the lint's run of the staged binaries are what is checked here.
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
