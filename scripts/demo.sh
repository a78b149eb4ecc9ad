#!/usr/bin/env bash
# The main job: builds what the demo needs (the parallex executable and its
# plugins, not the tests: scripts/test.sh builds those) and runs a sealed demo
# with the embedded default profile, showing what a run may do and what it is
# refused.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
PARALLEX_BUILD_TARGETS="parallex parallex-plugins" scripts/build.sh
exec build/parallex demo
