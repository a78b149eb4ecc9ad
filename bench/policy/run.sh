#!/usr/bin/env bash
# Plugin discovery + loading and policy composition (Google Benchmark), with the
# default profile's parse time as the baseline in the same run.
# Usage: bench/policy/run.sh [build dir]   (a RelWithDebInfo or Release build)
set -euo pipefail
build=${1:-build}
cmake --build "$build" --target policy_bench >/dev/null
"$build/bench/policy/policy_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_format=console 2>/dev/null | grep -E "^BM_|Benchmark" | grep -v "_stddev\|_cv"
