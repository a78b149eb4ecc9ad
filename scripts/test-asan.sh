#!/usr/bin/env bash
# The suites again under ASan+UBSan (build-asan/, Debug): the unit tests of each
# component, and the seal's own suites: the escape suite (hostile probes in real
# seals, as an unprivileged user), the sealed runs of the
# supervisor's tests (check --sealed, stop signals, lost runs, failing steps,
# the run's terminal) and the home guard, all against build-asan/parallex.
# Run by scripts/test.sh after the main build's ctest.
# Usage: scripts/test-asan.sh [--sealed]   (--sealed: the seal's suites only)
#
# The seal's suites run without LeakSanitizer (ASAN_OPTIONS=detect_leaks=0):
# its exit check stops the process with ptrace, which the seal refuses, as it
# should, in the seal's own processes. Memory errors and undefined behaviour
# still abort the run (UBSan halt_on_error). The unit tests check leaks too.
#
# The suites run side by side on the machine's cores (scripts/lanes.sh),
# longest first, the longest split into gtest shards: they spend much of their
# time in forks, faults and waits on sealed processes, and one after the other
# they took most of CI's 30 minutes. The main build's ctest already runs every
# test beside another (-j2), so no test relies on running alone.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lanes.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
sealed_only=0
[ "${1:-}" = "--sealed" ] && sealed_only=1

# Built by clang, as the fuzz targets are: unoptimised and instrumented, a
# batch of the tree compiles in half the time GCC takes (16.9 against 35.2 s
# of CPU for the supervisor's first batch), and a second compiler reads the
# code; its warnings fail the run as GCC's do. A tree another compiler
# configured is made again.
if [ -f build-asan/CMakeCache.txt ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' build-asan/CMakeCache.txt; then
  rm -rf build-asan
fi
[ -f build-asan/build.ninja ] && grep -q '^PARALLEX_WERROR:BOOL=ON' build-asan/CMakeCache.txt ||
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPARALLEX_SANITIZE=ON \
    -DPARALLEX_BUILD_BENCH=OFF -DPARALLEX_WERROR=ON >/dev/null

# Longest first.
unit_tests=(test_agents test_supervisor test_killswitch test_workspace test_report test_proxy test_snapshot test_mcp test_transcripts
            test_protect test_policy test_pluginhost test_plugins test_seatbelt test_common)
sealed_tests=(test_escape test_home)
# The supervisor's tests that run sealed processes: under the seal's options.
sealed_supervisor='SealedRun.*:CheckCommand.*:Signals/StopSignal.*:RunEnd.*:Steps/FailingStep.*:RunTerminal.*'

wanted=(parallex "${sealed_tests[@]}" test_supervisor parallex-plugin-claude-code parallex-plugin-codex
        parallex-plugin-opencode parallex-plugin-generic)
[ "$sealed_only" = 1 ] || wanted+=("${unit_tests[@]}")
targets=()
for t in "${wanted[@]}"; do
  if ninja -C build-asan -t query "$t" >/dev/null 2>&1; then targets+=("$t"); fi
done
cmake --build build-asan -j "$(nproc)" --target "${targets[@]}"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
exe_of() { find build-asan/tests -maxdepth 2 -type f -name "$1" -print -quit; }

# One job per shard of a suite: NAME SHARDS LEAKS(0|1) EXECUTABLE [gtest args...]
suite() {
  local name=$1 shards=$2 leaks=$3 exe=$4 i
  shift 4
  for ((i = 0; i < shards; i++)); do
    local label="$name (ASan+UBSan)"
    [ "$shards" = 1 ] || label="$name $((i + 1))/$shards (ASan+UBSan)"
    lane_job "$label" env GTEST_TOTAL_SHARDS="$shards" GTEST_SHARD_INDEX="$i" ASAN_OPTIONS=detect_leaks="$leaks" \
      "$exe" --gtest_brief=1 "$@"
  done
}

# The escape suite as the unprivileged user (one test that reruns the suite as
# pxtest: the longest job, started first; the rest fill the other core), and
# its rows for a delegated cgroup and a machine without a pids controller.
# Its pass as root runs in the main build's ctest, on the build that ships:
# the sanitizers see the code its probes drive (the seccomp notifications,
# the proxy's refusals, the audit records) in the unprivileged pass, which
# goes through the same code, and root's own set-up (its uid map, its
# cgroups) in every sealed run of test_home, test_agents and test_supervisor
# below. The pass as root took 4.3 of this stage's 20 lane-minutes when it
# ran here too.
suite "test_escape, as an unprivileged user" 1 0 "$(exe_of test_escape)" --gtest_filter='EscapeUnprivileged.*'
suite "test_escape, its rows" 1 0 "$(exe_of test_escape)" --gtest_filter='EscapeRows.*'
[ "$sealed_only" = 1 ] || suite test_agents 2 1 "$(exe_of test_agents)"
suite test_home 2 0 "$(exe_of test_home)"
[ "$sealed_only" = 1 ] ||
  suite test_supervisor 1 1 "$(exe_of test_supervisor)" --gtest_filter="-$sealed_supervisor"
suite "test_supervisor, sealed runs" 1 0 "$(exe_of test_supervisor)" --gtest_filter="$sealed_supervisor"
if [ "$sealed_only" = 0 ]; then
  for t in "${unit_tests[@]}"; do
    case "$t" in test_agents | test_supervisor) continue ;; esac  # their jobs are above
    exe=$(exe_of "$t")
    [ -n "$exe" ] && suite "$t" 1 1 "$exe"
  done
fi
lanes_run
