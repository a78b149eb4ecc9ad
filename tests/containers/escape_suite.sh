#!/usr/bin/env bash
# The whole escape suite (tests/escape's test_escape) inside a container with
# the full seal's pod settings (docs/containers.md): real_runtime.sh's crun
# container with the seccomp profile `parallex check --seccomp-profile`
# prints and /proc unmasked, as the unprivileged user (a pod runs as uid 1000).
#
#   tests/containers/escape_suite.sh /path/to/parallex /path/to/test_escape
#
# Left out, each for a reason of the container, not of the seal:
#   Escape.SyscallAbiTricks        its unsealed control (int 0x80 getpid must
#                                  run outside the seal) is killed by the
#                                  container's profile, which allows no
#                                  32-bit ABI at all
#   Escape.RefusedCallsAreRecorded keyctl is refused by the container's
#                                  profile before the seal's filter sees it
#                                  (a filter's EPERM wins over a user
#                                  notification), so the run cannot record it
# Exit 0 when the rest pass, 1 otherwise, 77 when real_runtime.sh cannot run.
set -u
exe=$(readlink -f "${1:?usage: $0 PARALLEX TEST_ESCAPE}")
suite=$(readlink -f "${2:?usage: $0 PARALLEX TEST_ESCAPE}")
here=$(cd "$(dirname "$0")" && pwd)
state=${PX_ES_DIR:-/tmp/parallex-escape-suite}
case "$state" in /|/tmp|"") echo "$0: PX_ES_DIR=$state is not a folder of its own" >&2; exit 2;; esac
mkdir -p "$state"
probe=$state/probe.sh
# The suite itself decides what the weaker seal is: the container's
# acceptance is not passed on. Its output goes to the container's /tmp.
# The container has a pid namespace of its own, and so has the seal: the
# suite's own pid must not be one its probes have inside the seal (2, 3, ...),
# or "signal the suite's process" would signal the probe itself. A few
# processes first move it past them.
cat >"$probe" <<PROBE
#!/bin/bash
cd "\$2" || exit 1
for _ in \$(seq 50); do /bin/true; done
env -u PARALLEX_ALLOW_WEAKER_SEAL "$suite" --gtest_brief=1 \\
  --gtest_filter=-Escape.SyscallAbiTricks:Escape.RefusedCallsAreRecorded >/tmp/escape-suite.out 2>&1
rc=\$?
grep -E '^\[ *(FAILED|PASSED|SKIPPED|MATRIX) *\]|tests? from .* ran' /tmp/escape-suite.out
echo "RESULT escape_suite_exit=\$rc"
exit \$rc
PROBE
PX_RR_DIR=$state/rr PX_RR_USERS=pxtest PX_RR_SECCOMP=parallex PX_RR_PROC=unmasked PX_RR_PROBE=$probe \
  bash "$here/real_runtime.sh" "$exe"
rc=$?
[ $rc = 77 ] && exit 77
out=$state/rr/tmp/escape-suite.out
if [ -r "$out" ]; then
  # On a failure, each failed row and why, here (CI shows little more than
  # this test's output); the rest is what the probes' shells printed.
  [ $rc != 0 ] && { echo "--- the suite's failures"; grep -a -A 12 -E ': Failure$|^\[  FAILED  \]' "$out" | head -n 150; }
  echo "(the suite's whole output: $out)"
fi
exit $rc
