#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# No run products in the tree: no tracked file a daemon, a test, an
# editor or a crash leaves behind (pid files, logs, state files, core
# dumps, scratch directories), and no fuzz corpus beyond a minimized seed
# set (libFuzzer's -merge keeps one input per new edge; two
# hundred files a target at most).
# usage: check-leftovers.sh SOURCE_DIR
cd "$1" || exit 2
bad=0
out=$(git ls-files | grep -v '^tests/fixtures/' | grep -E '(^|/)(core(\.[0-9]+)?|[^/]*\.(pid|bgpid|log|out|tmp|orig|rej|swp|state|journal|snmp-rows)|test-work/.*|\.demo/.*)$')
if [ -n "$out" ]; then
	printf 'a run product is tracked: %s\n' $out
	bad=1
fi
for d in tests/fuzz/corpus/*/; do
	n=$(git ls-files "$d" | wc -l)
	if [ "$n" -gt 200 ]; then
		echo "$d: $n files; minimize it (docs/testing.md, Fuzzing)"
		bad=1
	fi
done
[ $bad = 0 ] && echo "no run products tracked; fuzz corpora within 200 files each"
exit $bad
