#!/usr/bin/env bash
# clang-tidy over host/ and plugins/ with the checks that catch the memory
# bugs a review misses (a pointer into a temporary's buffer, a string_view of
# a destroyed string, a moved-from object used again). Any finding fails.
# Usage: scripts/tidy.sh [BUILD_DIR]   (default: build, built; see below for what of it is used)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
checks='-*,clang-analyzer-cplusplus.InnerPointer,clang-analyzer-cplusplus.NewDelete,clang-analyzer-core.*'
checks+=',bugprone-dangling-handle,bugprone-use-after-move,bugprone-undefined-memory-manipulation'
checks+=',bugprone-string-constructor,bugprone-unused-return-value'
# clang's own lifetime warnings: a pointer or string_view into a temporary std::string.
checks+=',clang-diagnostic-dangling-gsl,clang-diagnostic-dangling,clang-diagnostic-return-stack-address'

tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
runner=$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)
if [ -z "$tidy" ] || [ -z "$runner" ]; then
  echo "scripts/tidy.sh: clang-tidy is not installed (apt-get install clang-tidy)" >&2
  exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "scripts/tidy.sh: $build is not configured: build first (scripts/build.sh)" >&2
  exit 1
fi

# Every file is checked on its own, as it is written: the build compiles
# batches (the unity build, top-level CMakeLists.txt), so the file-by-file
# compile commands come from a tree configured beside it without batches
# (configured, never built: $build/tidy-db).
files_db="$build/tidy-db"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S . -B "$files_db" -G Ninja -DCMAKE_BUILD_TYPE="${build_type:-RelWithDebInfo}" -DPARALLEX_UNITY_BUILD=OFF \
  -DPARALLEX_BUILD_TESTS=OFF -DPARALLEX_BUILD_BENCH=OFF >/dev/null

# The database is GCC's: drop the flags clang does not know and GCC's
# precompiled header, so every file is analysed rather than refused.
# Generated files (build/) are not ours.
#
# A file whose every input is unchanged since a clean check is not checked
# again: its key is the hash of the checks, clang-tidy's version, its compile
# arguments and the content of the file and every header it includes (the
# list ninja recorded when it built the file). A file ninja has no list for is
# always checked. A file the build compiled in a batch has the batch's list
# (every header of the batch, and its other files): a superset, so a change
# in any of them checks the file again. PARALLEX_TIDY_CACHE=off checks every file.
cache="${PARALLEX_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parallex/tidy}"
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
version=$("$tidy" --version | tr -d '\n')
ninja -C "$build" -t deps >"$db/deps.txt" 2>/dev/null || : >"$db/deps.txt"
python3 - "$build" "$db" "$cache" "$checks|$version|$(sha256sum <"$0")" "$files_db" <<'EOF'
import glob, hashlib, json, os, re, shlex, sys
build, db, cache, salt, files_db = sys.argv[1:6]
here = os.getcwd()
gcc_only = ("-Werror", "-fno-lifetime-dse", "-fstack-clash-protection", "-fcf-protection", "-Wno-maybe-uninitialized",
            "-Wno-stringop-overflow", "-Wno-dangling-reference", "-Wno-restrict", "-Wno-array-bounds")
deps, target = {}, None
for line in open(os.path.join(db, "deps.txt")):
    if line.startswith("    ") and target:
        deps[target].append(os.path.abspath(os.path.join(build, line.strip())))  # ccache may write them relative
    elif line.strip():
        target = line.split(":", 1)[0]
        deps[target] = []
# A batch's files share its object's list (CMake's unity sources include them by path).
for unity in glob.glob(os.path.join(build, "**", "Unity", "unity_*.cxx"), recursive=True):
    listed = deps.get(os.path.relpath(unity, build) + ".o")
    if listed:
        for member in re.findall(r'^#include "(.+)"$', open(unity).read(), re.M):
            deps[os.path.abspath(member)] = listed
digests = {}
def digest(path):
    if path not in digests:
        try:
            # A batch's source (CMake's unity file) names the clone's path: hashed without it,
            # as the arguments are, so that another clone of the same tree hits the same keys.
            digests[path] = hashlib.sha256(open(path, "rb").read().replace(here.encode(), b"@")).hexdigest()
        except OSError:
            digests[path] = "missing"
    return digests[path]
