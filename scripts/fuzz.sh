#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each for SECONDS (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPARALLEX_FUZZ=ON \
  -DPARALLEX_BUILD_TESTS=OFF -DPARALLEX_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target parallex_fuzzers
for target in build-fuzz/fuzz/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  corpus="fuzz/corpus/${name#fuzz_}"
  [ -d "$corpus" ] || corpus="fuzz/corpus/${name#fuzz_}"; [ -d "$corpus" ] || corpus="fuzz/corpus/$(echo "${name#fuzz_}" | cut -d_ -f1)"
  work=$(mktemp -d)
  [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
  echo "fuzzing $name for ${seconds}s"
  "$target" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=0 "$work" 2>&1 | tail -2
  rm -rf "$work"
done
