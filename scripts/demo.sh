#!/usr/bin/env bash
# The main job: builds what the demo needs (the parallex executable and its
# plugins, not the tests: scripts/test.sh builds those) and runs a sealed demo
# with the embedded default profile, showing what a run may do and what it is
# refused.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The same flags as scripts/test.sh's build (-Werror included: Debian 12 builds
# it warning-free, CI checks that), so the tests afterwards reuse every object.
# parallex-docs: the man pages and completions README points at (build/share).
PARALLEX_BUILD_TARGETS="parallex parallex-plugins parallex-docs" scripts/build.sh -DPARALLEX_WERROR=ON
exec build/parallex demo
