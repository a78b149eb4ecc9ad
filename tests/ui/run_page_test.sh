#!/bin/sh
# Runs the page's end-to-end test (browser/page_test.mjs) in Debian's Chromium.
# Usage: run_page_test.sh PATH/TO/parallex ARTIFACTS_DIR
# Exit 77 (ctest: skipped) only when chromium or node is missing, or when
# playwright-core is not installed and npm cannot install it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
parallex=$1
artifacts=$2
chromium=${PARALLEX_TEST_CHROMIUM:-/usr/bin/chromium}
if ! command -v node >/dev/null 2>&1; then
  echo "SKIPPED: node is not installed (apt-get install nodejs npm, or scripts/install-deps.sh), so the page's browser test cannot run."
  exit 77
fi
if [ ! -x "$chromium" ]; then
  echo "SKIPPED: $chromium is missing (apt-get install chromium, or PARALLEX_WITH_TEST_TOOLS=1 scripts/install-deps.sh), so the page's browser test cannot run."
  exit 77
fi
if [ ! -f "$here/browser/node_modules/playwright-core/package.json" ]; then
  echo "Installing playwright-core into $here/browser/node_modules (its lockfile's version) ..."
  if ! npm ci --prefix "$here/browser" --no-audit --no-fund --loglevel=error >/dev/null 2>&1; then
    echo "SKIPPED: npm could not install playwright-core (no registry?); scripts/install-deps.sh installs it."
    exit 77
  fi
fi
exec node "$here/browser/page_test.mjs" "$parallex" "$artifacts"
