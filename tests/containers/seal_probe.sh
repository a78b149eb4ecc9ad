#!/bin/bash
# What the seal holds in one configuration, in files a matrix is drawn from
# (escape_matrix.sh; real_runtime.sh runs it in its containers too):
#
#   seal_probe.sh PARALLEX WORKDIR OUT [RUNS]
#
#   OUT.check.json   `parallex check --json`: each guarantee, enforced or MISSING
#   OUT.sealed.json  `parallex check --sealed --json`: a real sealed run tries
#                    each way out of the seal's probe catalog; each way's
#                    verdict is blocked, ESCAPED (open though check calls a
#                    guarantee that holds it enforced) or not enforced
#   OUT.startup      start-up of a sealed /bin/true: RUNS (default 10) runs of
#                    `parallex run --in WORKDIR -- /bin/true` after 2 warm-ups,
#                    "mean_ms sd_ms min_ms runs" (bash's clock: no tool needed
#                    inside a container)
# Run where a run may be started: the weaker seal is the configuration's own
# choice (PARALLEX_ALLOW_WEAKER_SEAL in its environment). Exit 0 unless a file
# could not be written.
set -u
P=${1:?usage: seal_probe.sh PARALLEX WORKDIR OUT [RUNS]}
W=${2:?WORKDIR}
OUT=${3:?OUT}
RUNS=${4:-10}
cd "$W" || exit 1
"$P" check --json >"$OUT.check.json" 2>"$OUT.check.err"
"$P" check --sealed --json >"$OUT.sealed.json" 2>"$OUT.sealed.err"
mkdir -p "$W/startup"
times=()
failed=0
for i in $(seq $((RUNS + 2))); do
  t0=$EPOCHREALTIME
  "$P" run --in "$W/startup" -- /bin/true >/dev/null 2>"$OUT.startup.err" || failed=$((failed + 1))
  t1=$EPOCHREALTIME
  [ "$i" -gt 2 ] && times+=("$(((10#${t1/[.,]/} - 10#${t0/[.,]/}) / 1000))")
done
printf '%s\n' "${times[@]}" | awk -v failed=$failed '
  { s += $1; q += $1 * $1; if (NR == 1 || $1 < m) m = $1 }
  END { mean = s / NR; sd = sqrt(q / NR - mean * mean); printf "%.0f %.0f %d %d %d\n", mean, sd, m, NR, failed }' \
  >"$OUT.startup" || exit 1
