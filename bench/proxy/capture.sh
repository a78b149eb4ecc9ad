#!/usr/bin/env bash
# Capture benchmark: how a program inside a sealed run reaches a server on this
# machine's loopback, side by side, measured in the same run of this script:
#   direct     outside any seal (the baseline)
#   captured   inside a sealed run, connecting to the name (its synthetic address)
#   CONNECT    inside the same kind of run, through the run's proxy
# Set-up is p50/p99 of connect (+ CONNECT and its 200) + one round trip, 1000
# times (the 200 read as a client reads it, not byte by byte); MB/s the best
# of three 1 GiB transfers through one connection; and
# the run's DNS answer time (an A query over UDP; warm, and for new names whose
# listeners are made before the answer).
#   bench/proxy/capture.sh [path/to/parallex]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
parallex="${1:-${PARALLEX:-$root/build/parallex}}"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/run" "$work/home" "$work/runtime"
chmod 700 "$work/home" "$work/runtime"
c++ -O2 -std=c++20 -pthread -o "$work/run/capture_bench" "$here/capture_bench.cpp"
"$work/run/capture_bench" --serve > "$work/serve.out" &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/serve.out" ] && break; sleep 0.1; done
port="$(head -1 "$work/serve.out")"

sealed() {
  # The test-only resolver hook names the loopback server bench.test (a .test
  # name to loopback: Local servers must be on, as for any host server).
  PARALLEX_HOME="$work/home" XDG_RUNTIME_DIR="$work/runtime" PARALLEX_TEST_RESOLVE="bench.test=127.0.0.1" \
    "$parallex" run --in "$work/run" --allow "bench.test:$port" --local-servers -- "$@"
}

rows=()
rows+=("$("$work/run/capture_bench" --label direct --host 127.0.0.1 --port "$port")")
rows+=("$(sealed "$work/run/capture_bench" --label captured --host bench.test --port "$port")")
rows+=("$(sealed "$work/run/capture_bench" --label CONNECT --host bench.test --port "$port" --connect)")
while IFS= read -r line; do rows+=("$line"); done < <(sealed "$work/run/capture_bench" --label "run's DNS" --dns bench.test)

# The machine's load while measured (other work on the same cores moves the p99s).
printf 'load average: %s\n\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
direct_p50="$(printf '%s\n' "${rows[0]}" | cut -f2)"
direct_mbs="$(printf '%s\n' "${rows[0]}" | cut -f4)"
printf '| path | set-up p50 | set-up p99 | p50 over direct | MB/s (1 GiB) | vs direct |\n'
printf '|---|---|---|---|---|---|\n'
for row in "${rows[@]}"; do
  IFS=$'\t' read -r label p50 p99 mbs <<< "$row"
  over="-"; ratio="-"
  case "$label" in
    "run's DNS"*) ;;
    *) over="+$((p50 - direct_p50)) us"; ratio="$((100 * mbs / direct_mbs))%" ;;
  esac
  [ "$label" = direct ] && over="-"
  printf '| %s | %s us | %s us | %s | %s | %s |\n' "$label" "$p50" "$p99" "$over" "$mbs" "$ratio"
done

# A burst of connections opened at once and held: outside any seal (bare),
# inside a run through its proxy (CONNECT localhost:PORT), and captured
# (localhost:PORT inside the run: a port of this machine mirrored by
# --local-servers). 500 each, under the run's limit of 512 open connections;
# then 1000 captured, past the limit: the 488 over it are refused at once
# (a reset), each named in the run's proxy.jsonl, record and summary.
local_run() {
  PARALLEX_HOME="$work/home" XDG_RUNTIME_DIR="$work/runtime" \
    "$parallex" run --in "$work/run" --local-servers -- "$@" 2>"$work/burst.err"
}
bursts=()
bursts+=("$("$work/run/capture_bench" --label bare --host 127.0.0.1 --port "$port" --burst 500)")
bursts+=("$(local_run "$work/run/capture_bench" --label CONNECT --host localhost --port "$port" --connect --burst 500)")
bursts+=("$(local_run "$work/run/capture_bench" --label captured --host 127.0.0.1 --port "$port" --burst 500)")
bursts+=("$(local_run "$work/run/capture_bench" --label "captured, past the limit" --host 127.0.0.1 --port "$port" --burst 1000)")
printf '\n| burst | connections | answered | refused | ms until the last answered |\n'
printf '|---|---|---|---|---|\n'
for row in "${bursts[@]}"; do
  IFS=$'\t' read -r label n answered refused ms <<< "$row"
  printf '| %s | %s | %s | %s | %s |\n' "$label" "$n" "$answered" "$refused" "$ms"
done
printf '\nthe last run said:\n'
grep -A2 'too-many-connections' "$work/burst.err" || true
