#!/usr/bin/env bash
# Broker benchmark: requests/s and p50/p99 latency of keep-alive requests, new
# connection latency, 1 GiB throughput and the relay's CPU per GiB, for a
# direct TLS connection, the proxy's CONNECT tunnel, and connections the
# broker terminates (with request rules only; with a credential bound to the
# host, whose responses are scanned for the secret). One process, loopback.
#   bench/broker/run.sh [build-dir]   (a Release or RelWithDebInfo build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
cmake --build "$build" --target broker_bench >/dev/null
echo "$(nproc) cores, $(uname -r), $(openssl version)"
"$build/bench/broker/broker_bench" "${@:2}"
