#!/usr/bin/env bash
# A burst of 1,000 TCP connections to a server on this machine's loopback,
# all in flight at once, by three paths measured in the same run of this
# script: bare (outside any seal, the floor), captured (inside a sealed run
# with Local servers: the run's own mirror of the port) and CONNECT (inside
# the same kind of run, through its proxy). Each row: the time until every
# connection has its outcome (an echoed ping, or a refusal), how many opened
# and how many were refused. A run holds at most 512 open connections (the
# proxy's limit, docs/proxy.md): past it each one is refused at once.
#   bench/proxy/burst.sh [path/to/parallex] [connections (1000)] [repeats (3)]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
parallex="${1:-${PARALLEX:-$root/build/parallex}}"
n="${2:-1000}"
repeats="${3:-3}"
work="$(mktemp -d)"
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/run" "$work/home" "$work/runtime"
chmod 700 "$work/home" "$work/runtime"
cp "$here/burst.py" "$work/run/"
python3 "$here/burst.py" --serve >"$work/serve.out" &
server=$!
for _ in $(seq 50); do [ -s "$work/serve.out" ] && break; sleep 0.1; done
port="$(head -1 "$work/serve.out")"

sealed() {
  PARALLEX_HOME="$work/home" XDG_RUNTIME_DIR="$work/runtime" \
    "$parallex" run --in "$work/run" --local-servers -- "$@" 2>/dev/null
}

printf 'load average: %s\n\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '| path | connections | opened | refused | all answered (ms), best of %s | runs (ms) |\n' "$repeats"
printf '|---|---|---|---|---|---|\n'
for via in bare captured CONNECT; do
  times=()
  line=""
  for _ in $(seq "$repeats"); do
    if [ "$via" = bare ]; then
      line="$(python3 "$here/burst.py" "$n" "$port" bare)"
    else
      line="$(sealed python3 burst.py "$n" "$port" "$via")"
    fi
    times+=("$(echo "$line" | cut -d' ' -f5)")
  done
  best="$(printf '%s\n' "${times[@]}" | sort -n | head -1)"
  read -r _ total opened refused _ <<<"$line"
  printf '| %s | %s | %s | %s | %s | %s |\n' "$via" "$total" "$opened" "$refused" "$best" "${times[*]}"
done
