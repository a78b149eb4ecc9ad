#!/usr/bin/env bash
# How many events a second one `parallex events --follow --json` reader keeps
# up with. A run folder appears after the reader started (a new run, as the
# reader sees one) and its proxy log grows as fast as one writer can append
# lines the way the proxy does (one write(2) a line, O_APPEND); the reader's
# output is counted as it comes. Prints a markdown table: the writer's rate,
# and the rate the reader printed at, from the first line written to the
# last one printed (median of ROUNDS rounds).
#   bench/events/follow.sh [parallex] [EVENTS] [ROUNDS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
parallex="${1:-$root/build/parallex}"
events="${2:-200000}"
rounds="${3:-3}"
work="$(mktemp -d)"
reader=""
cleanup() {
  [ -n "$reader" ] && kill "$reader" 2>/dev/null && wait "$reader" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/data" "$work/runtime"
chmod 0700 "$work/runtime"
export HOME="$work/home" PARALLEX_HOME="$work/data" XDG_RUNTIME_DIR="$work/runtime"

echo "events --follow: one reader, one run's proxy log growing as fast as it can ($events events a round, $rounds rounds), $(uname -r), $(nproc) CPUs"
echo
echo "| round | writer (events/s) | reader kept up (events/s) | reader's lag at the end (ms) |"
echo "|---|---|---|---|"
rates=()
for round in $(seq 1 "$rounds"); do
  rm -rf "$PARALLEX_HOME/runs"
  mkdir -p "$PARALLEX_HOME/runs"
  "$parallex" events --follow --json > >(python3 "$here/count.py" "$((events + 1))" >"$work/count.$round") &
  reader=$!
  sleep 0.5
  python3 "$here/write.py" "$PARALLEX_HOME/runs" "$events" >"$work/write.$round"
  # The counter exits once it has every event.
  for _ in $(seq 1 600); do [ -s "$work/count.$round" ] && break; sleep 0.1; done
  kill "$reader" 2>/dev/null || true
  wait "$reader" 2>/dev/null || true
  reader=""
  read -r start end_write <"$work/write.$round"
  read -r got end_read <"$work/count.$round"
  python3 - "$events" "$start" "$end_write" "$got" "$end_read" "$round" <<'PY'
import sys
n, start, end_write, got, end_read, rnd = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
assert got >= n + 1, f"the reader printed {got} of {n + 1} events"
print(f"| {rnd} | {n / (end_write - start):,.0f} | {n / (end_read - start):,.0f} | {(end_read - end_write) * 1000:,.0f} |")
PY
done

# The reader alone: the same events written first, then read whole (what a
# reader that was stopped does when it goes on: it catches up from the files).
rm -rf "$PARALLEX_HOME/runs"
mkdir -p "$PARALLEX_HOME/runs"
python3 "$here/write.py" "$PARALLEX_HOME/runs" "$events" >/dev/null
id="$(ls "$PARALLEX_HOME/runs")"
echo
echo "| catching up: \`events --run ID --json\` over $((events + 1)) events written first | seconds | events/s |"
echo "|---|---|---|"
for round in $(seq 1 "$rounds"); do
  t0=$(date +%s.%N)
  "$parallex" events --run "$id" --json >/dev/null
  t1=$(date +%s.%N)
  python3 -c "import sys; s=float(sys.argv[2])-float(sys.argv[1]); print(f'| {sys.argv[4]} | {s:.2f} | {int(sys.argv[3])/s:,.0f} |')" "$t0" "$t1" "$((events + 1))" "$round"
done
