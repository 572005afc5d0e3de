#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Where the CPU time of a MAD goes on the simulated fabric: bench_sweep
# (discoveries and counter sweeps, engine defaults) on the 3-level fat
# tree (2592 hosts, 324 switches, 14256 ports) under the kernel model,
# sampled system-wide by `perf record -a -g`; the samples of ibsim and
# of each thread of the bench process, split by what they were doing,
# per MAD sent. Then a second run counted by `perf stat`: system calls
# and context switches per MAD, of the bench process and of ibsim.
#   tests/bench/mad_cost.sh [BUILD_DIR]
# Needs perf (package linux-perf) and the right to sample every CPU
# (root, or kernel.perf_event_paranoid <= -1).
# Environment: ROUNDS (3: discoveries and counter sweeps), LATENCY (1:
# the latency model at SVC_SMA_US 50 / SVC_PMA_US 100; 0: the kernel's
# rules only), FREQ (2999: samples a second and CPU).
#
# The threads of the bench process: the main one (the loop: engine,
# probes, and the umad calls that reach umad2sim and the kernel model
# in this thread), umad2sim's receiver (its only thread: reads ibsim's
# socket and queues each MAD) and core/umad.c's receive bridge
# (ibw-umad-bridge, waits in umad2sim's poll() for the loop; on a host
# the loop epolls the umad fd itself).
. "$(dirname "$0")/lib.sh"

