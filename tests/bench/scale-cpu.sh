#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# CPU per MAD of discovery and the counter sweep on the three 3-level fat
# trees of tests/bench/scale.sh, with all three fabrics up at once and
# the measurements interleaved (a pass over every tree, ROUNDS times), so
# that other work on the machine falls on every tree alike. Each pass
# runs, on each tree: every bench_sweep binary of SWEEPS (one discovery,
# one cold and two warm counter sweeps: CPU seconds of the process and of
# ibsim per 100,000 MADs), then `ibqueryerrors --counters` on an
# ibnetdiscover cache (its counter reads alone, one MAD in flight): its
# MAD rate and ibsim's CPU per 100,000 of its MADs. Medians at the end.
#
#   tests/bench/scale-cpu.sh [BUILD_DIR]
#
# Environment: TREES (as scale.sh: "14256 27828 54324"), ROUNDS (5),
# SWEEPS (bench_sweep binaries to compare, e.g. the build's and one
# built with a candidate fix; default the build's), SKIP_REF=1.
. "$(dirname "$0")/lib.sh"

median() { sort -n | awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : "-" }'; }

if [ -n "${IBW_SIM_DIR:-}" ]; then
	raw=$work/scale-cpu-raw.txt
	: >"$raw"
	ticks=$(getconf CLK_TCK)
	cpu_of() { awk -v t="$ticks" '{ sub(/.*\) /, ""); print ($12 + $13) / t }' "/proc/$1/stat"; }
	now() { date +%s.%N; }
	# Let every opensm finish its post-SUBNET-UP work (under 5% of a
	# core for 2 s; at most 90 s each).
	for d in $SCALE_CPU_DIRS; do
		osm=$(cat "$d/opensm.pid")
		for _ in $(seq 1 45); do
			c0=$(cpu_of "$osm")
			sleep 2
			[ "$(echo "($(cpu_of "$osm") - $c0) < 0.1" | bc)" = 1 ] && break
		done
	done
	for r in $(seq 1 "$ROUNDS"); do
		echo "pass $r of $ROUNDS: load $(cut -d' ' -f1 /proc/loadavg)"
		for d in $SCALE_CPU_DIRS; do
			(
				# shellcheck disable=SC1091
				. "$d/env"
				cd "$d/work"
				n=${d##*_}
				sim=$(cat "$d/ibsim.pid")
				i=0
				# (A run that umad2sim deadlocks, see scale.sh,
				# is stopped and missing from the medians.)
				for b in $SWEEPS; do
					i=$((i + 1))
					timeout 600 env LD_PRELOAD="$IBW_SIM_PRELOAD" \
						"$b" --rounds 1 --counter-rounds 3 \
						--peer-pid "$sim" |
						sed "s/^/$n sweep$i /" >>"$raw"
				done
				[ -n "${SKIP_REF:-}" ] && exit 0
				xmit() {
					LD_PRELOAD=$IBW_SIM_PRELOAD perfquery -x 2>/dev/null |
						awk -F. '/^PortXmitPkts/ { print $NF }'
				}
				[ -f ibnd.cache ] || LD_PRELOAD=$IBW_SIM_PRELOAD \
					ibnetdiscover --cache ibnd.cache >/dev/null
				x0=$(xmit)
				s0=$(cpu_of "$sim")
				t0=$(now)
				LD_PRELOAD=$IBW_SIM_PRELOAD ibqueryerrors --counters \
					--load-cache ibnd.cache >ref.out 2>ref.err
				t1=$(now)
				s1=$(cpu_of "$sim")
				x1=$(xmit)
				echo "$n ref $(echo "$t1 - $t0" | bc) $((x1 - x0)) $(echo "$s1 - $s0" | bc)" >>"$raw"
			)
		done
	done
	# Medians per tree: per sweep binary, CPU s per 100k MADs of the
	# process and of ibsim; for the reference, MAD/s and ibsim's CPU.
	pick() { # TREE TAG KIND(discovery|cold|warm) FIELD(cpu|peer-cpu)
		awk -v n="$1" -v tag="$2" -v kind="$3" -v f="$4" '
			$1 != n || $2 != tag { next }
			$3 == "discovery" { k = "discovery"; c = 0 }
			$3 == "counters" { k = (c++ == 0) ? "cold" : "warm" }
			k == kind { for (i = 4; i < NF; i++) if ($i == f) { print $(i + 3); break } }' "$raw" | median
	}
	echo
	printf '%-8s %-7s %-22s %-22s %-22s %s\n' ports binary "discovery (us/ibsim)" \
		"cold sweep (us/ibsim)" "warm sweep (us/ibsim)" "CPU s per 100k MADs, medians"
	for d in $SCALE_CPU_DIRS; do
		n=${d##*_}
		i=0
		for b in $SWEEPS; do
			i=$((i + 1))
			printf '%-8s %-7s' "$n" "sweep$i"
			for k in discovery cold warm; do
				printf ' %-22s' "$(pick "$n" "sweep$i" $k cpu) / $(pick "$n" "sweep$i" $k peer-cpu)"
			done
			echo
		done
		if [ -z "${SKIP_REF:-}" ]; then
			printf '%-8s %-7s ibqueryerrors --counters (cached): %s MAD/s, ibsim %s s per 100k MADs, %s MADs\n' \
				"$n" ref \
				"$(awk -v n="$n" '$1 == n && $2 == "ref" { printf "%.0f\n", $4 / $3 }' "$raw" | median)" \
				"$(awk -v n="$n" '$1 == n && $2 == "ref" { printf "%.3f\n", $5 * 100000 / $4 }' "$raw" | median)" \
				"$(awk -v n="$n" '$1 == n && $2 == "ref" { print $4 }' "$raw" | median)"
		fi
	done
	i=0
	for b in $SWEEPS; do i=$((i + 1)); echo "sweep$i: $b"; done
	echo "raw lines: $raw"
	exit 0
fi

ROUNDS=${ROUNDS:-5}
SWEEPS=${SWEEPS:-$build/tests/bench_sweep}
export ROUNDS SWEEPS
export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
# One with-fabric.sh inside the other: the innermost runs this script
# with every fabric up; each stops its own fabric on the way out.
cmd=("$top/tests/bench/scale-cpu.sh" "$build")
dirs=""
for t in ${TREES:-14256 27828 54324}; do
	case $t in
	14256 | 2592) hosts=2592 ;;
	27828 | 28512 | 5184) hosts=5184 ;;
	54324 | 57024 | 10368) hosts=10368 ;;
	*) echo "scale-cpu.sh: unknown tree $t (14256, 27828 or 54324)" >&2; exit 2 ;;
	esac
	net=$work/fattree3-$hosts.net
	"$build/tests/ibw-fattree" --levels 3 --hosts "$hosts" >"$net"
	flags=$("$build/tests/ibw-fattree" --levels 3 --hosts "$hosts" --flags)
	nports=$(awk '/^(Switch|Hca)/ { p += $2 } END { print p }' "$net")
	dirs="$dirs $work/bench_scale_cpu_$nports"
	cmd=("$top/tests/lib/with-fabric.sh" "bench_scale_cpu_$nports" "$net"
		--sm "node$hosts" --osm-args "-s 0" --ibsim-args "$flags"
		--timeout 300 -- "${cmd[@]}")
done
export SCALE_CPU_DIRS=$dirs
exec "${cmd[@]}"
