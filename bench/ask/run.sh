#!/usr/bin/env bash
# Ask mode's cost on what the rule already allows: a sealed run makes N plain
# HTTP requests (curl, through the run's proxy) to an allowed name served on
# this machine's loopback, with ask mode on and off, in the same run of this
# script (alternating, hyperfine). Ask mode only adds work to what the rule
# refuses (held, asked); an allowed connection takes the same decision.
#
#   bench/ask/run.sh [path/to/parallex] [requests per run] [runs]
#
# Needs hyperfine, curl and python3 (the loopback server).
set -euo pipefail
PARALLEX=$(realpath "${1:-build/parallex}")
REQUESTS=${2:-100}
RUNS=${3:-10}
for tool in hyperfine curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/home" "$work/www"
echo hello >"$work/www/index.html"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 &
server=$!
sleep 0.5
# The name is given to the loopback server by the proxy's test hook (.test
# names, loopback only, still subject to the rule: proxy/test_resolver.hpp).
export PARALLEX_HOME="$work/home" PARALLEX_TEST_RESOLVE="bench.test=127.0.0.1"
loop="for i in \$(seq $REQUESTS); do curl -s -o /dev/null http://bench.test:$port/; done"
common=(run --in "$work/ws" --allow "bench.test:$port" --local-servers="$port")
hyperfine -N --warmup 1 --runs "$RUNS" --export-markdown "$work/table.md" \
  -n "rule only" "$PARALLEX ${common[*]} -- sh -c '$loop'" \
  -n "ask mode on" "$PARALLEX ${common[*]} --ask -- sh -c '$loop'" >/dev/null
echo "$REQUESTS requests to an allowed name per sealed run, $RUNS runs each:"
cat "$work/table.md"
