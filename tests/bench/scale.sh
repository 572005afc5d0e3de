#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# ibwatch at scale: the three 3-level fat trees ibw-fattree makes
# (radix 36) of 2592, 5184 and 10368 hosts (14,256, 28,512 and 57,024
# ports; issue 17 calls the last two 27,828 and 54,324), each on a fresh
# simulated fabric:
#   - discovery and the counter sweep inside one process (bench_sweep):
#     wall time, MADs, CPU seconds of the process and of ibsim, each per
#     100,000 MADs; the first counter sweep (cold) apart from the rest;
#   - the reference tools as whole commands: ibnetdiscover, ibqueryerrors,
#     ibqueryerrors --counters, and ibqueryerrors --counters on
#     ibnetdiscover's cache (its counter reads alone), with the MADs each
#     sent (read off the local port's PortXmitPkts, which only the tool
#     moves) and so its own MAD rate;
#   - `ibwatchd --once` as a whole process (/usr/bin/time: wall, CPU,
#     peak RSS) and its two sweeps inside (from its output);
#   - a running ibwatchd (default intervals, no SNMP): time to /healthz
#     and to the first counter sweep, idle RSS, the first render of each
#     JSON endpoint and a gzip /metrics scrape timed with curl, the peak
#     RSS while they are fetched one after another and while all are
#     fetched at once (VmHWM, reset before each through clear_refs).
#
#   tests/bench/scale.sh [BUILD_DIR]
#
# Environment: TREES="14256 27828 54324" (trees by port count as the
# issue names them, 28512 and 57024 or the host counts work too), ROUNDS
# (3: discoveries and warm counter sweeps, medians), SKIP_REF=1 (no
# reference tools: they take a minute on the largest tree),
# SKIP_DAEMON=1 (neither --once nor the running daemon), IDLE_ONLY=1
# (only the running daemon: start-up, idle RSS, then its RSS over one
# counter interval, 30 s, in which a spread sweep runs), BENCH_SWEEP
# (another bench_sweep binary, e.g. one built with a candidate fix),
# IBW_BENCH_AGENT (another ibwatchd binary, to compare builds), PERF=1
# (profile bench_sweep and ibsim with perf record -g and print the top
# symbols of the warm counter sweeps; for ibsim's symbols put an ibsim
# built with -g first in PATH). Results: one line per figure on stdout
# and BENCH_WORK/scale-PORTS.txt (key=value), then a table of all trees.
. "$(dirname "$0")/lib.sh"
agent_bin=${IBW_BENCH_AGENT:-$build/agent/ibwatchd}
export IBW_BENCH_AGENT=$agent_bin

# Median of the numbers on stdin.
median() { sort -n | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
# The field after KEY in each line of stdin (bench_sweep's lines).
after() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); break } }'; }

