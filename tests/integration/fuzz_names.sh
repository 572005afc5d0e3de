#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Issue 36, point 1: the names fuzz target's corpus replayed with its
# /metrics written out (IBW_FUZZ_DUMP), and each output checked by the
# real parser, promtool check metrics: clean for every NodeDescription
# of the corpus (tests/fuzz/corpus/names, and what libFuzzer adds).
# Usage: fuzz_names.sh FUZZ_NAMES CORPUS
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
fuzz=$1 corpus=$2

dump=$PWD/names-dump
rm -rf "$dump"
mkdir -p "$dump"
IBW_FUZZ_DUMP=$dump "$fuzz" "$corpus" >replay.out 2>&1
rc=$?
check "the corpus replays with every output read back ($(tail -n1 replay.out))" \
	test $rc = 0
n=0 bad=0
for f in "$dump"/*.prom; do
	[ -e "$f" ] || continue
	n=$((n + 1))
	out=$(promtool check metrics <"$f" 2>&1) && [ -z "$out" ] && continue
	bad=$((bad + 1))
	echo "# $(basename "$f"): $(head -n 2 <<<"$out" | tr '\n' ' ')"
done
# inputs of one content write one dump: count the contents
ninputs=$(find "$corpus" -type f -exec sha1sum {} + | awk '{ print $1 }' | sort -u | wc -l)
nonames=$(find "$dump" -name '*.noname' | wc -l)
check "promtool check metrics is clean on all $n outputs" \
	eval '[ "$n" -gt 0 ] && [ "$bad" = 0 ]'
check "... one for each input with a name, every other decoded to none ($ninputs inputs, $nonames without a name)" \
	eval '[ $((n + nonames)) = "$ninputs" ] && [ "$nonames" -lt "$n" ]'
finish
