#!/usr/bin/env bash
# A container too restricted even for the seal without namespaces, in a real
# runtime (real_runtime.sh's crun container, as root: no uid map without
# CAP_SETFCAP, so no namespaces), with the seal's floor taken away by the
# container's own seccomp profile, as a stricter runtime profile would:
#
#   tests/containers/too_restricted.sh /path/to/parallex
#
#   no Landlock   landlock_create_ruleset, landlock_add_rule and
#                 landlock_restrict_self fail with ENOSYS (as on a kernel
#                 without it, or a profile that lists none of them)
#   no seccomp    the seccomp call fails with EPERM
#
# In each, with the weaker seal accepted (PARALLEX_ALLOW_WEAKER_SEAL=1, the
# container's environment): `parallex check` names the guarantee MISSING, and
# a run refuses (no command runs) with a message that names what is missing
# and the setting that would give it. Exit 0 when both hold, 1 otherwise, 77
# when real_runtime.sh cannot run here.
set -u
exe=$(readlink -f "${1:?usage: $0 /path/to/parallex}")
here=$(cd "$(dirname "$0")" && pwd)
state=${PX_TR_DIR:-/tmp/parallex-too-restricted}
case "$state" in /|/tmp|"") echo "$0: PX_TR_DIR=$state is not a folder of its own" >&2; exit 2;; esac
mkdir -p "$state"
probe=$state/probe.sh
cat >"$probe" <<'PROBE'
#!/bin/bash
P=$1
W=$2
cd "$W" || exit 1
echo "--- parallex check"
"$P" check 2>&1
echo "--- parallex run, the weaker seal accepted (PARALLEX_ALLOW_WEAKER_SEAL=$PARALLEX_ALLOW_WEAKER_SEAL)"
"$P" run --in "$W" -- sh -c 'echo THE-COMMAND-RAN' 2>&1
echo "RESULT run_exit=$?"
PROBE

failures=0
case_() { # NAME DENY, then the words the refusal must hold (each an ERE)
  local name=$1 deny=$2
  shift 2
  echo "=== $name: the container's seccomp profile also refuses $deny"
  PX_RR_DIR=$state/$name PX_RR_USERS=root PX_RR_DENY=$deny PX_RR_PROBE=$probe \
    bash "$here/real_runtime.sh" "$exe" >"$state/$name.log" 2>&1
  local rc=$?
  [ $rc = 77 ] && { grep SKIP "$state/$name.log"; exit 77; }
  sed 's/^/  /' "$state/$name.log"
  local run_exit
  run_exit=$(grep -m1 '^RESULT run_exit=' "$state/$name.log" | cut -d= -f2)
  if [ -z "$run_exit" ]; then
    echo "FAILED ($name): the container did not get to the run"; failures=$((failures + 1)); return
  fi
  [ "$run_exit" != 0 ] || { echo "FAILED ($name): the run was not refused"; failures=$((failures + 1)); }
  grep -q THE-COMMAND-RAN "$state/$name.log" &&
    { echo "FAILED ($name): the command ran"; failures=$((failures + 1)); }
  local refusal
  refusal=$(sed -n '/^--- parallex run/,$p' "$state/$name.log")
  for want in "$@"; do
    grep -Eq "$want" <<<"$refusal" || { echo "FAILED ($name): the refusal does not say /$want/"; failures=$((failures + 1)); }
  done
}

# Landlock's calls fail as on a kernel without it (ENOSYS, 38).
case_ no-landlock "landlock_create_ruleset:38 landlock_add_rule:38 landlock_restrict_self:38" \
  "refusing to run, even with the weaker seal accepted" "neither Landlock" "lsm=" "seccomp profile" \
  "full seal's settings"
grep -Eq "MISSING +Landlock: files outside the grants" "$state/no-landlock.log" ||
  { echo "FAILED (no-landlock): check does not name Landlock MISSING"; failures=$((failures + 1)); }
# The seccomp call refused (EPERM, 1).
case_ no-seccomp "seccomp:1" "refusing to run" "no seccomp|seccomp filter cannot be installed" \
  "seccomp profile must let the seccomp call through"
grep -Eq "MISSING +seccomp" "$state/no-seccomp.log" ||
  { echo "FAILED (no-seccomp): check does not name seccomp MISSING"; failures=$((failures + 1)); }

echo "=== failures: $failures"
[ $failures -eq 0 ]
