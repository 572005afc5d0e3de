#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The counter soak: ibwatchd with its defaults on a fabric whose
# counters run past their maximum every few minutes: the 2-level fat tree of 324 hosts under
# the kernel and fabric model, its driven counters (tests/preload/km_pc.h,
# km_fec.h) growing at a steady rate from t0:
#   HOSTS_PC hosts (node0002 on): SymbolErrorCounter at 364/s (16 bits:
#     full every 3 minutes) and PortXmitWait at 2.4e7/s (32 bits: every 3
#     minutes); every fourth one's PMA has the 64-bit error counters
#     (CapabilityMask2 bit 1, the model's x);
#   HOSTS_FEC hosts after them: PortFECCorrectedSymbolCtr at 2.4e7/s
#     (RS-FEC at HDR, 32 bits: every 3 minutes).
# The agent runs as installed (defaults: 10 s counter sweeps, pings,
# reset-counters all, a state file), is restarted from its state file
# halfway, and after SECONDS_TOTAL in all (1800) each driven counter's 64-bit
# total is set against what the model's clock drove up to that port's
# last reading. Reported: per kind of counter the ports, what was driven,
# what the totals say, what was lost (counted between a reading and its
# clear, or during the restart's clear), the clears, and the agent's RSS.
#   tests/bench/ctr_soak.sh [BUILD_DIR]
# Environment: SECONDS_TOTAL (1800), HOSTS_PC (20), HOSTS_FEC (10).
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	: "${IBW_KM_STATE_DIR:?the kernel model is not loaded}"
	. "$top/tests/lib/tap.sh"
	total=${SECONDS_TOTAL:-1800}
	npc=${HOSTS_PC:-20} nfec=${HOSTS_FEC:-10}
	rs=364 rw=24000000 rf=24000000
	agent=""
	trap '[ -n "$agent" ] && kill $agent 2>/dev/null; rm -f "$IBW_KM_STATE_DIR/pc" "$IBW_KM_STATE_DIR/fec"' EXIT
	rss() { awk '/^VmRSS/ { print $2 }' "/proc/$agent/status" 2>/dev/null || echo 0; }
	: >lids.txt
	for ((i = 2; i < 2 + npc + nfec; i++)); do
		h=$(printf 'node%04d' "$i")
		echo "$h $(lid_of "$h")" >>lids.txt
	done
	t0=$(date +%s)
	: >"$IBW_KM_STATE_DIR/pc.tmp"
	: >"$IBW_KM_STATE_DIR/fec.tmp"
	k=0
	while read -r h l; do
		if [ $k -lt "$npc" ]; then
			x=""
			[ $((k % 4)) = 3 ] && x=" x"
			echo "$l 1$x SymbolErrorCounter=0+$rs PortXmitWait=0+$rw t0=$t0" \
				>>"$IBW_KM_STATE_DIR/pc.tmp"
		else
			echo "$l 1 rs speed=HDR PortFECCorrectedSymbolCtr=0+$rf t0=$t0" \
				>>"$IBW_KM_STATE_DIR/fec.tmp"
		fi
		k=$((k + 1))
	done <lids.txt
	sort -n -o "$IBW_KM_STATE_DIR/pc.tmp" "$IBW_KM_STATE_DIR/pc.tmp"
	sort -n -o "$IBW_KM_STATE_DIR/fec.tmp" "$IBW_KM_STATE_DIR/fec.tmp"
	mv "$IBW_KM_STATE_DIR/pc.tmp" "$IBW_KM_STATE_DIR/pc"
	mv "$IBW_KM_STATE_DIR/fec.tmp" "$IBW_KM_STATE_DIR/fec"

	up() {
		port=$(free_port)
		spawn node0001 "$build/agent/ibwatchd" --no-snmp \
			--http "127.0.0.1:$port" --state-file "$PWD/soak.state" \
			>>agent.out 2>>agent.log &
		agent=$!
		for _ in $(seq 1 100); do
			curl -s -m 2 "http://127.0.0.1:$port/healthz" >/dev/null && return 0
			sleep 0.2
		done
		echo "ctr_soak.sh: the agent does not answer" >&2
		return 1
	}
	up
	peak=0
	half=$((t0 + total / 2)) restarted=0
	while [ "$(date +%s)" -lt $((t0 + total)) ]; do
		sleep 30
		r=$(rss)
		[ "$r" -gt "$peak" ] && peak=$r
		if [ $restarted = 0 ] && [ "$(date +%s)" -ge "$half" ]; then
			kill -TERM "$agent"
			wait "$agent" 2>/dev/null || true
			up
			restarted=1
		fi
		echo "# $(($(date +%s) - t0)) s: RSS $r kB, clears $(curl -s -m 10 "http://127.0.0.1:$port/api/v1/status" | jq -c .sweeps.counter_clears)" >&2
	done
	curl -s -m 30 "http://127.0.0.1:$port/api/v1/ports" >ports.json
	# kind ports driven total lost clears, one line per driven counter
	: >rows.txt
	k=0
	while read -r h l; do
		p=$(jq -c --argjson l "$l" '.[] | select(.lid == $l and .port == 1) | .counters' ports.json)
		s=$(date -d "$(jq -r .updated <<<"$p")" +%s.%N)
		if [ $k -lt "$npc" ]; then
			kind=narrow
			[ $((k % 4)) = 3 ] && kind=64-bit
			for f in symbol_errors:$rs transmit_wait:$rw; do
				echo "$kind-${f%%:*} $(awk -v r="${f#*:}" -v s="$s" -v t0="$t0" 'BEGIN { printf "%.0f", r * (s - t0) }') $(jq ".totals.${f%%:*}" <<<"$p") $(jq .clears <<<"$p")" >>rows.txt
			done
		else
			echo "fec-PortFECCorrectedSymbolCtr $(awk -v r=$rf -v s="$s" -v t0="$t0" 'BEGIN { printf "%.0f", r * (s - t0) }') $(jq .fec.totals.PortFECCorrectedSymbolCtr <<<"$p") $(jq .fec.clears <<<"$p")" >>rows.txt
		fi
		k=$((k + 1))
	done <lids.txt
	echo "# ibwatchd (defaults, restarted from its state file at $((total / 2)) s) on the 324-host tree, $total s, $(date -u +%F)"
	printf '| counter | ports | driven | totals | lost | lost share | clears (sum) |\n'
	printf '|---|---:|---:|---:|---:|---:|---:|\n'
	awk '{ n[$1]++; d[$1] += $2; t[$1] += $3; c[$1] += $4 }
		END { for (k in n) printf "| %s | %d | %.0f | %.0f | %.0f | %.5f%% | %d |\n",
			k, n[k], d[k], t[k], d[k] - t[k], 100 * (d[k] - t[k]) / d[k], c[k] }' rows.txt | sort
	echo "# peak RSS $peak kB; every counter's own line in $PWD/rows.txt"
	exit 0
fi

"$build/tests/ibw-fattree" --levels 2 --hosts 324 >"$work/fattree2-324.net"
export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}
[ -r "$IBW_KMODEL" ] || { echo "ctr_soak.sh: no kernel model at $IBW_KMODEL (build first)" >&2; exit 1; }
exec "$top/tests/lib/with-fabric.sh" bench_ctr_soak "$work/fattree2-324.net" \
	--sm node0324 --timeout $((${SECONDS_TOTAL:-1800} + 600)) \
	-- "$top/tests/bench/ctr_soak.sh" "$build"
