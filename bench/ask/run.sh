#!/usr/bin/env bash
# Ask mode's cost on what the rule already allows: a sealed run makes N plain
# HTTP requests (curl, through the run's proxy) to an allowed name served on
# this machine's loopback, with ask mode off and on, the two interleaved run
# by run in this one invocation (so the machine's load falls on both alike).
# Ask mode only adds work to what the rule refuses (held, asked); an allowed
# connection takes the same decision. Prints the medians as a Markdown table.
#
#   bench/ask/run.sh [path/to/parallex] [requests per run] [runs of each]
#
# Needs curl and python3 (the loopback server).
set -euo pipefail
PARALLEX=$(realpath "${1:-build/parallex}")
REQUESTS=${2:-100}
RUNS=${3:-8}
for tool in curl python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 2; }
done
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$work"' EXIT
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
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
off=() on=()
for _ in $(seq "$RUNS"); do
  off+=("$(ms "$PARALLEX" run --in "$work/ws" --allow "bench.test:$port" --local-servers="$port" -- sh -c "$loop")")
  on+=("$(ms "$PARALLEX" run --in "$work/ws" --allow "bench.test:$port" --local-servers="$port" --ask -- sh -c "$loop")")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
echo "$REQUESTS requests to an allowed name per sealed run, $RUNS runs of each, interleaved:"
echo "| run | median ms | all (ms) |"
echo "|---|---:|---|"
echo "| rule only | $(median "${off[@]}") | ${off[*]} |"
echo "| ask mode on | $(median "${on[@]}") | ${on[*]} |"
