#!/bin/sh
# Runs client.mjs (the official MCP SDK as a real client) against `parallex mcp`.
# Usage: run_client.sh PATH/TO/parallex
# Exit 77 (ctest: skipped) when node is missing or the SDK cannot be installed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
parallex=$1
if ! command -v node >/dev/null 2>&1; then
  echo "SKIPPED: node is not installed (apt-get install nodejs npm), so the MCP SDK client test cannot run."
  exit 77
fi
if [ ! -f "$here/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
  echo "Installing @modelcontextprotocol/sdk into $here/node_modules ..."
  if ! (cd "$here" && npm install --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
    echo "SKIPPED: npm could not install @modelcontextprotocol/sdk (no registry?)."
    exit 77
  fi
fi
exec node "$here/client.mjs" "$parallex"
