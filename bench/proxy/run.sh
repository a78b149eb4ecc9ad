#!/usr/bin/env bash
# Proxy benchmark: one tunnel's bulk throughput, tunnel set-up latency
# (p50/p99 of connect + CONNECT + one round trip, 1000 runs) and memory per
# idle tunnel (proxy RSS delta with 1000 open), side by side for direct
# loopback TCP, `parallex proxy` and tinyproxy (same auth, same target).
#   bench/proxy/run.sh [path/to/parallex]   (a Release build gives fair numbers)
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
ulimit -n 16384 2>/dev/null || true

c++ -O2 -std=c++20 -pthread -o "$work/proxy_bench" "$here/proxy_bench.cpp"
password="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
printf '%s\n' "$password" > "$work/password"
chmod 600 "$work/password"

rows=()
rows+=("$("$work/proxy_bench" --label direct-tcp)")

"$parallex" proxy --listen 127.0.0.1:0 --local-servers --password-file "$work/password" \
  --log "$work/parallex.jsonl" --max-connections 4000 > "$work/parallex.out" 2>&1 &
pids+=($!)
ppid=$!
for _ in $(seq 50); do [ -s "$work/parallex.out" ] && break; sleep 0.1; done
pport="$(head -1 "$work/parallex.out" | sed 's/.*://')"
rows+=("$("$work/proxy_bench" --label parallex --proxy "$pport" --auth "px:$password" --pid "$ppid")")

# The reference: the simplest relay there is (blocking splice, a thread per
# direction, nothing checked). Its row is the most a relay gets on this machine.
c++ -O2 -std=c++20 -pthread -o "$work/reference_relay" "$here/reference_relay.cpp"
"$work/reference_relay" > "$work/reference.out" 2>&1 &
pids+=($!)
rpid=$!
for _ in $(seq 50); do [ -s "$work/reference.out" ] && break; sleep 0.1; done
rport="$(head -1 "$work/reference.out" | sed 's/.*://')"
rows+=("$("$work/proxy_bench" --label reference --proxy "$rport" --auth "px:$password" --pid "$rpid")")

# The floor: the least a relay can do per connection (one thread, blocking,
# one connection at a time, nothing checked). Only its set-up columns mean
# something: it holds one tunnel at a time and is given no pid to measure.
c++ -O2 -std=c++20 -o "$work/floor_relay" "$here/floor_relay.cpp"
"$work/floor_relay" > "$work/floor.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/floor.out" ] && break; sleep 0.1; done
fport="$(head -1 "$work/floor.out" | sed 's/.*://')"
rows+=("$("$work/proxy_bench" --label floor --proxy "$fport" --auth "px:$password")")

if command -v tinyproxy >/dev/null; then
  tport="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  cat > "$work/tinyproxy.conf" <<CONF
Port $tport
Listen 127.0.0.1
Timeout 600
MaxClients 4000
Allow 127.0.0.1
BasicAuth px $password
LogLevel Critical
DisableViaHeader Yes
CONF
  tinyproxy -d -c "$work/tinyproxy.conf" > "$work/tinyproxy.out" 2>&1 &
  pids+=($!)
  tpid=$!
  sleep 0.5
  rows+=("$("$work/proxy_bench" --label tinyproxy --proxy "$tport" --auth "px:$password" --pid "$tpid")")
else
  echo "tinyproxy not installed (apt-get install -y tinyproxy): its row is skipped" >&2
fi

direct_mbps="$(printf '%s\n' "${rows[0]}" | cut -f2)"
cores="$(nproc)"
# The ceiling: the most this machine's cores could carry through the proxy if
# every byte cost what it cost here (both ends + the proxy, CPU per GiB), as a
# share of direct. On 2 cores the proxy is a third party competing for them.
printf '| %-11s | %12s | %9s | %14s | %14s | %10s | %10s | %24s |\n' "path" "MB/s (1 GiB)" "vs direct" "proxy CPU/GiB" "$cores-core ceiling" "set-up p50" "set-up p99" "KiB per idle tunnel (1000)"
printf '|%s|%s|%s|%s|%s|%s|%s|%s|\n' "-------------" "--------------" "-----------" "----------------" "----------------" "------------" "------------" "----------------------------"
for row in "${rows[@]}"; do
  IFS=$'\t' read -r label mbps p50 p99 kib cpu ends <<< "$row"
  pct="$(awk -v a="$mbps" -v b="$direct_mbps" 'BEGIN { printf "%.0f%%", 100 * a / b }')"
  ceiling="-"
  if [ "$label" != direct-tcp ] && [ "$label" != floor ]; then
    ceiling="$(awk -v n="$cores" -v p="$cpu" -v e="$ends" -v d="$direct_mbps" \
      'BEGIN { c = n / ((p + e) / 1000) * 1073.741824; r = 100 * c / d; if (r > 100) r = 100; printf "%.0f%% of direct", r }')"
  fi
  if [ "$label" = direct-tcp ] || [ "$label" = floor ]; then kib="-"; cpu="-"; fi
  [ "$cpu" = "-" ] || cpu="$cpu ms"
  printf '| %-11s | %12s | %9s | %14s | %16s | %7s us | %7s us | %24s |\n' "$label" "$mbps" "$pct" "$cpu" "$ceiling" "$p50" "$p99" "$kib"
done
