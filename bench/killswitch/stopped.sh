#!/usr/bin/env bash
# The kill switch when one supervisor does not answer. Three real sealed runs
# (each a detached daemon, a double fork and two sleepers); then, timed with
# the real commands, `parallex pause --all` and `parallex kill --all`:
#   healthy  every supervisor answers (the baseline, same run of this script)
#   stopped  one supervisor stopped with SIGSTOP
#   hung     one supervisor frozen in a cgroup of its own (blocked in the
#            kernel, deaf to SIGCONT: as in a system call that never returns;
#            needs root and cgroup v2)
# Each round checks that every process of the three runs is gone after the
# kill. Prints a markdown table: median and worst of ROUNDS rounds.
#   bench/killswitch/stopped.sh [path/to/parallex] [rounds]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
parallex="${1:-${PARALLEX:-$root/build/parallex}}"
rounds="${2:-10}"
work="$(mktemp -d)"
hang=""
cleanup() {
  [ -n "$hang" ] && { echo 0 > "$hang/cgroup.freeze" 2>/dev/null || true; }
  pkill -KILL -f "sleep 4242\.$$" 2>/dev/null || true
  [ -n "$hang" ] && { sleep 0.2; rmdir "$hang" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home" "$work/runtime" "$work/run"
chmod 700 "$work/home" "$work/runtime"
export PARALLEX_HOME="$work/home" XDG_RUNTIME_DIR="$work/runtime"
cat > "$work/run/tree.sh" <<EOF
setsid sh -c 'while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 &
(sh -c 'sleep 4242.$$ & exit 0' &)
sleep 4242.$$ &
sleep 4242.$$ &
echo ok > "\$1/ready"
wait
EOF

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
left() { pgrep -f "sleep 4242\.$$" | wc -l; }

# One round of CASE: prints "pause_ms kill_ms all_ended".
round() {
  local case="$1" pids=() i sup
  rm -f "$work/run"/ready*
  for i in 0 1 2; do
    mkdir -p "$work/run/r$i"; rm -f "$work/run/r$i/ready"
    "$parallex" run --in "$work/run" -- sh "$work/run/tree.sh" "$work/run/r$i" >/dev/null 2>&1 &
    pids+=($!)
  done
  for _ in $(seq 300); do
    [ -e "$work/run/r0/ready" ] && [ -e "$work/run/r1/ready" ] && [ -e "$work/run/r2/ready" ] && break
    sleep 0.1
  done
  sup="${pids[1]}"
  case "$case" in
    stopped) kill -STOP "$sup" ;;
    hung)
      echo "$sup" > "$hang/cgroup.procs"
      echo 1 > "$hang/cgroup.freeze"
      for _ in $(seq 100); do grep -q 'frozen 1' "$hang/cgroup.events" && break; sleep 0.02; done ;;
  esac
  local t0 t1 t2
  t0=$(now_ms); "$parallex" pause --all >/dev/null
  t1=$(now_ms); "$parallex" kill --all >/dev/null
  t2=$(now_ms)
  local ended=yes
  for _ in $(seq 40); do [ "$(left)" = 0 ] && break; sleep 0.05; done
  [ "$(left)" = 0 ] || ended=no
  case "$case" in
    stopped) kill -CONT "$sup" ;;
    hung) echo 0 > "$hang/cgroup.freeze" ;;
  esac
  wait "${pids[@]}" 2>/dev/null || true
  "$parallex" resume --all >/dev/null
  echo "$((t1 - t0)) $((t2 - t1)) $ended"
}

stats() {  # median and max of the numbers on stdin
  sort -n | awk '{v[NR]=$1} END {printf "%d | %d", v[int((NR+1)/2)], v[NR]}'
}

cases=(healthy stopped)
if [ "$(id -u)" = 0 ] && mount | grep 'type cgroup2' >/dev/null; then
  mnt="$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)"
  hang="$mnt/pxbench-hang-$$"
  mkdir "$hang" && [ -e "$hang/cgroup.freeze" ] && cases+=(hung)
fi
printf 'load average: %s\n\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '| supervisor of one of 3 runs | pause --all median ms | worst | kill --all median ms | worst | every process gone |\n'
printf '|---|---|---|---|---|---|\n'
for c in "${cases[@]}"; do
  : > "$work/$c"
  for _ in $(seq "$rounds"); do round "$c" >> "$work/$c"; done
  gone=$(awk '$3 != "yes" {bad++} END {print bad ? "no (" bad ")" : "yes"}' "$work/$c")
  printf '| %s | %s | %s | %s |\n' "$c" "$(cut -d' ' -f1 "$work/$c" | stats)" "$(cut -d' ' -f2 "$work/$c" | stats)" "$gone"
done
