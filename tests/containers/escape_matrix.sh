#!/usr/bin/env bash
# The escape matrix of docs/containers.md: `parallex check --sealed` (the
# seal's probe catalog, tried from inside a real sealed run) and the start-up
# of a sealed /bin/true, in each configuration a team runs Parallex in, side
# by side in one markdown table (escape_matrix.py draws it):
#
#   tests/containers/escape_matrix.sh PARALLEX [IMAGE]
#
#   host, root / host, pxtest      the machine itself
#   crun defaults, root / pxtest   real_runtime.sh's container: crun with
#                                  containers-common's seccomp.json, its
#                                  capabilities, /proc masked
#   crun, unshare refused, pxtest  the same, unshare refused as Docker's and
#                                  containerd's default profiles refuse it
#                                  (RuntimeDefault): the user's seal without
#                                  namespaces
#   crun, full seal's settings     the same with `parallex check
#                                  --seccomp-profile` and /proc unmasked (pxtest)
#   podman defaults, 1000 / root   the image (IMAGE, default
#                                  localhost/parallex:latest: build-image.sh)
#   pod without namespaces         `parallex kube --seal without-namespaces`'s
#                                  security context, in podman
#   pod, full seal                 the full seal's settings, in podman
#
# PARALLEX is the build's executable (host and crun columns); the podman
# columns run the image's own. A configuration whose `check` names a required
# guarantee MISSING runs accepting the weaker seal (PARALLEX_ALLOW_WEAKER_SEAL=1,
# its environment's setting), except the full seal's, which must not need it.
# Root only (crun and a rootful podman); the podman columns are left out
# without podman or the image. Writes $PX_MATRIX_DIR (default
# /tmp/parallex-escape-matrix)/matrix.md and prints it; exit 1 when a cell is
# ESCAPED or a configuration gave no answer.
set -u
exe=$(readlink -f "${1:?usage: $0 PARALLEX [IMAGE]}")
image=${2:-localhost/parallex:latest}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${PX_MATRIX_DIR:-/tmp/parallex-escape-matrix}
runs=${PX_MATRIX_RUNS:-10}
[ "$(id -u)" = 0 ] || { echo "$0: run it as root (crun and a rootful podman)" >&2; exit 2; }
case "$out" in /|/tmp|"") echo "$0: PX_MATRIX_DIR=$out is not a folder of its own" >&2; exit 2;; esac
rm -rf "$out"
mkdir -p "$out/bin"
chmod 755 "$out" "$out/bin"
# A copy every identity reads (the build tree may sit in a private folder).
cp "$exe" "$out/bin/parallex"
cp "$here/seal_probe.sh" "$out/bin/seal_probe.sh"
px=$out/bin/parallex
columns=()
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

echo "== host, root"
mkdir -p "$out/host-root/w" "$out/host-root/state"
PARALLEX_HOME=$out/host-root/state bash "$out/bin/seal_probe.sh" "$px" "$out/host-root/w" "$out/host-root/seal" "$runs"
columns+=("host, root=$out/host-root/seal")

if id pxtest >/dev/null 2>&1; then
  echo "== host, pxtest"
  u=/home/pxtest/parallex-escape-matrix
  rm -rf "$u" && mkdir -p "$u/w" "$u/state" && chown -R pxtest: "$u"
  runuser -u pxtest -- env HOME=/home/pxtest PARALLEX_HOME="$u/state" \
    bash "$out/bin/seal_probe.sh" "$px" "$u/w" "$u/seal" "$runs"
  mkdir -p "$out/host-pxtest" && cp "$u"/seal.* "$out/host-pxtest/" && rm -rf "$u"
  columns+=("host, pxtest=$out/host-pxtest/seal")
fi

echo "== crun, the runtime's defaults (real_runtime.sh)"
PX_RR_DIR=$out/crun-defaults PX_RR_STARTUP_RUNS=$runs bash "$here/real_runtime.sh" "$px" >"$out/crun-defaults.log" 2>&1
echo "   real_runtime.sh exit $? (log: $out/crun-defaults.log)"
grep '^=== ' "$out/crun-defaults.log"
columns+=("crun defaults, root=$out/crun-defaults/home/root/work.seal"
  "crun defaults, pxtest=$out/crun-defaults/home/pxtest/work.seal")

