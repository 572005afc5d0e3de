#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/run.sh cannot pass with nothing tested: on a copy of the tree with
# a deliberate configure error, and on one with a deliberate compile
# error, it exits non-zero and says which step failed. (With no error it
# passes: that is every CI run.)
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib/tap.sh"

work=${IBW_TEST_WORK:-$PWD/test-work}/runsh_fails
rm -rf "$work"
mkdir -p "$work"
# copy TREE: the tracked files (as they are in the work tree) to TREE
copy() {
	mkdir -p "$1"
	(cd "$top" && git ls-files -z | xargs -0 cp --parents -t "$1") ||
		{ echo "not ok - cannot copy the tree"; exit 1; }
}

copy "$work/cfg"
echo 'message(FATAL_ERROR "deliberate configure error (runsh_fails)")' >>"$work/cfg/CMakeLists.txt"
IBW_NO_SANITIZE=1 IBW_NO_TSAN=1 "$work/cfg/tests/run.sh" >"$work/cfg.out" 2>&1
rc=$?
check "a configure error fails tests/run.sh (exit $rc)" test "$rc" -ne 0
check "... saying the configure failed" grep -q 'run.sh: configure failed' "$work/cfg.out"
check "... before any test ran" bash -c "! grep -q 'tests passed' '$work/cfg.out'"

copy "$work/cc"
printf '#error "deliberate compile error (runsh_fails)"\n' >>"$work/cc/core/log.c"
IBW_NO_SANITIZE=1 IBW_NO_TSAN=1 "$work/cc/tests/run.sh" >"$work/cc.out" 2>&1
rc=$?
check "a compile error fails tests/run.sh (exit $rc)" test "$rc" -ne 0
check "... saying the build failed" grep -q 'run.sh: build failed' "$work/cc.out"
check "... before any test ran" bash -c "! grep -q 'tests passed' '$work/cc.out'"
rm -rf "$work/cfg" "$work/cc"
finish
