#!/usr/bin/env bash
# What the end-of-run checks cost: the supervisor's "quarantine" step
# (PARALLEX_SEAL_TIMING=1 parallex -v run), in which it moves
# aside what the run left where other programs look, walks the run folder
# for every git dir and gitfile and checks them, reads the index's gitlinks
# and hashes the objects the run wrote. Medians of RUNS sealed runs, for each
# parallex given (a baseline build first, then the one measured), in:
#   clone   a clone of this repository (git clone --no-local of the source tree)
#   tree    3,000 folders (30 x 100) with 20 gitfiles (submodule-style
#           `gitdir: ` files naming git dirs in .git/modules), in a repository
#   nm      a real node_modules (npm install of a few packages), when npm and
#           the registry are reachable (skipped otherwise)
# Each tree three ways: "first" (no walk cache: fresh state before each run),
# "later" (the same state kept from run to run), and "commit" (each run
# commits a change: the index and new loose objects are checked).
#
# Usage: bench/seal/git_checks.sh [RUNS] PARALLEX [PARALLEX...]
set -euo pipefail
runs=9
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then runs=$1; shift; fi
[[ $# -ge 1 ]] || { echo "usage: $0 [RUNS] PARALLEX [PARALLEX...]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${HOME}/.cache/px-git-checks.XXXXXX")
trap 'rm -rf "$work"' EXIT
g="git -c user.name=b -c user.email=b@example.com -c init.defaultBranch=main -c protocol.file.allow=always"

git clone -q --no-local "$src" "$work/clone"
mkdir -p "$work/tree" && (
  cd "$work/tree" && $g init -q && echo x > README && $g add README && $g commit -qm init
  for i in $(seq 1 30); do for j in $(seq 1 100); do mkdir -p "d$i/e$j"; done; done
  $g init -q --bare "$work/lib.git"
  for k in $(seq 1 20); do
    # A submodule-style gitfile, as `git submodule update --init` leaves it.
    mkdir -p ".git/modules/m$k" "d$k/m"
    $g init -q --bare ".git/modules/m$k"
    printf 'gitdir: ../../.git/modules/m%s\n' "$k" > "d$k/m/.git"
  done
)
if command -v npm >/dev/null && curl -sS -o /dev/null --max-time 10 https://registry.npmjs.org/left-pad; then
  mkdir -p "$work/nm" && (cd "$work/nm" && $g init -q && echo x > README && $g add README && $g commit -qm init &&
    npm install -q --no-audit --no-fund eslint webpack typescript >/dev/null 2>&1 || true)
fi

# The quarantine step's time from a run's -v output (PARALLEX_SEAL_TIMING=1), in ms.
step_ms() { sed -n 's/.*timing: supervisor: quarantine \([0-9.]*\) ms.*/\1/p' "$1" | tail -1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

printf '%-6s %-7s %-40s %s\n' tree how parallex "quarantine step, ms (median of $runs)"
for tree in clone tree nm; do
  [[ -d "$work/$tree" ]] || continue
  for how in first later commit; do
    # Each parallex in turn, in the same minute: the first given is the baseline.
    for exe in "$@"; do
      state="$work/state"
      rm -rf "$state"
      times=()
      for _ in $(seq 1 "$runs"); do
        [[ $how == first ]] && rm -rf "$state"
        if [[ $how == commit ]]; then
          cmd="echo x >> bench-file && $g add bench-file && $g commit -qm x"
        else
          cmd=true
        fi
        (cd "$work/$tree" && PARALLEX_HOME="$state" PARALLEX_SEAL_TIMING=1 "$exe" -v run -- sh -c "$cmd" \
          >/dev/null 2>"$work/err") || { echo "a run failed in $tree:" >&2; cat "$work/err" >&2; exit 1; }
        times+=("$(step_ms "$work/err")")
      done
      printf '%-6s %-7s %-40s %s\n' "$tree" "$how" "$exe" "$(printf '%s\n' "${times[@]}" | median)"
    done
  done
done
