#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default 20),
# side by side on the machine's cores (scripts/lanes.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lanes.sh
seconds=${1:-20}
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARALLEX_FUZZ=ON \
  -DPARALLEX_BUILD_TESTS=OFF -DPARALLEX_BUILD_BENCH=OFF -DPARALLEX_WERROR=ON >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target parallex_fuzzers

# Fuzzes TARGET for the given seconds, starting from a copy of its corpus (the
# fuzzer adds what it finds to the folder it is given; the tree's stays as is).
fuzz_one() {
  local target=$1 seconds=$2 name corpus work status=0
  name=$(basename "$target")
  corpus="fuzz/corpus/${name#fuzz_}"
  [ -d "$corpus" ] || corpus="fuzz/corpus/$(echo "${name#fuzz_}" | cut -d_ -f1)"
  work=$(mktemp -d)
  [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
  "$target" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=0 "$work" >"$work.log" 2>&1 || status=$?
  # A crash's report is the whole log; a clean run's last lines say how far it got.
  if [ "$status" = 0 ]; then tail -2 "$work.log"; else cat "$work.log"; fi
  rm -rf "$work" "$work.log"
  return "$status"
}

for target in build-fuzz/fuzz/fuzz_*; do
  [ -x "$target" ] || continue
  lane_job "$(basename "$target"), ${seconds}s" fuzz_one "$target" "$seconds"
done
lanes_run
