#!/usr/bin/env bash
# After a failed ctest: each failed test's name and the lines of its output
# that say why (gtest's failures, the scripts' FAIL and error lines), the last
# 40 of them per test (a test's own summary of its failures comes last).
# ctest prints a failed test's output where the test ended, far up a long
# log; CI keeps the end of it, so the reasons are printed again last.
#   scripts/ctest-failures.sh BUILD_DIR
set -u
log=${1:?usage: $0 BUILD_DIR}/Testing/Temporary/LastTest.log
[ -r "$log" ] || exit 0
awk '
  /^[0-9]+\/[0-9]+ Test: / { name = $3; n = 0; next }
  /^Test Failed|^Test Passed|^Test Skipped|^Test Not Run/ {
    if ($0 ~ /^Test Failed/ && n > 0) {
      print "--- why " name " failed:"
      for (i = (n > 40 ? n - 39 : 1); i <= n; i++) print "  " lines[i]
    }
    n = 0; next
  }
  /Failure|FAILED|[Ee]rror|FAIL|Expected|Which is|Value of|  Actual|escaped|timed out|Timeout/ {
    lines[++n] = substr($0, 1, 300)
  }
' "$log"
