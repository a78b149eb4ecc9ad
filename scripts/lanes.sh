# Runs commands side by side, as many at once as the machine has cores (CI has
# two), so that suites which wait on processes, sealed runs and faults do not
# leave a core idle. Each command's output is kept and printed whole when it
# ends, with how long it took, so two suites' lines never interleave.
#
# Source it, add the jobs longest first (a long job started last would run
# alone at the end), then run them:
#   . scripts/lanes.sh
#   lane_job "test_agents 1/2" env GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0 build-asan/tests/agents/test_agents
#   lane_job "test_policy" build-asan/tests/policy/test_policy
#   lanes_run
# lanes_run waits for every job, then fails naming each one that failed (a
# failing job does not stop the others: one run says everything that broke).
# LANES=N sets how many run at once. A job still running after LANE_TIMEOUT
# seconds (1200 unless set) is killed and fails, named: a hung test fails
# the run with its name rather than holding CI until it is cut.

lane_names=()
lane_commands=()

lane_job() {
  local name=$1
  shift
  lane_names+=("$name")
  # A shell function (fuzz.sh's) bounds its own time: `timeout` runs programs only.
  if declare -F "$1" >/dev/null; then
    lane_commands+=("$(printf '%q ' "$@")")
  else
    lane_commands+=("$(printf '%q ' timeout --kill-after=10 "${LANE_TIMEOUT:-1200}" "$@")")
  fi
}

# A job's status is written to a file as it ends: bash's `wait -n` does not
# report a job that ended before it was called, so the files are what is read.
_lane_start() {
  local index=$1
  _lane_started[$index]=$SECONDS
  (
    set +e
    eval "${lane_commands[$index]}" >"$_lane_dir/$index.log" 2>&1
    echo $? >"$_lane_dir/$index.status.new"
    mv "$_lane_dir/$index.status.new" "$_lane_dir/$index.status"
  ) &
  _lane_running+=("$index")
}

# Waits until at least one running job has ended; prints each that has, whole.
_lane_reap() {
  local index status still=() took
  while :; do
    still=()
    for index in "${_lane_running[@]}"; do
      if [ -f "$_lane_dir/$index.status" ]; then
        status=$(cat "$_lane_dir/$index.status")
        took=$((SECONDS - _lane_started[$index]))
        if [ "$status" = 0 ]; then
          echo "-- ${lane_names[$index]}: passed (${took}s)"
        elif [ "$status" = 124 ] || [ "$status" = 137 ]; then
          echo "-- ${lane_names[$index]}: FAILED, still running after ${LANE_TIMEOUT:-1200}s and killed (${took}s)"
          _lane_failed+=("${lane_names[$index]}")
        else
          echo "-- ${lane_names[$index]}: FAILED, exit $status (${took}s)"
          _lane_failed+=("${lane_names[$index]}")
        fi
        cat "$_lane_dir/$index.log"
      else
        still+=("$index")
      fi
    done
    if [ "${#still[@]}" -lt "${#_lane_running[@]}" ]; then
      _lane_running=("${still[@]}")
      return 0
    fi
    sleep 0.2
  done
}

lanes_run() {
  local width=${LANES:-$(nproc)} index
  _lane_dir=$(mktemp -d)
  _lane_failed=()
  _lane_started=()
  _lane_running=()
  for index in "${!lane_commands[@]}"; do
    while [ "${#_lane_running[@]}" -ge "$width" ]; do _lane_reap; done
    _lane_start "$index"
  done
  while [ "${#_lane_running[@]}" -gt 0 ]; do _lane_reap; done
  wait
  rm -rf "$_lane_dir"
  lane_names=()
  lane_commands=()
  if [ "${#_lane_failed[@]}" -gt 0 ]; then
    echo "FAILED: ${_lane_failed[*]}" >&2
    return 1
  fi
}
