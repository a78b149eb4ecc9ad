#!/usr/bin/env bash
# Start-up of a sealed /bin/true in the container image beside the host, with
# hyperfine (docs/containers.md's table): `parallex run --in DIR -- /bin/true`
# timed inside a running container (hyperfine bound in from the host, so
# podman's own start is not counted) in the configurations of image.sh, and
# on the host as root and as pxtest. Then one whole `podman run` of it.
#
#   tests/containers/image_startup.sh HOST_PARALLEX [IMAGE] [RUNS]
#
# IMAGE defaults to localhost/parallex:latest (build-image.sh makes it); RUNS
# to 30. Root only (rootful podman); prints hyperfine's summary of each.
set -euo pipefail
exe=$(readlink -f "${1:?usage: $0 HOST_PARALLEX [IMAGE] [RUNS]}")
image=${2:-localhost/parallex:latest}
runs=${3:-30}
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "$0: run it as root (rootful podman)" >&2; exit 2; }
command -v hyperfine >/dev/null || { echo "$0: hyperfine is missing (apt-get install hyperfine)" >&2; exit 2; }
# shellcheck source=SCRIPTDIR/../../packaging/container/podman-host.sh
source "$here/../../packaging/container/podman-host.sh"

d=$(mktemp -d /tmp/parallex-startup.XXXXXX)
trap 'rm -rf "$d"' EXIT
chmod 755 "$d"
hf=(hyperfine -N -w 3 --style basic)
summary() { grep -E 'Time \(mean|Range'; }

echo "== host, root"
mkdir -p "$d/root/p" "$d/root/h"
PARALLEX_HOME=$d/root/h "${hf[@]}" -r "$runs" "$exe run --in $d/root/p -- /bin/true" | summary
if id pxtest >/dev/null 2>&1; then
  echo "== host, pxtest"
  u=/home/pxtest/parallex-startup
  rm -rf "$u" && mkdir -p "$u/p" "$u/h" && chown -R pxtest: "$u"
  runuser -u pxtest -- env PARALLEX_HOME="$u/h" "${hf[@]}" -r "$runs" "$exe run --in $u/p -- /bin/true" | summary
  rm -rf "$u"
fi

podman "${px_podman_global[@]}" run --rm "${px_podman_limits[@]}" "$image" check --seccomp-profile >"$d/parallex.json"
in_container() { # NAME, then podman run options
  local name=$1
  shift
  mkdir -p "$d/$name/p" "$d/$name/s" "$d/$name/h"
  chown -R 1000:1000 "$d/$name"
  echo "== container: $name"
  podman "${px_podman_global[@]}" run --rm "${px_podman_limits[@]}" \
    -v "$d/$name/p:/work/project" -v "$d/$name/s:/var/lib/parallex" -v "$d/$name/h:/home/parallex" \
    -v "$(command -v hyperfine):/usr/local/bin/hyperfine:ro" --entrypoint hyperfine "$@" "$image" \
    -N -w 3 -r "$runs" --style basic "parallex run --in /work/project -- /bin/true" | summary
}
in_container defaults-user -e PARALLEX_ALLOW_WEAKER_SEAL=1
in_container defaults-root --user 0:0 -e PARALLEX_ALLOW_WEAKER_SEAL=1
in_container pod-without-namespaces --cap-drop ALL --security-opt no-new-privileges --read-only --tmpfs /tmp \
  -e PARALLEX_ALLOW_WEAKER_SEAL=1
in_container full-seal --security-opt seccomp="$d/parallex.json" --security-opt unmask=ALL \
  --cap-drop ALL --security-opt no-new-privileges --read-only --tmpfs /tmp

echo "== a whole podman run of it (defaults, the image's user)"
"${hf[@]}" -r 10 "podman ${px_podman_global[*]} run --rm ${px_podman_limits[*]} -v $d/defaults-user/p:/work/project -v $d/defaults-user/s:/var/lib/parallex -e PARALLEX_ALLOW_WEAKER_SEAL=1 $image run --in /work/project -- /bin/true" | summary
