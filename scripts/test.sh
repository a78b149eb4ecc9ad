#!/usr/bin/env bash
# Builds everything with -Werror and runs the whole test suite; then the unit
# tests and the seal's own tests again under ASan+UBSan (scripts/test-asan.sh),
# clang-tidy, the out-of-tree example plugin against the installed SDK, each
# fuzz target for a bounded time, and the Debian packages: made, linted,
# installed in a fresh Debian root, used and purged; and the container image
# built from them and run by podman (tests/containers/image.sh).
# Usage: scripts/test.sh [--quick]   (--quick: the main build and ctest only)
set -euo pipefail
cd "$(dirname "$0")/.."
PARALLEX_WITH_TEST_TOOLS=1 scripts/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}
quick=0
# Each stage says when it starts, the wall time and the CPU time (user and
# system, of every process the script waited for) so far: CI has 30 minutes
# for all of them, on two cores.
stage() {
  local stat ticks
  stat=$(</proc/$$/stat) ticks=$(getconf CLK_TCK)
  read -r -a stat <<<"${stat##*) }"  # fields from the state on: cutime and cstime are 14th and 15th
  echo "== [$(date +%T), ${SECONDS}s so far, CPU $((stat[13] / ticks)) s user + $((stat[14] / ticks)) s sys] $*"
}
[ "${1:-}" = "--quick" ] && quick=1

scripts/build.sh -DPARALLEX_WERROR=ON
stage "ctest"
# The unprivileged passes rerun a whole suite as another user (the escape
# suite's took 3-5 minutes of a core here). The sanitizer stage runs each of
# them again (scripts/test-asan.sh: test_escape's own lane, test_killswitch and
# test_pluginhost whole), so a full run leaves them to it; --quick runs them here.
again_under_asan=()
[ "$quick" = 1 ] ||
  again_under_asan=(-E '^(EscapeUnprivileged|KillSwitchFaultsUnprivileged|MisbehavingUnprivileged)[.]')
(cd build && ctest --output-on-failure -j2 --timeout 600 "${again_under_asan[@]}") || {
  scripts/ctest-failures.sh build
  exit 1
}

[ "$quick" = 1 ] && exit 0

stage "under ASan+UBSan: the unit tests, the escape suite, sealed runs, the home guard"
scripts/test-asan.sh

stage "clang-tidy: memory-safety checks on host/ and plugins/"
scripts/tidy.sh build

stage "example plugin built out of tree against the installed SDK"
scripts/check-example-plugin.sh

stage "fuzz targets (bounded)"
scripts/fuzz.sh "${PARALLEX_FUZZ_SECONDS:-10}"

stage "Debian packages: made by CPack, linted"
# The same build tree, configured for /usr: only the files the packages hold rebuild.
scripts/package.sh -DPARALLEX_WERROR=ON
stage "the packages used: installed in a fresh Debian root and purged; the AppArmor profiles parsed; the container image built and run"
# Three jobs on the packages, side by side (scripts/lanes.sh): each keeps
# about one core busy (one after the other they took 134 s and 135 s of CPU
# on two cores), and none writes what another reads.
. scripts/lanes.sh
lane_job "the package in a fresh Debian root: installed, used as root and as a user, purged" scripts/check-package.sh
lane_job "the container image: built from the package by podman, run with its defaults and the full seal's settings" \
  bash -c 'cd build && PARALLEX_TEST_CONTAINER_IMAGE=1 ctest -L container-image --output-on-failure --timeout 900'
lane_job "the AppArmor profiles: parsed by AppArmor 4" scripts/check-apparmor-profile.sh
lanes_run
stage "all passed"