# Docker's and containerd's default profile (Kubernetes' RuntimeDefault on
# containerd) lets only CAP_SYS_ADMIN unshare; containers-common's lets any
# process make a user namespace. The user's seal without namespaces, as such
# a pod gets it: unshare refused (EPERM) on top of the same profile.
echo "== crun, unshare refused (as Docker's and containerd's default profiles do)"
PX_RR_DIR=$out/crun-no-userns PX_RR_STARTUP_RUNS=$runs PX_RR_USERS=pxtest PX_RR_DENY=unshare:1 \
  bash "$here/real_runtime.sh" "$px" >"$out/crun-no-userns.log" 2>&1
echo "   real_runtime.sh exit $? (log: $out/crun-no-userns.log)"
grep '^=== ' "$out/crun-no-userns.log"
columns+=("crun, unshare refused, pxtest=$out/crun-no-userns/home/pxtest/work.seal")

echo "== crun, the full seal's settings"
PX_RR_DIR=$out/crun-full PX_RR_STARTUP_RUNS=$runs PX_RR_USERS=pxtest PX_RR_SECCOMP=parallex \
  PX_RR_PROC=unmasked PX_RR_EXPECT_FULL=pxtest bash "$here/real_runtime.sh" "$px" >"$out/crun-full.log" 2>&1
echo "   real_runtime.sh exit $? (log: $out/crun-full.log)"
grep '^=== ' "$out/crun-full.log"
columns+=("crun, full seal's settings, pxtest=$out/crun-full/home/pxtest/work.seal")

# shellcheck source=SCRIPTDIR/../../packaging/container/podman-host.sh
source "$root/packaging/container/podman-host.sh"
pm() { podman "${px_podman_global[@]}" "$@"; }
if command -v podman >/dev/null 2>&1 && pm image exists "$image"; then
  pm run --rm "${px_podman_limits[@]}" "$image" check --seccomp-profile >"$out/parallex.json"
  in_pod() { # NAME HEADING UID, then podman run options
    local name=$1 heading=$2 uid=$3
    shift 3
    local d=$out/$name
    mkdir -p "$d/project/w" "$d/state" "$d/home"
    chown -R "$uid:$uid" "$d/project" "$d/state" "$d/home"
    echo "== podman: $heading: $*"
    pm run --rm "${px_podman_limits[@]}" -v "$d/project:/work/project" -v "$d/state:/var/lib/parallex" \
      -v "$d/home:/home/parallex" -v "$out/bin/seal_probe.sh:/usr/local/bin/seal_probe.sh:ro" \
      --entrypoint bash "$@" "$image" /usr/local/bin/seal_probe.sh parallex /work/project/w /work/project/seal "$runs"
    echo "   exit $?"
    columns+=("$heading=$d/project/seal")
  }
  in_pod podman-defaults "podman defaults, 1000" 1000 -e PARALLEX_ALLOW_WEAKER_SEAL=1
  in_pod podman-defaults-root "podman defaults, root" 0 --user 0:0 -e PARALLEX_ALLOW_WEAKER_SEAL=1
  in_pod pod-without-namespaces "pod, --seal without-namespaces" 1000 --cap-drop ALL \
    --security-opt no-new-privileges --read-only --tmpfs /tmp -e PARALLEX_ALLOW_WEAKER_SEAL=1
  in_pod pod-full "pod, full seal" 1000 --security-opt seccomp="$out/parallex.json" --security-opt unmask=ALL \
    --cap-drop ALL --security-opt no-new-privileges --read-only --tmpfs /tmp
else
  echo "== podman columns left out: no podman or no image $image (packaging/container/build-image.sh)"
fi

table=$(python3 "$here/escape_matrix.py" "${columns[@]}")
rc=$?
{
  echo "<!-- $(date -u '+%Y-%m-%d %H:%M UTC'); Linux $(uname -r); load $load_start at the start," \
    "$(cut -d' ' -f1-3 /proc/loadavg) at the end; $(nproc) cores; $runs timed runs each -->"
  echo "$table"
} >"$out/matrix.md"
cat "$out/matrix.md"
exit $rc
