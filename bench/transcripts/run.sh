#!/usr/bin/env bash
# Parse throughput of the transcript parsers against ccusage on the same synthetic files.
#   bench/transcripts/run.sh [--size-mb N] [--runs N] [--bench-bin PATH] [--baseline-bin PATH]
#                            [--parallex PATH] [--work DIR]
# Beside them, two floors: `cat` (reading only) and the validating floor (the parsers' reader and
# JSON parser on every line, nothing extracted: `transcripts_parse_bench --harness floor`).
# Builds transcripts_parse_bench (Release) unless --bench-bin is given, generates a ~N MB
# Claude Code set and a ~N MB Codex set (default 500), runs each tool on a warm page
# cache and reports wall and CPU time of the fastest of --runs runs (default 5). ccusage (npm i -g ccusage) reads Claude's projects via
# CLAUDE_CONFIG_DIR and Codex via CODEX_HOME; HOME points at an empty dir so it reads nothing else.
# --baseline-bin: another build of transcripts_parse_bench (before a change), timed in the same
# run on the same files, as an extra row per set ("<set> (baseline)"), so that a change is
# measured against the same `cat`, ccusage and load.
# --parallex: the `parallex` executable (default: build/parallex when it is there). The command a
# user runs, `parallex transcripts --harness H --json DIR`, is timed too: the parser in its plugin
# process, the sessions handed to the host, checked there and printed; that is the number to hold
# against ccusage's command.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
size_mb=500
runs=5
bench_bin=""
baseline_bin=""
parallex_bin=""
[[ -x "$repo/build/parallex" ]] && parallex_bin="$repo/build/parallex"
work="${TMPDIR:-/tmp}/px-transcripts-bench"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size-mb) size_mb="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --bench-bin) bench_bin="$2"; shift 2 ;;
    --baseline-bin) baseline_bin="$2"; shift 2 ;;
    --parallex) parallex_bin="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

if [[ -z "$bench_bin" ]]; then
  build="$repo/build-bench"
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPARALLEX_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" --target transcripts_parse_bench -j2 >/dev/null
  bench_bin="$(find "$build" -name transcripts_parse_bench -type f -perm -u+x -print -quit)"
  cmake --build "$build" --target transcripts_json_floor -j2 >/dev/null
fi
# -print -quit, not | head -1: with pipefail, head closing the pipe early fails the script.
floor_bin="$(find "$(dirname "$bench_bin")/.." -name transcripts_json_floor -type f -perm -u+x -print -quit 2>/dev/null || true)"
[[ -x "$bench_bin" ]] || { echo "transcripts_parse_bench not found (use --bench-bin)" >&2; exit 1; }
[[ -z "$baseline_bin" || -x "$baseline_bin" ]] || { echo "--baseline-bin $baseline_bin is not an executable" >&2; exit 1; }

mkdir -p "$work"
for set in claude codex; do
  stamp="$work/$set.size"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$size_mb" ]]; then
    rm -rf "${work:?}/$set"
    echo "generating ${size_mb} MB $set set in $work/$set ..." >&2
    python3 "$here/gen.py" "$set" "$work/$set" "$size_mb"
    echo "$size_mb" > "$stamp"
  fi
done
empty_home="$work/empty-home"
mkdir -p "$empty_home"

