#!/usr/bin/env bash
# Seal start-up overhead: `parallex run -- /bin/true` against bare /bin/true,
# bwrap with an equivalent set-up, the kernel's share of the same guarantees
# (kernel_floor.c), and srt (@anthropic-ai/sandbox-runtime).
# Medians of >= 50 runs (hyperfine -N), as ratios to bare /bin/true measured
# in the same run. Prints a Markdown table.
#
#   bench/seal/run.sh [path/to/parallex] [runs]
#
# Use a Release build of parallex. Needs hyperfine; bwrap and srt rows are
# skipped (and say so) when those tools are missing.
set -euo pipefail
PARALLEX=${1:-build-rel/parallex}
RUNS=${2:-50}
command -v hyperfine >/dev/null || { echo "hyperfine is missing (apt-get install -y hyperfine)" >&2; exit 2; }
[ -x "$PARALLEX" ] || { echo "no parallex at $PARALLEX" >&2; exit 2; }
PARALLEX=$(realpath "$PARALLEX")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/tmp"
cd "$work/ws"

names=("bare /bin/true")
cmds=("/bin/true")
names+=("parallex run -- /bin/true")
cmds+=("$PARALLEX run -- /bin/true")
# What is not the seal: parallex's own start-up (`check --probe` does nothing),
# and start-up + composing the policy with plugins (`policy show`). The seal's
# own cost is `run` minus `policy show`.
# The same in a run folder holding every protected path (files other programs
# run later, .git's doors): each is resolved beneath the run folder and bound
# read-only, and the supervisor remembers it and sweeps it at the end.
mkdir -p "$work/protected"
(
  cd "$work/protected"
  git init -q
  mkdir -p .vscode .claude/hooks .claude/commands .claude/agents .claude/skills .husky .devcontainer .opencode .codex \
    .agents .direnv .idea/runConfigurations .run
  for f in .vscode/tasks.json .claude/settings.json .claude/settings.local.json .mcp.json .envrc .gitmodules \
    .pre-commit-config.yaml .lefthook.yml lefthook.yml mise.toml opencode.json opencode.jsonc \
    .devcontainer/devcontainer.json .git/info/attributes; do echo '{}' > "$f"; done
)
names+=("parallex run -- /bin/true (a run folder holding every protected path)")
cmds+=("$PARALLEX run --in $work/protected -- /bin/true")
names+=("parallex --version")
cmds+=("$PARALLEX --version")
names+=("parallex start-up only (no seal)")
cmds+=("$PARALLEX check --probe-results /dev/null")
names+=("parallex policy show -- /bin/true (start-up + policy, no seal)")
cmds+=("$PARALLEX policy show -- /bin/true")
# The floor of any host built on the chosen libraries: an empty C program
# linked with the shared libraries parallex loads at start (as ldd lists them),
# so the dynamic loader maps and relocates the same set; and an empty C++
# program (libstdc++'s own start-up: the locale and iostreams).
if command -v cc >/dev/null; then
  libs=()
  while read -r lib; do libs+=("$lib"); done < <(ldd "$PARALLEX" | awk '$3 ~ /^\// {print $3}' | grep -v -e '/libc\.so' -e '/libm\.so' -e 'ld-linux')
  echo 'int main(void) { return 0; }' > "$work/floor.c"
  if cc -O2 -Wl,-z,now -o "$work/floor" "$work/floor.c" -Wl,--no-as-needed "${libs[@]}" 2>/dev/null; then
    names+=("empty program linked with parallex's ${#libs[@]} libraries ($(printf '%s ' "${libs[@]##*/}" | sed 's/ $//'))")
    cmds+=("$work/floor")
  fi
fi
if command -v c++ >/dev/null; then
  printf '#include <iostream>\nint main() { return 0; }\n' > "$work/floor.cpp"
  if c++ -O2 -Wl,-z,now -o "$work/floor-cxx" "$work/floor.cpp" 2>/dev/null; then
    names+=("empty C++ program")
    cmds+=("$work/floor-cxx")
  fi
fi
if command -v bwrap >/dev/null; then
  # Equivalent to the seal's shape: user/pid/net/ipc/uts namespaces, the
  # profile's system dirs read-only, a writable run folder, private /tmp,
  # fresh /proc and a minimal /dev, die-with-parent, new session.
  names+=("bwrap (equivalent set-up)")
  cmds+=("bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin --ro-bind /etc /etc --bind $work/tmp /tmp --bind $work/ws $work/ws --proc /proc --dev /dev --chdir $work/ws /bin/true")
else
  echo "bwrap missing: its row is skipped" >&2
fi
# The kernel's share of a run: the bwrap row's set-up plus the run's own
# cgroup (clone3 into it, removed after), Landlock and seccomp, made by the
# smallest C program that can (kernel_floor.c). parallex's row minus this one
# is Parallex's own work; this one minus bwrap's, the guarantees bwrap lacks.
cgroup2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
floor_parent=
if [ -n "$cgroup2" ] && [ "$(id -u)" = 0 ]; then
  floor_parent="$cgroup2/parallex"
  mkdir -p "$floor_parent"
elif [ -n "$cgroup2" ]; then
  own=$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup)
  [ -w "$cgroup2$own" ] && floor_parent="$cgroup2$own"
fi
if [ -z "$floor_parent" ]; then
  echo "no cgroup v2 folder to make children in (root, or a delegated scope): the kernel's share is skipped" >&2
elif cc -O2 -o "$work/kernel_floor" "$here/kernel_floor.c" 2>/dev/null; then
  names+=("the kernel's share: bwrap's set-up + the run's cgroup, Landlock, seccomp (kernel_floor.c)")
  cmds+=("$work/kernel_floor $floor_parent $work/ws $work/tmp /bin/true")
else
  echo "kernel_floor.c does not build here (a C compiler with Linux headers): its row is skipped" >&2
fi
if command -v srt >/dev/null; then
  names+=("srt true (default settings)")
  cmds+=("srt -- /bin/true")
else
  echo "srt missing: its row is skipped" >&2
fi

json="$work/result.json"
args=()
for c in "${cmds[@]}"; do args+=("$c"); done
# srt is ~100x slower; fewer warm-ups keep the run short, the count stays >= RUNS.
touch "$work/started"
hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$json" "${args[@]}" >&2
# srt leaves a socket in /tmp per run (srt-mux-PID-0.sock, whatever TMPDIR says): the ones
# made during this run whose srt has ended are removed.
for sock in /tmp/srt-mux-*-0.sock; do
  [[ -S "$sock" && "$sock" -nt "$work/started" ]] || continue
  pid=${sock#/tmp/srt-mux-}
  pid=${pid%-0.sock}
  [[ -d "/proc/$pid" ]] || rm -f "$sock"
done

python3 - "$json" "${names[@]}" <<'PY'
import json, sys, statistics
data = json.load(open(sys.argv[1]))["results"]
names = sys.argv[2:]
base = statistics.median(data[0]["times"])
print(f"| command | median | over bare | ratio | runs |")
print(f"|---|---|---|---|---|")
for name, r in zip(names, data):
    m = statistics.median(r["times"])
    print(f"| {name} | {m*1e3:.2f} ms | {(m-base)*1e3:+.2f} ms | {m/base:.1f}x | {len(r['times'])} |")
PY
