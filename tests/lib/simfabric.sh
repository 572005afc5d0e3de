#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The simulated-fabric test bed: ibsim + opensm in a private directory.
#
#   simfabric.sh start DIR NETFILE [--sm NODE] [--ibsim-args "..."]
#                                  [--osm-args "..."] [--timeout SECS]
#   simfabric.sh cmd DIR 'Unlink "leaf01"[1]'    console command, prints reply
#   simfabric.sh env DIR                         shell lines to source
#   simfabric.sh sm-restart DIR ["-l 1"]         a new opensm, extra args
#   simfabric.sh sm-move DIR NODE                the SM on another node
#   simfabric.sh kill-sim DIR                    SIGKILL ibsim (and stop opensm)
#   simfabric.sh restart DIR                     ibsim and opensm again
#   simfabric.sh stop DIR                        stops what start started
#
# Each fabric has its own IBSIM_SOCKNAME (derived from DIR), so fabrics
# run side by side. `stop` kills exactly the PIDs `start` recorded,
# opensm first (it hangs on SIGTERM once ibsim is gone), then ibsim.
#
# Environment: IBW_SIMGUARD names the test-only preload library
# (ibw_simguard.so) that keeps umad2sim from crashing on unregistered
# classes; it is loaded into opensm and into every client. IBW_KMODEL,
# when it names a readable ibw_kmodel.so, is loaded before umad2sim in
# every process too: the Linux kernel's MAD rules (answers only to
# requests still waiting, its timeouts and retries, agent conflicts;
# docs/testing.md, "The kernel and fabric model"), with its shared
# state in DIR/kmodel (IBW_KM_STATE_DIR): ca-lids, the CA ports the
# fabric reaches, is written once the subnet is up and after each
# console command that changes links.
set -u

UMAD2SIM=${IBW_UMAD2SIM:-$(dpkg -L libumad2sim0 2>/dev/null | grep '/libumad2sim.so$' | head -n1)}

die() { echo "simfabric: $*" >&2; exit 1; }

# wait_for FILE PATTERN SECS PID: wait until PATTERN shows up in FILE,
# giving up after SECS or when PID is gone.
wait_for() {
	local file=$1 pat=$2 secs=$3 pid=$4 i
	for ((i = 0; i < secs * 20; i++)); do
		grep -q -- "$pat" "$file" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# is_ours PID NAME: PID is alive and runs NAME (guards against PID reuse).
is_ours() {
	[ -r "/proc/$1/cmdline" ] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -- "$2"
}

stop_pid() {
	local pidfile=$1 name=$2 pid i
	[ -f "$pidfile" ] || return 0
	pid=$(cat "$pidfile")
	if is_ours "$pid" "$name"; then
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			is_ours "$pid" "$name" || break
			sleep 0.05
		done
		if is_ours "$pid" "$name"; then
			kill -KILL "$pid" 2>/dev/null
			sleep 0.1
		fi
	fi
	rm -f "$pidfile"
}

first_hca() {
	awk '/^(Hca|Ca)[ \t]/ { match($0, /"[^"]*"/);
		print substr($0, RSTART + 1, RLENGTH - 2); exit }' "$1"
}

second_hca() {
	awk '/^(Hca|Ca)[ \t]/ { n++; if (n == 2) { match($0, /"[^"]*"/);
		print substr($0, RSTART + 1, RLENGTH - 2); exit } }' "$1"
}

cmd_start() {
	local dir=$1 net=$2; shift 2
	local sm="" ibsim_args="" osm_args="" timeout=60 host preload sock kmenv
	while [ $# -gt 0 ]; do
		case $1 in
		--sm) sm=$2; shift 2 ;;
		--ibsim-args) ibsim_args=$2; shift 2 ;;
		--osm-args) osm_args=$2; shift 2 ;;
		--timeout) timeout=$2; shift 2 ;;
		*) die "start: unknown option $1" ;;
		esac
	done
	[ -r "$net" ] || die "cannot read topology $net"
	[ -n "$UMAD2SIM" ] && [ -r "$UMAD2SIM" ] || die "libumad2sim.so not found (package libumad2sim0)"
	[ -n "${IBW_SIMGUARD:-}" ] && [ -r "$IBW_SIMGUARD" ] || die "IBW_SIMGUARD must name ibw_simguard.so"
	command -v ibsim >/dev/null || die "ibsim not found (package ibsim-utils)"
	command -v opensm >/dev/null || die "opensm not found"

	mkdir -p "$dir" || die "cannot create $dir"
	dir=$(cd "$dir" && pwd)
	[ -f "$dir/ibsim.pid" ] && die "$dir already has a fabric; stop it first"
	net=$(cd "$(dirname "$net")" && pwd)/$(basename "$net")
	[ -n "$sm" ] || sm=$(first_hca "$net")
	host=$(second_hca "$net")
	[ -n "$host" ] || host=$sm
	preload="$UMAD2SIM:$IBW_SIMGUARD"
	kmenv=""
	if [ -n "${IBW_KMODEL:-}" ] && [ -r "$IBW_KMODEL" ]; then
		preload="$IBW_KMODEL:$preload"
		mkdir -p "$dir/kmodel"
		kmenv="export IBW_KM_STATE_DIR='$dir/kmodel'"
	fi
	sock="ibw.$(printf '%s' "$dir" | md5sum | cut -c1-16)"
	mkdir -p "$dir/osm" "$dir/work"

	cat >"$dir/env" <<ENV