# Wall time counts waiting for a core on a busy machine; CPU time (user + system, all
# threads) does not. Both are reported; each tool runs $runs times, the least of each is kept.
measure() {  # prints "wall cpu": the least of each over $runs runs of "$@"
  local best_wall="" best_cpu="" out
  out=$(mktemp)
  for ((i = 0; i < runs; i++)); do
    # Wall time from the shell's microsecond clock (time's %e has 10 ms steps: half of cat's time).
    local t0=$EPOCHREALTIME
    /usr/bin/time -f "%U %S" -o "$out" "$@" >/dev/null 2>&1 || true
    local wall
    wall=$(echo "$EPOCHREALTIME - $t0" | bc -l)
    read -r user sys < <(tail -1 "$out")
    local cpu
    cpu=$(echo "$user + $sys" | bc -l)
    if [[ -z "$best_wall" ]] || (( $(echo "$wall < $best_wall" | bc -l) )); then best_wall=$wall; fi
    if [[ -z "$best_cpu" ]] || (( $(echo "$cpu < $best_cpu" | bc -l) )); then best_cpu=$cpu; fi
  done
  rm -f "$out"
  echo "$best_wall $best_cpu"
}
# Whether "$@" succeeds, run once; if not, says so with the end of what it printed on stderr, so
# that a command that fails at once is not timed as a fast one.
works() {
  local err
  err=$(mktemp)
  if "$@" >/dev/null 2>"$err"; then
    rm -f "$err"
    return 0
  fi
  echo "not timed: $* failed: $(tail -c 300 "$err" | tr '\n' ' ')" >&2
  rm -f "$err"
  return 1
}
fmt() { printf "%.${2:-2}f" "$1"; }
ratio() { if (( $(echo "$2 > 0" | bc -l) )); then printf '%.1fx' "$(echo "$1 / $2" | bc -l)"; else echo "n/a"; fi; }

# ccusage, pinned: 20.0.24 is the newest release with a Linux binary (20.0.26 has
# none). The npm package is a Node launcher for a native binary; the binary itself
# is timed. A global install of another version is left alone: the pinned one is
# installed for the bench only, under the work folder (npm, once).
ccusage_version=20.0.24
ccusage_bin=""
native_of() { find "$1" -path '*/@ccusage/*/bin/ccusage' -type f -print -quit 2>/dev/null; }
if command -v ccusage >/dev/null 2>&1 && [[ "$(ccusage --version 2>/dev/null)" == *"$ccusage_version"* ]]; then
  ccusage_bin="$(native_of "$(dirname "$(readlink -f "$(command -v ccusage)")")/../node_modules")"
fi
if [[ -z "$ccusage_bin" ]] && command -v npm >/dev/null 2>&1; then
  pinned="$work/ccusage-$ccusage_version"
  [[ -n "$(native_of "$pinned")" ]] ||
    npm install --no-audit --no-fund --prefix "$pinned" "ccusage@$ccusage_version" >/dev/null 2>&1 || true
  ccusage_bin="$(native_of "$pinned")"
fi
# npm can leave the native binary without its execute bit (20.0.24's did): set it, or every
# ccusage run fails at once and its columns read 0.
if [[ -n "$ccusage_bin" && ! -x "$ccusage_bin" ]]; then
  chmod u+x "$ccusage_bin" 2>/dev/null || ccusage_bin=""
fi
if [[ -n "$ccusage_bin" ]]; then
  echo "ccusage: $ccusage_bin ($("$ccusage_bin" --version 2>/dev/null || echo '?'))" >&2
else
  echo "ccusage $ccusage_version could not be installed (npm): its columns are n/a" >&2
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)" >&2

# The floor of any reader: only copying the files out of the page cache, with
# as many readers as cores (no parsing at all).
read_floor() {
  find "$1" -type f -print0 | xargs -0 -P "$(nproc)" -n 16 cat > /dev/null
}
export -f read_floor 2>/dev/null || true
floors=()
commands=()

