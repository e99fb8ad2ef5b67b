#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the gpulens image offline from a build directory (no base image to pull):
# stages the context (stage.sh) and runs podman or buildah on it.
# Usage: deploy/container/build.sh BUILD_DIR [IMAGE]
#   IMAGE defaults to ghcr.io/gpulens/gpulens:VERSION, the DaemonSet's image.
# GPULENS_CONTAINER_STORAGE=DIR keeps the image store in DIR (vfs driver, chroot
# isolation: no overlay, no user namespaces needed), for machines without a
# configured container setup, like CI.
set -euo pipefail
build=$(cd "$1" && pwd)
here="$(cd "$(dirname "$0")" && pwd)"
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
image=${2:-ghcr.io/gpulens/gpulens:$version}
ctx=$(mktemp -d "${TMPDIR:-/tmp}/gpulens-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
"$here/stage.sh" "$build" "$ctx"
store=()
if [[ -n "${GPULENS_CONTAINER_STORAGE:-}" ]]; then
  store=(--root "$GPULENS_CONTAINER_STORAGE/root" --runroot "$GPULENS_CONTAINER_STORAGE/run"
    --storage-driver vfs)
fi
if command -v podman >/dev/null 2>&1; then
  podman "${store[@]}" build --isolation chroot --pull=never -f "$ctx/Containerfile" -t "$image" "$ctx"
elif command -v buildah >/dev/null 2>&1; then
  buildah "${store[@]}" bud --isolation chroot --pull=never -f "$ctx/Containerfile" -t "$image" "$ctx"
else
  echo "build.sh: neither podman nor buildah is installed (Debian: apt-get install podman)" >&2
  exit 2
fi
echo "built $image"
