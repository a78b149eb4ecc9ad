#!/usr/bin/env bash
# The seal's set-up under ASan+UBSan: the escape suite (hostile probes in real
# seals, as root and as an unprivileged user), the sealed runs of the
# supervisor's tests (check --sealed, stop signals, lost runs, failing steps,
# the run's terminal) and the home guard, all against build-asan/parallex.
# Run by scripts/test.sh after the unit tests under ASan (same build dir).
#
# Leaks are not checked here (ASAN_OPTIONS=detect_leaks=0): LeakSanitizer's
# exit check stops the process with ptrace, which the seal refuses, as it
# should, in the seal's own processes. Memory errors and undefined behaviour
# still abort the run (UBSan halt_on_error).
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
[ -f build-asan/build.ninja ] ||
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPARALLEX_SANITIZE=ON -DPARALLEX_BUILD_BENCH=OFF >/dev/null
targets=(parallex test_escape test_supervisor test_home)
for t in parallex-plugin-claude-code parallex-plugin-codex parallex-plugin-opencode parallex-plugin-generic; do
  if ninja -C build-asan -t query "$t" >/dev/null 2>&1; then targets+=("$t"); fi
done
cmake --build build-asan -j "$(nproc)" --target "${targets[@]}"
export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "-- test_escape (ASan+UBSan)"
build-asan/tests/escape/test_escape --gtest_brief=1
echo "-- test_supervisor, sealed runs (ASan+UBSan)"
build-asan/tests/supervisor/test_supervisor --gtest_brief=1 \
  --gtest_filter='SealedRun.*:CheckCommand.*:Signals/StopSignal.*:RunEnd.*:Steps/FailingStep.*:RunTerminal.*'
echo "-- test_home (ASan+UBSan)"
build-asan/tests/home/test_home --gtest_brief=1