printf '| set | size (MB) | parallex wall (s) | parallex CPU (s) | parallex MB/s (wall / CPU) | ccusage wall (s) | ccusage CPU (s) | ccusage MB/s (wall / CPU) | parallex faster: wall | parallex faster: CPU |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for set in claude codex; do
  dir="$work/$set"
  bytes=$(du -sb "$dir" | cut -f1)
  mb=$(echo "$bytes / 1000000" | bc -l)
  find "$dir" -type f -exec cat {} + > /dev/null  # warm the page cache for both tools
  if [[ $set == claude ]]; then harness=claude-code; else harness=codex; fi
  if [[ -n "$baseline_bin" ]]; then
    read -r bw bc < <(measure "$baseline_bin" --harness "$harness" "$dir")
    printf '| %s (baseline) | %.0f | %s | %s | %s / %s | | | | | |\n' "$harness" "$mb" "$(fmt "$bw")" "$(fmt "$bc")" \
      "$(fmt "$(echo "$mb / $bw" | bc -l)" 0)" "$(fmt "$(echo "$mb / $bc" | bc -l)" 0)"
  fi
  read -r ow oc < <(measure "$bench_bin" --harness "$harness" "$dir")
  read -r fw _ < <(measure bash -c "$(declare -f read_floor); read_floor '$dir'")
  # The validating floor: the parsers' reader and simdjson parser on every line, on the same
  # threads, nothing extracted (every line must be validated: one broken anywhere is malformed).
  read -r vw vc < <(measure "$bench_bin" --harness floor "$dir")
  floors+=("$harness: cat $(fmt "$fw" 3) s; read + validate $(fmt "$vw" 3) s wall, $(fmt "$vc" 3) s CPU ($(ratio "$vw" "$fw") cat); parallex $(fmt "$ow" 3) s ($(ratio "$ow" "$fw") cat, $(ratio "$ow" "$vw") the validating floor)")
  cw="n/a"; ccpu="n/a"; cmbs="n/a"; rw="n/a"; rc="n/a"
  if [[ -n "$ccusage_bin" ]]; then
    if [[ $set == claude ]]; then
      read -r cw ccpu < <(measure env HOME="$empty_home" CLAUDE_CONFIG_DIR="$dir" "$ccusage_bin" claude session --json --offline)
    else
      read -r cw ccpu < <(measure env HOME="$empty_home" CODEX_HOME="$dir" "$ccusage_bin" codex session --json --offline)
    fi
    rw=$(ratio "$cw" "$ow"); rc=$(ratio "$ccpu" "$oc")
    if [[ -n "$parallex_bin" ]] && works "$parallex_bin" transcripts --harness "$harness" --json "$dir"; then
      read -r pw pc < <(measure "$parallex_bin" transcripts --harness "$harness" --json "$dir")
      commands+=("$harness: parallex $(fmt "$pw" 3) s wall, $(fmt "$pc" 3) s CPU; ccusage $(fmt "$cw" 3) s wall, $(fmt "$ccpu" 3) s CPU; parallex faster: $(ratio "$cw" "$pw") wall, $(ratio "$ccpu" "$pc") CPU; $(ratio "$pw" "$fw") cat")
    fi
    cmbs="$(fmt "$(echo "$mb / $cw" | bc -l)" 0) / $(fmt "$(echo "$mb / $ccpu" | bc -l)" 0)"
    cw=$(fmt "$cw"); ccpu=$(fmt "$ccpu")
  fi
  printf '| %s | %.0f | %s | %s | %s / %s | %s | %s | %s | %s | %s |\n' "$harness" "$mb" "$(fmt "$ow")" "$(fmt "$oc")" \
    "$(fmt "$(echo "$mb / $ow" | bc -l)" 0)" "$(fmt "$(echo "$mb / $oc" | bc -l)" 0)" "$cw" "$ccpu" "$cmbs" "$rw" "$rc"
done
echo
if ((${#commands[@]})); then
  echo "The commands as a user runs them (parallex transcripts --harness H --json DIR; ccusage H session --json):"
  printf '  %s\n' "${commands[@]}"
  echo
fi
echo "Floors, wall time, in the same minutes (cat: $(nproc) readers, no parsing):"
printf '  %s\n' "${floors[@]}"
if [[ -n "$floor_bin" ]]; then
  for set in claude codex; do
    echo
    echo "simdjson alone, reading only the first keys, $set set (one core, files in memory):"
    "$floor_bin" "$work/$set"
  done
fi
