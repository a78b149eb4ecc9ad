#!/usr/bin/env bash
# Kill-switch latency: from the start of a pause-all to every process frozen,
# for 1, 10 and 200 processes spread over (up to) 5 concurrent runs, with the
# cgroup mechanism and with the process-tree fallback. Prints a markdown table.
#   bench/killswitch/run.sh [build-dir] [pause_bench args...]
# Uses <build-dir>/bench/killswitch/pause_bench when the build has it, else
# compiles the bench against the supervisor sources (Release flags).
# The cgroup rows need root or a delegated cgroup (see docs/kill-switch.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-${PARALLEX_BUILD:-$root/build}}"
shift || true
bin="$build/bench/killswitch/pause_bench"
work=""
cleanup() { [ -n "$work" ] && rm -rf "$work"; }
trap cleanup EXIT
if [ ! -x "$bin" ]; then
  work="$(mktemp -d)"
  src="$root/host/src"
  sources=("$here/pause_bench.cpp" "$src/common/error.cpp" "$src/common/paths.cpp" "$src/common/unique_fd.cpp")
  for f in "$src"/supervisor/*.cpp; do
    case "$(basename "$f")" in run.cpp) ;; *) sources+=("$f") ;; esac
  done
  c++ -O2 -std=c++20 -pthread -I"$src" -o "$work/pause_bench" "${sources[@]}"
  bin="$work/pause_bench"
fi
echo "kill switch: pause-all latency, $(uname -r), $(nproc) CPUs"
"$bin" "$@"
