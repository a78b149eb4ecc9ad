#!/usr/bin/env bash
# Checks that the AppArmor profiles parse with Debian's AppArmor 4 parser
# (apparmor_parser -Q: parse and compile, load nothing): the package's profile
# (build/packaging/apparmor/parallex) and the one `parallex check
# --apparmor-profile` prints for a build-tree executable. The `userns` rule
# they rely on is AppArmor 4's: where this machine's parser is older (Debian
# 12 has 3.0), the parse runs in a Debian 13 root made by mmdebstrap (cached
# like scripts/check-package.sh's). Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
profiles=(build/packaging/apparmor/parallex)
[ -f "${profiles[0]}" ] || { echo "no ${profiles[0]}: configure the build first (scripts/build.sh)." >&2; exit 1; }
work=$(mktemp -d /var/tmp/parallex-apparmor.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
cp "${profiles[0]}" "$work/parallex"
build/parallex check --apparmor-profile >"$work/parallex-build-tree"

parse() {  # parse DIR-WITH-PROFILES PARSER-PREFIX...
  local dir=$1 f
  shift
  for f in parallex parallex-build-tree; do
    "$@" apparmor_parser -Q -K "$dir/$f"
    echo "   ok: $f parses"
  done
}
if command -v apparmor_parser >/dev/null && [ -e /etc/apparmor.d/abi/4.0 ]; then
  parse "$work"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "this machine's AppArmor parser is older than 4 and making a Debian 13 root needs root: run as root." >&2
  exit 1
fi
cache="${PARALLEX_PACKAGE_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parallex/package-test}/trixie"
mkdir -p "$cache"
echo "-- apparmor_parser -Q of Debian 13 (AppArmor 4), in a root made by mmdebstrap"
mmdebstrap --variant=apt --skip=essential/unlink --include=apparmor \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --setup-hook="sync-in $cache /var/cache/apt/archives/" \
  --customize-hook="sync-out /var/cache/apt/archives $cache" \
  --customize-hook="copy-in $work/parallex $work/parallex-build-tree /tmp" \
  --customize-hook='chroot "$1" apparmor_parser --version | head -1' \
  --customize-hook='for f in parallex parallex-build-tree; do chroot "$1" apparmor_parser -Q -K /tmp/$f || exit 1; echo "   ok: $f parses"; done' \
  trixie /dev/null >"$work/log" 2>&1 || { tail -30 "$work/log"; exit 1; }
grep -E "^AppArmor parser|^   ok:" "$work/log"
