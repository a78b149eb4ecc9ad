#!/usr/bin/env bash
# Builds Parallex into build/ (the executable is build/parallex).
# Usage: scripts/build.sh [extra cmake -D options]
#   PARALLEX_BUILD_TARGETS="parallex parallex-plugins" builds only those
#   (scripts/demo.sh); by default everything (tests, benchmarks, man pages).
set -euo pipefail
cd "$(dirname "$0")/.."
# ccache across clones: hash paths relative to the clone, not the clone's own path.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-12G}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
targets=()
for t in ${PARALLEX_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