entries, keys, unchanged = [], {}, 0
for e in json.load(open(os.path.join(files_db, "compile_commands.json"))):
    f = os.path.abspath(os.path.join(e["directory"], e["file"]))
    if not f.startswith((os.path.join(here, "host") + "/", os.path.join(here, "plugins") + "/")):
        continue
    args = e.get("arguments") or shlex.split(e["command"])
    # GCC's precompiled header (cmake_pch.hxx.gch) is not clang's: each file is read with its own includes.
    kept = []
    for a in args:
        if kept and kept[-1] == "-include" and a.endswith("cmake_pch.hxx"):
            kept.pop()
        elif a != "-Winvalid-pch" and not a.startswith(gcc_only):
            kept.append(a)
    e["arguments"] = kept
    e.pop("command", None)
    output = e.get("output") or (args[args.index("-o") + 1] if "-o" in args[:-1] else None)
    inputs = deps.get(f) or (deps.get(os.path.relpath(os.path.join(e["directory"], output), files_db)) if output else None)
    if inputs:
        # Paths are hashed relative to the clone: another clone of the same tree hits the same keys.
        h = hashlib.sha256((salt + "\0" + "\0".join(e["arguments"])).replace(here, "@").encode())
        for path in sorted(set(inputs), key=lambda p: p.replace(here, "@")):
            h.update((path.replace(here, "@") + "\0" + digest(path) + "\0").encode())
        key = h.hexdigest()
        if cache != "off" and os.path.exists(os.path.join(cache, key)):
            unchanged += 1
            continue
        keys[f] = key
    entries.append(e)
json.dump(entries, open(os.path.join(db, "compile_commands.json"), "w"))
open(os.path.join(db, "keys.txt"), "w").write("".join(k + "\n" for k in keys.values()))
print(f"clang-tidy: {len(entries) + unchanged} files of host/ and plugins/, {unchanged} unchanged since a clean check "
      f"({cache}), {len(entries)} to check", file=sys.stderr)
EOF

start=$(date +%s)
# clang's checks model std::string, not std::filesystem::path: a pointer kept
# from c_str() or data() of a call's result (the temporary dies at the `;`,
# as path.filename().c_str() did) is found by its shape. A call that returns
# a reference is fine: mark that line `// lifetime: a reference`.
kept=$(grep -rnE '(char|auto)[[:space:]]*\*[[:space:]]*[A-Za-z_][A-Za-z_0-9]*[[:space:]]*=[^;]*\)[[:space:]]*\.[[:space:]]*(c_str|data)\(\)[[:space:]]*;' \
         host plugins sdk --include='*.cpp' --include='*.hpp' --include='*.h' | grep -v 'lifetime: a reference' || true)
if [ -n "$kept" ]; then
  echo "a pointer kept from c_str()/data() of a temporary (it dangles at the end of the statement):"
  echo "$kept"
  exit 1
fi

# -quiet: only findings; WarningsAsErrors: a finding fails the run.
set +e
status=0
[ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$db/compile_commands.json")" = 0 ] ||
"$runner" -clang-tidy-binary "$tidy" -p "$db" -j "$(nproc)" -quiet \
  -config="{Checks: '$checks', WarningsAsErrors: '*'}" -extra-arg=-Wno-unknown-warning-option \
  -extra-arg=-Xclang -extra-arg=-analyzer-config -extra-arg=-Xclang -extra-arg=mode=shallow \
  -header-filter="$PWD/(host|plugins|sdk)/" "$PWD/(host|plugins)/" >"$db/out.txt" 2>&1
status=$?
set -e
if [ "$status" = 0 ] && [ "$cache" != off ]; then
  mkdir -p "$cache"
  (cd "$cache" && xargs -r touch <"$db/keys.txt")
  find "$cache" -type f -mtime +30 -delete  # keys of files long changed
fi
# The findings (and errors), without the runner's per-file command lines.
sed 's/\x1b\[[0-9;]*m//g' "$db/out.txt" | grep -v -e '^[0-9]* warnings\? generated' -e "^$tidy " -e '^Suppressed ' \
  -e '^Use -header-filter' -e '^Running clang-tidy' || true
echo "clang-tidy: $(( $(date +%s) - start )) s, $( [ "$status" = 0 ] && echo 'no finding' || echo 'FINDINGS (see above)')"
exit "$status"
