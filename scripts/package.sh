#!/usr/bin/env bash
# Builds the Debian packages parallex and parallex-dev with CPack from the
# install rules, into build/packages/, and checks them with lintian.
# Usage: scripts/package.sh   (then scripts/check-package.sh installs and tests them)
set -euo pipefail
cd "$(dirname "$0")/.."
PARALLEX_WITH_PACKAGE_TOOLS=1 scripts/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}

# The same build tree as scripts/build.sh, installed under /usr: Debian's
# multiarch libdir (lib/x86_64-linux-gnu) and the profile for /usr/bin/parallex.
# Only what the packages hold is built (the executable, plugins, man pages and
# completions), not the tests.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr "$@" >/dev/null
cmake --build build -j "$(nproc)" --target parallex parallex-plugins parallex-docs

rm -rf build/packages
# fakeroot-free: CPack writes the archives with root as owner itself.
cpack --config build/CPackConfig.cmake -B build/packages >/dev/null
rm -rf build/packages/_CPack_Packages
ls -l build/packages/*.deb

# Lintian: an error, warning or info tag fails, but for the few accepted, each
# with its reason, in packaging/debian/lintian-accepted (docs/packaging.md).
# Its own temp folder: lintian leaves its index files (mldbm-elf-*) in TMPDIR.
echo "== lintian"
lint_tmp=$(mktemp -d)
trap 'rm -rf "$lint_tmp"' EXIT
TMPDIR=$lint_tmp lintian --info --pedantic --fail-on error,warning,info \
  --suppress-tags-from-file packaging/debian/lintian-accepted build/packages/*.deb 2>&1 |
  grep -v "^running with root privileges is not recommended" || true
TMPDIR=$lint_tmp lintian --fail-on error,warning,info --suppress-tags-from-file packaging/debian/lintian-accepted \
  build/packages/*.deb >/dev/null 2>&1 || { echo "lintian: the tags above fail the packages" >&2; exit 1; }
echo "lintian: clean (accepted tags: packaging/debian/lintian-accepted)"
