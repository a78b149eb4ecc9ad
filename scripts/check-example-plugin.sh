#!/usr/bin/env bash
# Installs the SDK to a temporary prefix, builds examples/gemini-plugin against
# it out of tree, and checks that `parallex plugins` loads it; then builds the
# plugin and the CMake project that docs/plugins.md shows under "Writing a
# plugin", as written there, and checks it with `parallex plugins --check`.
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
grep -q '"name": "gemini"' <<<"$out" || { echo "the example plugin did not load:"; echo "$out"; exit 1; }
det=$(PARALLEX_PLUGIN_PATH="$prefix/plugins" build/parallex detect -- gemini -p hello)
grep -q '^gemini' <<<"$det" || { echo "the example plugin did not claim 'gemini':"; echo "$det"; exit 1; }
echo "example plugin: built against the installed SDK, loaded and detected: ok"

# The Python harness's example: detected in its launch forms, its read-only
# file inside its state folder and its project file in the policy, its
# history read from the project.
cmake -S examples/aider-plugin -B "$prefix/aider-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="-Werror" >/dev/null
cmake --build "$prefix/aider-build" >/dev/null
cp "$prefix/aider-build/aider.so" "$prefix/plugins/"
for cmd in "aider --model x" "python3 -m aider" "uvx --from aider-chat aider" "pipx run aider-chat"; do
  # shellcheck disable=SC2086 # the command's words
  det=$(PARALLEX_PLUGIN_PATH="$prefix/plugins" build/parallex detect -- $cmd)
  grep -q '^aider' <<<"$det" || { echo "the aider example did not claim '$cmd':"; echo "$det"; exit 1; }
done
pol=$(PARALLEX_PLUGIN_PATH="$prefix/plugins" build/parallex policy show --harness aider -- /bin/true)
for want in "oauth-keys.env" ".aider.conf.yml"; do
  grep -q -F "$want" <<<"$pol" || { echo "policy show lacks $want:"; echo "$pol"; exit 1; }
done
echo "aider example: built, detected in its Python forms, its files in the policy: ok"

# The snippets of docs/plugins.md, as a reader copies them.
doc="$prefix/doc-plugin"
mkdir -p "$doc"
awk -v dir="$doc" '
  /^## Writing a plugin/ { on = 1 }
  on && /^```cpp$/ && !cpp_done { out = dir "/gemini.cpp"; next }
  on && /^```cmake$/ && !cmake_done { out = dir "/CMakeLists.txt"; next }
  on && /^```$/ && out != "" { if (out ~ /cpp$/) cpp_done = 1; else cmake_done = 1; out = ""; next }
  out != "" { print > out }
' docs/plugins.md
[ -s "$doc/gemini.cpp" ] && [ -s "$doc/CMakeLists.txt" ] || { echo "docs/plugins.md: the snippets were not found"; exit 1; }
cmake -S "$doc" -B "$doc/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" >/dev/null
cmake --build "$doc/build" >/dev/null
mkdir -p "$prefix/doc-plugins"
cp "$doc/build/gemini.so" "$prefix/doc-plugins/"
check=$(PARALLEX_PLUGIN_PATH="$prefix/doc-plugins" build/parallex plugins --check 2>&1) ||
  { echo "the plugin of docs/plugins.md failed its check:"; echo "$check"; exit 1; }
echo "docs/plugins.md: its plugin and CMake project build against the installed SDK and pass --check: ok"
