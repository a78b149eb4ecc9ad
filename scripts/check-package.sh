#!/usr/bin/env bash
# Installs the packages scripts/package.sh made into a fresh Debian root and
# uses them as a new user would (scripts/check-package-inside.sh): `apt-get
# install ./parallex_*.deb`, `parallex check` and `parallex demo` from
# /usr/bin as root and as an unprivileged user, man pages, bash completion, the
# example plugin built against parallex-dev, a broken plugin in the system
# folder, then `apt-get purge` and a check that nothing is left.
#
# The root is made by mmdebstrap (this machine's Debian release: the packages
# depend on its libraries) and entered in a new mount and pid namespace with
# pivot_root, not chroot: a chrooted process may not create user namespaces,
# and the unprivileged runs need one. Downloaded packages are kept in
# $PARALLEX_PACKAGE_TEST_CACHE (default ~/.cache/parallex/package-test) for the
# next run. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "scripts/check-package.sh makes a Debian root and mounts in it: run it as root (sudo)." >&2
  exit 1
fi
shopt -s nullglob
debs=(build/packages/parallex_*.deb build/packages/parallex-dev_*.deb)
if [ "${#debs[@]}" != 2 ]; then
  echo "no packages in build/packages/: run scripts/package.sh first." >&2
  exit 1
fi
started=$(date +%s)
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
cache="${PARALLEX_PACKAGE_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parallex/package-test}/$suite"
mkdir -p "$cache"
work=$(mktemp -d /var/tmp/parallex-package-test.XXXXXX)
root="$work/root"
cleanup() {
  # Anything still mounted under the root goes with the namespace that mounted it.
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT

echo "-- a fresh Debian $suite root (mmdebstrap)"
# Installed before the "before" listing, so that what the purge must remove is
# parallex's alone: the tools the checks use and the demo's Recommends.
mmdebstrap --variant=apt --skip=essential/unlink --skip=cleanup/apt \
  --include=ca-certificates,git,curl,cmake,g++,make,bash-completion,man-db,passwd,mount \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --setup-hook="sync-in $cache /var/cache/apt/archives/" \
  "$suite" "$root" >"$work/mmdebstrap.log" 2>&1 || {
  tail -40 "$work/mmdebstrap.log"
  exit 1
}
echo "   made in $(($(date +%s) - started)) s"
mkdir -p "$root/tmp/parallex-test"
cp "${debs[@]}" scripts/check-package-inside.sh "$root/tmp/parallex-test/"
cp -r examples/gemini-plugin "$root/tmp/parallex-test/gemini-plugin"
# The root shares this machine's network: it resolves names as this machine
# does, and trusts the certificate authorities added to it (a TLS-inspecting
# egress proxy's, say); the inside script adds them to the root's store.
cp /etc/resolv.conf /etc/hosts "$root/etc/"
cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/" 2>/dev/null || true

# Enters the root: a new mount and pid namespace, the root bind-mounted on
# itself with a fresh /proc, the host's /sys and /dev, then pivot_root into it.
status=0
unshare --mount --pid --fork --kill-child --propagation private -- bash -c '
  set -e
  r=$1
  mount --bind "$r" "$r"
  mount -t proc proc "$r/proc"
  mount --rbind /sys "$r/sys"
  mount --rbind /dev "$r/dev"
  cd "$r"
  mkdir -p .oldroot
  pivot_root . .oldroot
  umount -l /.oldroot
  rmdir /.oldroot
  exec /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb \
    bash /tmp/parallex-test/check-package-inside.sh
' enter "$root" || status=$?

# Keep what was downloaded for the next run.
cp -u "$root"/var/cache/apt/archives/*.deb "$cache/" 2>/dev/null || true
echo "-- package check: $([ "$status" = 0 ] && echo passed || echo FAILED) in $(($(date +%s) - started)) s"
exit "$status"