export IBW_SIM_DIR='$dir'
export IBSIM_SOCKNAME='$sock'
export IBW_SIM_PRELOAD='$preload'
export IBW_SIM_SM='$sm'
export SIM_HOST='$host'
$kmenv
ENV
	# What a restart needs to start the same fabric again.
	declare -p net ibsim_args osm_args timeout >"$dir/params"
	start_ibsim "$dir" || die "ibsim did not come up"
	start_opensm "$dir" || die "opensm did not bring the subnet up within ${timeout}s"
}

# start_ibsim DIR: ibsim on the fabric recorded in DIR.
start_ibsim() {
	local dir=$1 net ibsim_args osm_args timeout
	. "$dir/params"
	. "$dir/env"
	rm -f "$dir/console" "$dir/ibsim.log"
	mkfifo "$dir/console" || die "cannot create the console FIFO"
	# The console FIFO is opened read-write: with a plain `<` ibsim spins
	# at end-of-file once a writer closes.
	(cd "$dir" && IBSIM_SOCKNAME=$IBSIM_SOCKNAME exec ibsim -s $ibsim_args "$net" \
		<>"$dir/console" >"$dir/ibsim.log" 2>&1) &
	echo $! >"$dir/ibsim.pid"
	if ! wait_for "$dir/ibsim.log" 'sim>' "$timeout" "$(cat "$dir/ibsim.pid")"; then
		tail -n 5 "$dir/ibsim.log" >&2
		cmd_stop "$dir"
		return 1
	fi
}

# start_opensm DIR [EXTRA_ARGS]: opensm as the fabric's SM, with the
# arguments given at start and EXTRA_ARGS.
start_opensm() {
	local dir=$1 extra=${2:-} net ibsim_args osm_args timeout
	. "$dir/params"
	. "$dir/env"
	rm -f "$dir/osm/osm.log"
	(cd "$dir/work" && SIM_HOST=$IBW_SIM_SM LD_PRELOAD=$IBW_SIM_PRELOAD \
		OSM_TMP_DIR="$dir/osm" OSM_CACHE_DIR="$dir/osm" \
		exec opensm -d0 -d2 -f "$dir/osm/osm.log" $osm_args $extra \
		>"$dir/opensm.out" 2>&1 </dev/null) &
	echo $! >"$dir/opensm.pid"
	if ! wait_for "$dir/osm/osm.log" 'SUBNET UP' "$timeout" "$(cat "$dir/opensm.pid")"; then
		tail -n 5 "$dir/osm/osm.log" "$dir/opensm.out" >&2
		cmd_stop "$dir"
		return 1
	fi
	write_calids "$dir"
}

# sm-restart DIR [EXTRA_OPENSM_ARGS]: a new opensm run, e.g. with
# another LMC ("-l 1") so that the LIDs change.
cmd_sm_restart() {
	local dir=$1
	[ -f "$dir/params" ] || die "no fabric in $dir"
	stop_pid "$dir/opensm.pid" opensm
	start_opensm "$dir" "${2:-}" || die "opensm did not bring the subnet up again"
}

# sm-move DIR NODE: the master SM fails over to another node: opensm
# stopped, and started at NODE (another port GUID, the same LIDs: its
# cache is the first one's); the env file names the new SM node.
cmd_sm_move() {
	local dir=$1 node=$2
	[ -f "$dir/params" ] || die "no fabric in $dir"
	stop_pid "$dir/opensm.pid" opensm
	sed -i "s/^export IBW_SIM_SM=.*/export IBW_SIM_SM='$node'/" "$dir/env"
	start_opensm "$dir" || die "opensm did not bring the subnet up at $node"
}

