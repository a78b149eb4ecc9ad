#!/usr/bin/env bash
# Installs the SDK to a temporary prefix, builds examples/gemini-plugin against
# it out of tree, and checks that `parallex plugins` loads it.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build --prefix "$prefix" --component parallex-dev >/dev/null
cmake -S examples/gemini-plugin -B "$prefix/example-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/example-build" >/dev/null
mkdir -p "$prefix/plugins"
cp "$prefix/example-build/gemini.so" "$prefix/plugins/"
out=$(PARALLEX_PLUGIN_PATH="$prefix/plugins" build/parallex plugins --json)
echo "$out" | grep -q '"name": "gemini"' || { echo "the example plugin did not load:"; echo "$out"; exit 1; }
det=$(PARALLEX_PLUGIN_PATH="$prefix/plugins" build/parallex detect -- gemini -p hello)
echo "$det" | grep -q '^gemini' || { echo "the example plugin did not claim 'gemini':"; echo "$det"; exit 1; }
echo "example plugin: built against the installed SDK, loaded and detected: ok"