if [ -n "${IBW_SIM_DIR:-}" ]; then
	ports=$SCALE_PORTS
	res=$SCALE_RESULTS
	: >"$res"
	put() { # KEY VALUE: one result, in the file and on stdout
		echo "$1=$2" >>"$res"
		printf '  %-28s %s\n' "$1" "$2"
	}
	simpid=$(cat "$IBW_SIM_DIR/ibsim.pid")
	osmpid=$(cat "$IBW_SIM_DIR/opensm.pid")
	ticks=$(getconf CLK_TCK)
	cpu_of() { # user+system seconds of PID so far
		awk -v t="$ticks" '{ sub(/.*\) /, ""); print ($12 + $13) / t }' "/proc/$1/stat"
	}
	now() { date +%s.%N; }
	secs() { printf '%.3f' "$(echo "$2 - $1" | bc)"; }
	# MADs the processes attached as SIM_HOST sent: ibsim counts each on
	# our CA port's PortXmitPkts; perfquery of the local port itself
	# crosses no link and moves nothing.
	xmit() {
		LD_PRELOAD=$IBW_SIM_PRELOAD perfquery -x 2>/dev/null |
			awk -F. '/^PortXmitPkts/ { print $NF }'
	}

	# opensm keeps working for a while after SUBNET UP (SIMULATOR.md):
	# wait until it used under 5% of a core for 2 s, at most 90 s.
	for _ in $(seq 1 45); do
		c0=$(cpu_of "$osmpid")
		sleep 2
		c1=$(cpu_of "$osmpid")
		[ "$(echo "($c1 - $c0) < 0.1" | bc)" = 1 ] && break
	done
	echo "== $ports ports: $(uptime | sed 's/.*load/load/') (other work on the machine counts)"
	put load_before "$(cut -d' ' -f1 /proc/loadavg)"

	if [ -z "${IDLE_ONLY:-}" ]; then
		# Discovery and counter sweeps, in one process. Under heavy load on
		# the machine umad2sim can deadlock against ibsim even at the
		# engine's 128 MADs in flight (its sender blocks on ibsim's full
		# socket holding the lock its receiver needs, while ibsim spins on
		# writes to the client's full socket): hence the time limit.
		bench=${BENCH_SWEEP:-$build/tests/bench_sweep}
		sweep=(--rounds "$ROUNDS" --counter-rounds $((ROUNDS + 1)) --peer-pid "$simpid")
		if [ -n "${PERF:-}" ]; then
			perf record -k CLOCK_MONOTONIC -g -o ibsim.perf -p "$simpid" >perf-sim.log 2>&1 &
			perfsim=$!
			timeout 900 perf record -k CLOCK_MONOTONIC -g -o sweep.perf \
				env LD_PRELOAD="$IBW_SIM_PRELOAD" "$bench" \
				"${sweep[@]}" >sweep.txt 2>perf-sweep.log ||
				echo "  (bench_sweep failed or hung: $(tail -n 1 perf-sweep.log))"
			kill -INT "$perfsim"
			wait "$perfsim" || true
		else
			timeout 900 env LD_PRELOAD="$IBW_SIM_PRELOAD" "$bench" "${sweep[@]}" \
				>sweep.txt || echo "  (bench_sweep failed or hung)"
		fi
		sed 's/^/  /' sweep.txt
		grep '^discovery' sweep.txt >disc.txt
		grep '^counters' sweep.txt | head -n 1 >cold.txt
		grep '^counters' sweep.txt | tail -n +2 >warm.txt
		put nodes "$(after discovery <disc.txt | head -n 1)"
		put fabric_ports "$(after counters <cold.txt)"
		for k in disc cold warm; do
			put "${k}_s" "$(awk '{ print $4 }' $k.txt | median)"
			put "${k}_mads" "$(after s <$k.txt | median)"
			put "${k}_timeouts" "$(after MADs <$k.txt | median)"
			put "${k}_cpu_s" "$(after cpu <$k.txt | median)"
			put "${k}_cpu_per_100k" "$(awk '{ for (i = 1; i < NF; i++) if ($i == "cpu") { print $(i + 3); break } }' $k.txt | median)"
			put "${k}_ibsim_cpu_per_100k" "$(awk '{ for (i = 1; i < NF; i++) if ($i == "peer-cpu") { print $(i + 3); break } }' $k.txt | median)"
			put "${k}_mad_per_s" "$(awk '{ printf "%.0f\n", $6 / $4 }' $k.txt | median)"
		done
		if [ -n "${PERF:-}" ]; then
			t0=$(head -n 1 warm.txt | after mono)
			t1=$(tail -n 1 warm.txt | awk '{ print $NF }')
			for f in sweep ibsim; do
				echo "  perf: top symbols of $f during the warm counter sweeps ($PWD/$f.perf)"
				perf report -i $f.perf --time "$t0,$t1" --no-children \
					--sort dso,symbol --stdio -g none >$f-report.txt \
					2>$f-report.err </dev/null ||
					echo "  (perf report failed: $(tail -n 1 $f-report.err))"
				grep '%' $f-report.txt | head -n 15 | sed 's/^/    /'
			done
		fi

	fi

	# The reference tools, whole commands, one run each.
	ref() { # NAME CMD...: wall seconds, MADs and ibsim's CPU of one run
		local name=$1 x0 x1 t0 t1 s0 s1; shift
		x0=$(xmit)
		s0=$(cpu_of "$simpid")
		t0=$(now)
		LD_PRELOAD=$IBW_SIM_PRELOAD "$@" >"$name.out" 2>"$name.err" ||
			echo "  ($* exited $?: $(tail -n 1 "$name.err"))"
		t1=$(now)
		s1=$(cpu_of "$simpid")
		x1=$(xmit)
		put "${name}_s" "$(secs "$t0" "$t1")"
		put "${name}_mads" $((x1 - x0))
		put "${name}_mad_per_s" "$(echo "($x1 - $x0) / ($t1 - $t0)" | bc)"
		put "${name}_ibsim_cpu_per_100k" "$(printf '%.3f' "$(echo "($s1 - $s0) * 100000 / ($x1 - $x0)" | bc -l)")"
	}
	if [ -z "${SKIP_REF:-}" ] && [ -z "${IDLE_ONLY:-}" ]; then
		ref ibnetdiscover ibnetdiscover --cache ibnd.cache
		ref ibqueryerrors ibqueryerrors
		ref ibqueryerrors_counters ibqueryerrors --counters
		ref ibqueryerrors_counters_cached ibqueryerrors --counters --load-cache ibnd.cache
		put ibqueryerrors_ports "$(sed -n 's/^##  *\([0-9]*\) ports checked.*/\1/p' ibqueryerrors.out)"
	fi

	if [ -n "${SKIP_DAEMON:-}" ]; then
		put load_after "$(cut -d' ' -f1 /proc/loadavg)"
		exit 0
	fi

	if [ -z "${IDLE_ONLY:-}" ]; then
		# ibwatchd --once, the whole process.
		timeout 900 /usr/bin/time -f '%e %U %S %M' -o once.time \
			env LD_PRELOAD="$IBW_SIM_PRELOAD" \
			"$agent_bin" --once --no-state-file >once.json 2>once.err ||
			echo "  (ibwatchd --once failed: $(tail -n 1 once.err))"
		read -r wall usr sys maxkb <once.time
		put once_s "$wall"
		put once_cpu_s "$(echo "$usr + $sys" | bc)"
		put once_peak_rss_mb $((maxkb / 1024))
		put once_bytes "$(stat -c %s once.json)"
		put once_discovery_s "$(printf '%.3f' "$(jq '.status.sweeps.discovery.duration_ms / 1000' once.json)")"
		put once_counters_s "$(printf '%.3f' "$(jq '.status.sweeps.counters.duration_ms / 1000' once.json)")"
	fi

	# A running ibwatchd.
	port=$((20000 + RANDOM % 20000))
	t0=$(now)
	LD_PRELOAD=$IBW_SIM_PRELOAD "$agent_bin" --no-state-file \
		--no-snmp --http "127.0.0.1:$port" >agent.out 2>agent.log &
	agent=$!
	trap 'kill "$agent" 2>/dev/null' EXIT
	U=http://127.0.0.1:$port
	kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$agent/status"; }
	stop_agent() {
		kill -TERM "$agent"
		for _ in $(seq 1 100); do kill -0 "$agent" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$agent" 2>/dev/null || true
		wait "$agent" 2>/dev/null || true
		trap - EXIT
		put load_after "$(cut -d' ' -f1 /proc/loadavg)"
	}
	for _ in $(seq 1 600); do
		curl -s -m 2 -o /dev/null "$U/healthz" 2>/dev/null && break
		kill -0 "$agent" || { echo "  ibwatchd died: $(tail -n 1 agent.log)"; exit 1; }
		sleep 0.1
	done
	put daemon_healthz_s "$(secs "$t0" "$(now)")"
	for _ in $(seq 1 1200); do
		n=$(curl -s -m 5 "$U/api/v1/status" 2>/dev/null |
			jq -r '.sweeps.counter_sweeps // 0' 2>/dev/null) || n=0
		[ "${n:-0}" -ge 1 ] && break
		kill -0 "$agent" || { echo "  ibwatchd died: $(tail -n 1 agent.log)"; exit 1; }
		sleep 0.25
	done
	put daemon_first_counters_s "$(secs "$t0" "$(now)")"
	put daemon_startup_peak_rss_mb $(($(kb VmHWM) / 1024))
	put daemon_idle_rss_mb $(($(kb VmRSS) / 1024))
	if [ -n "${IDLE_ONLY:-}" ]; then
		# The next counter interval: a sweep spread over 24 s of it
		# writes to the records while snapshots hold them.
		lo=$(kb VmRSS) hi=$(kb VmRSS)
		for _ in $(seq 1 60); do
			sleep 0.5
			r=$(kb VmRSS)
			[ "$r" -lt "$lo" ] && lo=$r
			[ "$r" -gt "$hi" ] && hi=$r
		done
		put daemon_interval_rss_min_mb $((lo / 1024))
		put daemon_interval_rss_max_mb $((hi / 1024))
		put daemon_interval_peak_rss_mb $(($(kb VmHWM) / 1024))
	fi
	if [ -n "${IDLE_ONLY:-}" ]; then
		stop_agent
		exit 0
	fi
	# Peak RSS from here on: writing 5 to clear_refs resets VmHWM.
	hwm_reset() { echo 5 >"/proc/$agent/clear_refs" 2>/dev/null || echo "  (cannot reset VmHWM: peak since start)"; }
	hwm_reset
	c0=$(cpu_of "$agent")
	for ep in ports nodes endports status events; do
		e0=$(cpu_of "$agent")
		r=$(curl -s -m 120 -o "$ep.json" -w '%{time_total} %{size_download} %{http_code}' "$U/api/v1/$ep")
		read -r tt sz code <<<"$r"
		[ "$code" = 200 ] || echo "  (/api/v1/$ep answered $code)"
		put "first_${ep}_s" "$tt"
		# the daemon's CPU meanwhile (a sweep may add to it)
		put "first_${ep}_cpu_s" "$(echo "$(cpu_of "$agent") - $e0" | bc)"
		put "first_${ep}_kb" $((${sz%.*} / 1024))
	done
	r=$(curl -s -m 120 -H 'Accept-Encoding: gzip' -o metrics.gz -w '%{time_total} %{size_download} %{http_code}' "$U/metrics")
	read -r tt sz code <<<"$r"
	[ "$code" = 200 ] || echo "  (/metrics answered $code)"
	put first_metrics_gzip_s "$tt"
	put first_metrics_gzip_kb $((${sz%.*} / 1024))
	put serve_cpu_s "$(echo "$(cpu_of "$agent") - $c0" | bc)"
	put peak_rss_sequential_mb $(($(kb VmHWM) / 1024))
	# All at once, a second time (the renders may be cached now): one
	# client per endpoint, started together.
	hwm_reset
	pids=()
	for ep in api/v1/ports api/v1/nodes api/v1/endports api/v1/status api/v1/events metrics; do
		curl -s -m 120 -H 'Accept-Encoding: gzip' -o /dev/null \
			-w "%{time_total}\n" "$U/$ep" >"par-${ep##*/}.time" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || echo "  (a parallel fetch failed)"; done
	put parallel_slowest_s "$(cat par-*.time | sort -n | tail -n 1)"
	put peak_rss_parallel_mb $(($(kb VmHWM) / 1024))
	put rss_after_mb $(($(kb VmRSS) / 1024))
	stop_agent
	exit 0
