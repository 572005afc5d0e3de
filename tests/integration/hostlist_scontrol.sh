#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The hostlist parser (core/hostlist.c, through tests/tools/ibw-hostlist)
# against Slurm's own: 10,000 expressions from tests/lib/hostlist-gen.awk
# (IBW_HOSTLIST_SEED, default 36; IBW_HOSTLIST_N, default 10000), each
# expanding to exactly what `scontrol show hostnames` prints, and those
# Slurm refuses refused. scontrol needs no slurmctld for this, only a
# slurm.conf; it takes one expression a call, about 30 ms each, so the
# well-formed ones go 100 to a call, joined by commas (a list expands to
# its terms' names in order), and a batch that differs is asked again
# one by one to name the culprits. Under 10 s on the test machine.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBW_HOSTLIST:?}"
command -v scontrol >/dev/null || {
	echo "not ok - scontrol is needed (tests/run.sh installs slurm-wlm)"
	exit 1
}

work=${IBW_TEST_WORK:-$PWD/test-work}/hostlist_scontrol
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
printf 'ClusterName=ibw\nSlurmctldHost=localhost\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n' >slurm.conf
export SLURM_CONF=$PWD/slurm.conf
seed=${IBW_HOSTLIST_SEED:-36} n=${IBW_HOSTLIST_N:-10000}
awk -v n="$n" -v seed="$seed" -f "$here/lib/hostlist-gen.awk" >exprs
check "generated $n expressions (seed $seed)" [ "$(wc -l <exprs)" = "$n" ]

# ours and scontrol's names for one expression, in ours.out, ref.out
expand() {
	"$IBW_HOSTLIST" "$1" >ours.out 2>/dev/null
	scontrol show hostnames "$1" </dev/null >ref.out 2>ref.err
}

# well-formed: 100 a call; a differing batch is split to show why
batch=() good=0 differ=0 names=0
flush() {
	local joined e
	[ ${#batch[@]} = 0 ] && return
	joined=$(IFS=,; echo "${batch[*]}")
	expand "$joined"
	if [ -s ref.out ] && cmp -s ours.out ref.out; then
		good=$((good + ${#batch[@]}))
		names=$((names + $(wc -l <ref.out)))
	else
		for e in "${batch[@]}"; do
			expand "$e"
			if [ -s ref.out ] && cmp -s ours.out ref.out; then
				good=$((good + 1))
				names=$((names + $(wc -l <ref.out)))
			else
				differ=$((differ + 1))
				[ $differ -le 10 ] && echo "# $e: ours $(head -c 200 ours.out | paste -sd' '), scontrol $(head -c 200 ref.out ref.err | paste -sd' ')"
			fi
		done
	fi
	batch=()
}
refused=0 taken=0 nbad=0
while read -r kind e <&3; do
	if [ "$kind" = ok ]; then
		batch+=("$e")
		[ ${#batch[@]} -ge 100 ] && flush
		continue
	fi
	# refused by both: scontrol prints nothing and says so on stderr
	nbad=$((nbad + 1))
	if "$IBW_HOSTLIST" "$e" >/dev/null 2>&1; then
		taken=$((taken + 1))
		echo "# ours takes $e"
	elif scontrol show hostnames "$e" </dev/null 2>ref.err | grep -q . ||
		! grep -q 'Invalid hostlist' ref.err; then
		taken=$((taken + 1))
		echo "# scontrol takes $e"
	else
		refused=$((refused + 1))
	fi
done 3<exprs
flush
check "$good of $((n - nbad)) well-formed expressions ($names names) expand as scontrol show hostnames" \
	test "$differ" = 0 -a "$good" = $((n - nbad))
check "$refused of $nbad malformed expressions refused by both" [ "$taken" = 0 ]
finish