if [ -n "${IBW_SIM_DIR:-}" ]; then
	: "${IBW_KM_STATE_DIR:?the kernel model is not loaded}"
	command -v perf >/dev/null || { echo "mad_cost.sh: no perf" >&2; exit 1; }
	if [ "${LATENCY:-1}" = 1 ]; then
		export IBW_KM_LATENCY=1
		export IBW_KM_SVC_SMA_US=${SVC_SMA_US:-50} IBW_KM_SVC_PMA_US=${SVC_PMA_US:-100}
	fi
	ibsim=$(cat "$IBW_SIM_DIR/ibsim.pid")
	perf record -a -g -F "${FREQ:-2999}" -o perf.data >perf.out 2>&1 &
	perf=$!
	sleep 1 # perf is sampling
	LD_PRELOAD=$IBW_SIM_PRELOAD "$build/tests/bench_sweep" --rounds "${ROUNDS:-3}" >sweep.txt &
	bench=$!
	wait "$bench"
	kill -INT "$perf"
	wait "$perf" || true
	cat sweep.txt
	echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	mads=$(awk '{ s += $6 } END { print s }' sweep.txt)
	# Per sample: the process and thread, and one category: the system
	# call it was in (the function under do_syscall_64), a page fault,
	# or the object its user-mode code came from.
	perf script -i perf.data -F comm,pid,tid,ip,sym,dso 2>/dev/null | awk \
		-v ibsim="$ibsim" -v bench="$bench" -v mads="$mads" -v hz="${FREQ:-2999}" '
	function role() {
		if (pid == ibsim)
			return "ibsim"
		if (tid == pid)
			return "main"
		return comm == "ibw-umad-bridge" ? "bridge" : "umad2sim"
	}
	function what(r) {
		if (sys != "") {
			if (r == "main" && sys ~ /write/)
				return "umad2sim: socket write to ibsim"
			if (r == "main" && sys ~ /futex|exit_to_user/)
				return "lock waits, wake-ups, preemption"
			if (r == "main" && sys ~ /epoll|timerfd|read/)
				return "event loop (epoll_wait, timerfd, eventfd)"
			if (sys ~ /exit_to_user/)
				return "preempted on return from a system call"
			return "system call " sys
		}
		if (pf)
			return "page faults"
		if (user ~ /libibw_kmodel/)
			return "kernel model"
		if (user ~ /libumad2sim|simguard/)
			return "umad2sim"
		if (user ~ /libc\./)
			return "libc (malloc, free, copies, locks)"
		if (user ~ /vdso/)
			return "clock reads"
		if (r == "ibsim" && user ~ /ibsim|libibmad/)
			return "ibsim itself"
		if (leaf ~ /^ibw_counters_find/)
			return "ibw_counters_find (a linear search while new ports come in)"
		if (user ~ /bench_sweep|libibmad|libibumad/)
			return "ibwatch (engine, probes, libibmad)"
		return kern ? "other kernel" : "other"
	}
	function flush(r) {
		if (pid != ibsim && pid != bench)
			return
		r = role()
		n[r "|" what(r)]++
		t[r]++
	}
	/^[^ \t]/ {
		if (pid != "")
			flush()
		comm = $1; split($2, a, "/"); pid = a[1]; tid = a[2]
		first = 1; sys = ""; pf = 0; kern = 0; user = ""; prev = ""; leaf = ""
		next
	}
	/^[ \t]+[0-9a-f]+ / {
		sym = $2; sub(/\+0x.*/, "", sym)
		if (first) {
			first = 0
			leaf = sym
			if ($NF ~ /kernel/)
				kern = 1
			else
				user = $NF
		}
		if (sym == "do_syscall_64" && sys == "") {
			sys = prev
			sub(/^(__x64_sys_|ksys_|__do_sys_)/, "", sys)
		}
		if (sym ~ /^asm_exc_page_fault/)
			pf = 1
		prev = sym
		next
	}
	END {
		if (pid != "")
			flush()
		us = 1e6 / hz / mads
		for (k in n) {
			split(k, b, "|")
			printf "%s\t%.2f\t%s\n", b[1], n[k] * us, b[2]
		}
		for (r in t)
			printf "%s\t%.2f\t=\n", r, t[r] * us
	}' >cost.txt
	echo "CPU time per MAD sent ($mads MADs), by thread:"
	for r in main umad2sim bridge ibsim; do
		awk -F'\t' -v r="$r" '$1 == r && $3 == "=" { printf "%-9s %6s us\n", r, $2 }' cost.txt
		awk -F'\t' -v r="$r" '$1 == r && $3 != "=" && $2 >= 0.05' cost.txt | sort -t"$(printf '\t')" -k2,2 -rn |
			awk -F'\t' '{ printf "   %6s us  %s\n", $2, $3 }'
	done
	# System calls and context switches, counted (no tracer slowing
	# the threads down, as strace does).
	ev=raw_syscalls:sys_enter,context-switches
	for c in write read poll futex epoll_wait timerfd_settime; do
		ev=$ev,syscalls:sys_enter_$c
	done
	perf stat -x, -e raw_syscalls:sys_enter,context-switches -p "$ibsim" \
		-o stat-ibsim.txt >/dev/null 2>&1 &
	perf=$!
	perf stat -x, -e "$ev" -o stat-bench.txt -- env LD_PRELOAD="$IBW_SIM_PRELOAD" \
		"$build/tests/bench_sweep" --rounds "${ROUNDS:-3}" >sweep2.txt
	kill -INT "$perf"
	wait "$perf" || true
	mads=$(awk '{ s += $6 } END { print s }' sweep2.txt)
	echo "Per MAD sent ($mads MADs), counted:"
	awk -F, -v m="$mads" -v w=bench '$1 ~ /^[0-9]+$/ {
		sub(/^(raw_)?syscalls:sys_enter_?/, "", $3)
		printf "   %-8s %-18s %6.3f\n", w, $3 == "" ? "system calls" : $3, $1 / m }' stat-bench.txt
	awk -F, -v m="$mads" -v w=ibsim '$1 ~ /^[0-9]+$/ {
		sub(/^(raw_)?syscalls:sys_enter_?/, "", $3)
		printf "   %-8s %-18s %6.3f\n", w, $3 == "" ? "system calls" : $3, $1 / m }' stat-ibsim.txt
	exit 0
fi

bench_net 3 2592 "$work/fattree3-2592.net"
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}
[ -r "$IBW_KMODEL" ] || { echo "mad_cost.sh: no kernel model at $IBW_KMODEL (build first)" >&2; exit 1; }
exec "$top/tests/lib/with-fabric.sh" bench_mad_cost "$work/fattree3-2592.net" \
	--sm node2592 --osm-args "-s 0" --ibsim-args "$flags" --timeout 300 \
	-- "$top/tests/bench/mad_cost.sh" "$build"
