#!/usr/bin/env bash
# The main job: builds parallex and runs a sealed demo with the embedded default
# profile, showing what a run may do and what it is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
exec build/parallex demo
