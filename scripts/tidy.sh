#!/usr/bin/env bash
# clang-tidy over host/ and plugins/ with the checks that catch the memory
# bugs a review misses (a pointer into a temporary's buffer, a string_view of
# a destroyed string, a moved-from object used again). Any finding fails.
# Usage: scripts/tidy.sh [BUILD_DIR]   (default: build; its compile_commands.json is used)
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
if [ ! -f "$build/compile_commands.json" ]; then
  echo "scripts/tidy.sh: no $build/compile_commands.json: configure first (scripts/build.sh)" >&2
  exit 1
fi

# The database is GCC's: drop the flags clang does not know, so every file
# is analysed rather than refused. Generated files (build/) are not ours.
db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'EOF'
import json, shlex, sys
gcc_only = ("-Werror", "-fno-lifetime-dse", "-fstack-clash-protection", "-fcf-protection", "-Wno-maybe-uninitialized",
            "-Wno-stringop-overflow", "-Wno-dangling-reference", "-Wno-restrict", "-Wno-array-bounds")
entries = []
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    if "/host/" not in f and "/plugins/" not in f:
        continue
    args = e.get("arguments") or shlex.split(e["command"])
    e["arguments"] = [a for a in args if not a.startswith(gcc_only)]
    e.pop("command", None)
    entries.append(e)
json.dump(entries, open(sys.argv[2], "w"))
print(f"clang-tidy: {len(entries)} files of host/ and plugins/", file=sys.stderr)
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
"$runner" -clang-tidy-binary "$tidy" -p "$db" -j "$(nproc)" -quiet \
  -config="{Checks: '$checks', WarningsAsErrors: '*'}" -extra-arg=-Wno-unknown-warning-option \
  -extra-arg=-Xclang -extra-arg=-analyzer-config -extra-arg=-Xclang -extra-arg=mode=shallow \
  -header-filter="$PWD/(host|plugins|sdk)/" "$PWD/(host|plugins)/" >"$db/out.txt" 2>&1
status=$?
set -e
# The findings (and errors), without the runner's per-file command lines.
sed 's/\x1b\[[0-9;]*m//g' "$db/out.txt" | grep -v -e '^[0-9]* warnings\? generated' -e "^$tidy " -e '^Suppressed ' \
  -e '^Use -header-filter' -e '^Running clang-tidy' || true
echo "clang-tidy: $(( $(date +%s) - start )) s, $( [ "$status" = 0 ] && echo 'no finding' || echo 'FINDINGS (see above)')"
exit "$status"
