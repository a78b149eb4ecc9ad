#!/usr/bin/env bash
# Builds the Parallex container image from the project's Debian package, with
# podman, on a machine that reaches no container registry: the base image is
# made here from the Debian archive (mmdebstrap, minbase) and imported.
#
#   packaging/container/build-image.sh [--deb FILE] [--tag TAG] [--rebuild-base]
#
#   --deb FILE      the parallex package (default build/packages/parallex_*.deb,
#                   which scripts/package.sh makes)
#   --tag TAG       the image's name (default localhost/parallex:latest, the image
#                   `parallex kube` renders its Pods with)
#   --rebuild-base  make the base again even when it exists
#
# The base, localhost/parallex-base:bookworm, is Debian bookworm's minbase
# with ca-certificates (for apt over https and the agent's own fetches), kept
# in podman's storage: made once, reused by every later build. The image is
# then packaging/container/Containerfile, whose build installs the package
# and its dependencies from the Debian archive (network to the Debian mirror
# is needed for both steps). Run as root: tested with a rootful podman (a
# rootless one needs subordinate ids for its user, and is not tested here).
#
# The podman settings a host may need (a hybrid cgroup layout, no systemd,
# no CAP_SYS_RESOURCE) are found by podman-host.sh and printed before use.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
deb=""
tag=localhost/parallex:latest
base=localhost/parallex-base:bookworm
rebuild_base=0
mirror=${PARALLEX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${PARALLEX_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

while [ $# -gt 0 ]; do
  case "$1" in
    --deb) deb=${2:?--deb needs a file}; shift 2 ;;
    --tag) tag=${2:?--tag needs a name}; shift 2 ;;
    --rebuild-base) rebuild_base=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$deb" ]; then
  shopt -s nullglob
  debs=("$root"/build/packages/parallex_*.deb)
  shopt -u nullglob
  if [ ${#debs[@]} -ne 1 ]; then
    echo "build-image.sh: no single parallex_*.deb in $root/build/packages;" \
      "make it with scripts/package.sh, or name one with --deb FILE" >&2
    exit 2
  fi
  deb=${debs[0]}
fi
if [ ! -r "$deb" ] || [ "$(dpkg-deb -f "$deb" Package 2>/dev/null)" != parallex ]; then
  echo "build-image.sh: --deb $deb is not a readable parallex package" >&2
  exit 2
fi
for tool in podman mmdebstrap; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "build-image.sh: $tool is missing (apt-get install $tool)" >&2; exit 2; }
done

# shellcheck source=SCRIPTDIR/podman-host.sh
source "$here/podman-host.sh"
echo "podman settings for this host: ${px_podman_global[*]:-none} ${px_podman_limits[*]:-}"
pm() { podman "${px_podman_global[@]}" "$@"; }

work=$(mktemp -d /tmp/parallex-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ "$rebuild_base" = 1 ] || ! pm image exists "$base"; then
  echo "== base: mmdebstrap --variant=minbase bookworm ($mirror)"
  # The mirrors are given, never read from stdin (mmdebstrap reads its
  # sources from stdin when that is not a terminal).
  mmdebstrap --variant=minbase --include=ca-certificates --quiet bookworm "$work/base.tar" \
    "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
    "deb $security_mirror bookworm-security main" </dev/null
  pm import --quiet "$work/base.tar" "$base" >/dev/null
  rm -f "$work/base.tar"
else
  echo "== base: $base (made earlier; --rebuild-base makes it again)"
fi

echo "== image $tag from $(basename "$deb")"
mkdir "$work/context"
cp "$deb" "$work/context/"
pm build "${px_podman_limits[@]}" --build-arg "BASE=$base" \
  -f "$here/Containerfile" -t "$tag" "$work/context"
pm image inspect --format '{{.Id}} {{.Size}} bytes' "$tag"
