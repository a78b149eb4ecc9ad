#!/usr/bin/env bash
# What calling plugins in a process of their own costs: `detect`, `policy
# show` and `run -- /bin/true` with this tree's parallex (plugins out of
# process) beside a parallex that loads them in its own process (a build of
# an earlier commit, given as the baseline), in one run, medians of hyperfine
# -N. Each executable loads the plugins of its own build tree. Prints a
# Markdown table.
#
#   bench/plugins/calls.sh path/to/parallex path/to/baseline/parallex [runs]
set -euo pipefail
NEW=${1:?usage: calls.sh NEW_PARALLEX BASELINE_PARALLEX [runs]}
OLD=${2:?usage: calls.sh NEW_PARALLEX BASELINE_PARALLEX [runs]}
RUNS=${3:-30}
command -v hyperfine >/dev/null || { echo "hyperfine is missing (apt-get install -y hyperfine)" >&2; exit 2; }
NEW=$(realpath "$NEW")
OLD=$(realpath "$OLD")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/home" "$work/runtime"
cd "$work/ws"
export PARALLEX_HOME="$work/home" XDG_RUNTIME_DIR="$work/runtime"
unset PARALLEX_PLUGIN_PATH

echo "| command | in process (baseline) | own process | difference |"
echo "|---|---|---|---|"
for args in "detect -- claude" "policy show -- /bin/true" "run -- /bin/true"; do
  hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$work/out.json" \
    "$OLD $args" "$NEW $args" >/dev/null 2>&1
  python3 - "$work/out.json" "$args" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
old, new = (x["median"] * 1000 for x in r)
print(f"| `parallex {sys.argv[2]}` | {old:.1f} ms | {new:.1f} ms | {new - old:+.1f} ms |")
EOF
done
