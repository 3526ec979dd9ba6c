#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build-image.sh — builds the stagd container image with no registry at all
# (docs/deploy.md "Container image"):
#   1. a Debian 12 base image from the Debian mirror with mmdebstrap, imported with
#      buildah as localhost/stagd-base:bookworm (made once; --rebuild-base remakes it);
#   2. deploy/Containerfile (build stage: the Debian toolchain and cpack; runtime stage:
#      the .deb and the variant's Vulkan driver) built with buildah from the files git
#      knows in this checkout, tagged localhost/stagd:VARIANT.
# Usage: deploy/build-image.sh [--variant lavapipe|mesa|nvidia] [--tag NAME] [--rebuild-base]
# Needs root (or a user with subuids), mmdebstrap, buildah and runc (Debian packages).
# Inside restricted sandboxes the container runtime needs --ulimit nofile=1024:4096 and
# the host's network; both are passed. DEBIAN_MIRROR overrides the mirror.
set -euo pipefail
cd "$(dirname "$0")/.."
variant=lavapipe tag= rebuild=0
while [ $# -gt 0 ]; do
  case "$1" in
    --variant) variant=$2; shift ;;
    --tag) tag=$2; shift ;;
    --rebuild-base) rebuild=1 ;;
    *) echo "usage: deploy/build-image.sh [--variant lavapipe|mesa|nvidia] [--tag NAME] [--rebuild-base]" >&2; exit 2 ;;
  esac
  shift
done
case "$variant" in lavapipe|mesa|nvidia) ;; *) echo "build-image.sh: unknown variant '$variant'" >&2; exit 2 ;; esac
tag=${tag:-localhost/stagd:$variant}
for tool in mmdebstrap buildah runc git; do
  command -v "$tool" >/dev/null || { echo "build-image.sh: $tool is not installed (apt-get install $tool)" >&2; exit 2; }
done

base=localhost/stagd-base:bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$rebuild" = 1 ] || ! buildah inspect --type image "$base" >/dev/null 2>&1; then
  echo "== base image $base (mmdebstrap, $mirror)"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/*' bookworm "$work/base.tar" \
    "deb $mirror bookworm main" "deb $mirror bookworm-updates main" "deb $security bookworm-security main"
  ctr=$(buildah from scratch)
  buildah add --quiet "$ctr" "$work/base.tar" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd /bin/bash --label org.opencontainers.image.description="Debian 12 (mmdebstrap)" "$ctr"
  buildah commit --quiet --rm "$ctr" "$base" >/dev/null
  rm -f "$work/base.tar"
fi

echo "== image $tag (deploy/Containerfile, variant $variant)"
mkdir "$work/context"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | xargs -0 cp --parents -t "$work/context"
buildah bud --quiet --format docker --layers --network host --ulimit nofile=1024:4096 \
  --build-arg BASE="$base" --build-arg VARIANT="$variant" \
  -f deploy/Containerfile -t "$tag" "$work/context" >/dev/null
echo "$tag"
