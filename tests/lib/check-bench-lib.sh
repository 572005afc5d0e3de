#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every benchmark script that sources tests/bench/lib.sh gets from it
# what it expects, within seconds: top (the source tree), build (the
# directory given), work (made) and bench_net. The benchmarks are too
# slow to run in the suite; this is what their shared start-up can be
# checked for without a fabric.
# usage: check-bench-lib.sh SOURCE_DIR BUILD_DIR
src=$(cd "$1" && pwd) || exit 2
build=$(cd "$2" && pwd) || exit 2
bad=0 n=0
for f in "$src"/tests/bench/*.sh; do
	[ "$(basename "$f")" = lib.sh ] && continue
	grep -q '^\. "$(dirname "$0")/lib.sh"$' "$f" || continue
	n=$((n + 1))
	out=$(BENCH_WORK="$build/bench-lib-check" timeout 10 sh -c \
		'. "$(dirname "$0")/lib.sh" && type bench_net >/dev/null && echo "$top|$build|$work"' \
		"$f" "$build" 2>&1)
	if [ "$out" != "$src|$build|$build/bench-lib-check" ] || [ ! -d "$build/bench-lib-check" ]; then
		echo "$(basename "$f"): lib.sh gave '$out'"
		bad=1
	fi
done
rm -rf "$build/bench-lib-check"
[ $bad = 0 ] && echo "$n benchmark scripts start from tests/bench/lib.sh"
[ $n -gt 0 ] && exit $bad
echo "no benchmark script sources tests/bench/lib.sh"
exit 1