fi

ROUNDS=${ROUNDS:-3}
export ROUNDS
trees=${TREES:-14256 27828 54324}
done_trees=()
for t in $trees; do
	case $t in
	14256 | 2592) hosts=2592 ;;
	27828 | 28512 | 5184) hosts=5184 ;;
	54324 | 57024 | 10368) hosts=10368 ;;
	*) echo "scale.sh: unknown tree $t (14256, 27828 or 54324)" >&2; exit 2 ;;
	esac
	net=$work/fattree3-$hosts.net
	"$build/tests/ibw-fattree" --levels 3 --hosts "$hosts" >"$net"
	flags=$("$build/tests/ibw-fattree" --levels 3 --hosts "$hosts" --flags)
	nports=$(awk '/^(Switch|Hca)/ { p += $2 } END { print p }' "$net")
	export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
	export SCALE_PORTS=$nports SCALE_RESULTS=$work/scale-$nports.txt
	"$top/tests/lib/with-fabric.sh" "bench_scale_$nports" "$net" \
		--sm "node$hosts" --osm-args "-s 0" --ibsim-args "$flags" \
		--timeout 300 -- "$top/tests/bench/scale.sh" "$build" ||
		{ echo "scale.sh: the $nports-port tree failed" >&2; exit 1; }
	done_trees+=("$nports")
done

# One table of every tree run.
echo
printf '%-40s' "ports"
for n in "${done_trees[@]}"; do printf ' %12s' "$n"; done
echo
keys=$(cut -d= -f1 "$work/scale-${done_trees[0]}.txt")
for k in $keys; do
	printf '%-40s' "$k"
	for n in "${done_trees[@]}"; do
		printf ' %12s' "$(sed -n "s/^$k=//p" "$work/scale-$n.txt")"
	done
	echo
done