# kill-sim DIR: the simulator dies (SIGKILL), as in a crash; opensm,
# left without it, is stopped too.
cmd_kill_sim() {
	local dir=$1 pid
	pid=$(cat "$dir/ibsim.pid" 2>/dev/null)
	is_ours "$pid" ibsim || die "ibsim in $dir is not running"
	kill -KILL "$pid"
	rm -f "$dir/ibsim.pid"
	stop_pid "$dir/opensm.pid" opensm
}

# restart DIR: ibsim and opensm again on the same fabric (after kill-sim).
cmd_restart() {
	local dir=$1
	[ -f "$dir/params" ] || die "no fabric in $dir"
	stop_pid "$dir/opensm.pid" opensm
	stop_pid "$dir/ibsim.pid" ibsim
	start_ibsim "$dir" || die "ibsim did not come up again"
	start_opensm "$dir" || die "opensm did not bring the subnet up again"
}

# console DIR LINE: one ibsim console command; prints the reply.
console() {
	local dir=$1; shift
	local line="$*" off size i
	[ -p "$dir/console" ] || die "no fabric in $dir"
	is_ours "$(cat "$dir/ibsim.pid" 2>/dev/null)" ibsim || die "ibsim in $dir is not running"
	off=$(stat -c %s "$dir/ibsim.log")
	printf '%s\n' "$line" >"$dir/console"
	# The reply ends with the next prompt.
	for ((i = 0; i < 200; i++)); do
		size=$(stat -c %s "$dir/ibsim.log")
		if [ "$size" -gt "$off" ] &&
		   tail -c +$((off + 1)) "$dir/ibsim.log" | grep -q 'sim> '; then
			tail -c +$((off + 1)) "$dir/ibsim.log" | sed 's/sim> //g'
			return 0
		fi
		sleep 0.05
	done
	die "no reply from ibsim to: $line"
}

# write_calids DIR: under the kernel model, the LIDs of the CA ports the
# fabric reaches, from ibsim's own state ("LID NODE" per line, in
# DIR/kmodel/ca-lids). The model answers a request of a class nobody on
# such a node registered as the host's MAD layer does, "not supported";
# a LID missing here (unlinked, down, not yet assigned) stays silent.
write_calids() {
	local dir=$1
	[ -d "$dir/kmodel" ] || return 0
	console "$dir" Dump | awk '
		/^[A-Za-z]+ [0-9]+ "/ { ca = ($1 == "Ca" || $1 == "Hca");
			match($0, /"[^"]*"/)
			name = substr($0, RSTART + 1, RLENGTH - 2)
			gsub(/[^A-Za-z0-9.-]/, "_", name)
			next }
		ca && name != "" && / lid [0-9]+ lmc / && !/Down\// &&
		    /"[^"]*"\[[0-9]+\]/ {
			for (i = 1; i < NF; i++) {
				if ($i == "lid") lid = $(i + 1)
				if ($i == "lmc") lmc = $(i + 1)
			}
			if (lid > 0)
				for (l = 0; l < 2 ^ lmc; l++)
					print lid + l, name
		}' >"$dir/kmodel/ca-lids.tmp" &&
		mv "$dir/kmodel/ca-lids.tmp" "$dir/kmodel/ca-lids"
}

# cmd DIR LINE: a console command; one that changes links also updates
# what the kernel model knows of the CA ports (write_calids).
cmd_cmd() {
	local dir=$1; shift
	console "$dir" "$@" || return
	case $(printf '%s' "$*" | tr 'A-Z' 'a-z') in
	link*|unlink*|relink*|clear*|baselid*|guid*) write_calids "$dir" ;;
	esac
}

cmd_stop() {
	local dir=$1
	stop_pid "$dir/opensm.pid" opensm
	stop_pid "$dir/ibsim.pid" ibsim
	rm -f "$dir/console"
}

[ $# -ge 2 ] || die "usage: simfabric.sh start|cmd|env|sm-restart|kill-sim|restart|stop DIR ..."
action=$1; shift
case $action in
start) [ $# -ge 2 ] || die "usage: start DIR NETFILE [options]"; cmd_start "$@" ;;
cmd) [ $# -ge 2 ] || die "usage: cmd DIR COMMAND"; cmd_cmd "$@" ;;
env) cat "$1/env" ;;
sm-move) [ $# -ge 2 ] || die "usage: sm-move DIR NODE"; cmd_sm_move "$@" ;;
sm-restart) cmd_sm_restart "$@" ;;
kill-sim) cmd_kill_sim "$1" ;;
restart) cmd_restart "$1" ;;
stop) cmd_stop "$1" ;;
*) die "unknown action $action" ;;
esac
