#!/bin/sh
# The page's figures (docs/ui.md, "The page"): see live.mjs.
#   bench/ui/run.sh [path/to/parallex] [runs] [seconds] [launches]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$here/../../tests/ui/browser/node_modules/playwright-core/package.json" ] ||
  npm ci --prefix "$here/../../tests/ui/browser" --no-audit --no-fund --loglevel=error
exec node "$here/live.mjs" "$(realpath "${1:-build/parallex}")" "${2:-10}" "${3:-20}" "${4:-5}"
