#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Running ibwatchd as an operator does, on a 32-host fat tree: the config
# file and --check-config (good and broken files, errors with their
# lines), every option of ibwatch.conf(5) known to the parser and every
# parser option either in ibwatch.conf(5) or refused as command-line
# only, SIGHUP with a changed interval (each changed option named,
# applied or needing a restart) and with a broken file, SIGTERM
# writing the state file, dropping to nobody after start, and the local
# link unlinked and relinked (the agent survives, marks its data stale,
# recovers without a restart).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

# Each phase with agents gets a fabric of its own, so that one phase's
# faults (an unlinked port) cannot leak into the next.
phase=${1:-}
if [ -z "${IBW_SIM_DIR:-}" ]; then
	work=${IBW_TEST_WORK:-$PWD/test-work}
	mkdir -p "$work"
	"$IBW_FATTREE" --levels 2 --hosts 32 >"$work/ops-32.net"
	rc=0
	for ph in ${IBW_OPS_PHASES:-config sighup nobody local}; do
		"$here/lib/with-fabric.sh" "operations-$ph" "$work/ops-32.net" \
			--sm node0032 -- "$0" "$ph" || rc=1
	done
	exit $rc
fi

trap stop_started EXIT
sweeps() { curl -s -m 5 "$U/api/v1/status" | jq -r '.sweeps.counter_sweeps // -1'; }

case $phase in
config)
# --check-config: a good file, then a broken one.
cat >good.conf <<'EOF'
# a comment
discovery-interval = 30
counter-interval = 10   ; an inline comment
threshold = SymbolErrorCounter=5
threshold = LinkDownedCounter=1
ping-target = node0002 HCA-1
no-snmp = yes
log-level = debug
EOF
out=$("$IBWATCHD" -c good.conf --check-config 2>&1); rc=$?
both() { [ "$1" = "$2" ] && grep -q -- "$3" <<<"$4"; } # rc want pattern text
check "--check-config on a good file: exit 0 ($out)" both $rc 0 'good.conf: configuration OK' "$out"
cat >bad.conf <<'EOF'
discovery-interval = 30
counter-interval = often
no-such-option = 1
once = yes
no-http = maybe
this line has no equals sign
user = no-such-user-here
EOF
out=$("$IBWATCHD" -c bad.conf --check-config 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
check "--check-config on a broken file: exit 2" test $rc = 2
check "... a bad value, with its line" grep -q "^bad.conf:2: counter-interval: 'often' is not a number" <<<"$out"
check "... an unknown option, with its line" grep -q "^bad.conf:3: unknown option 'no-such-option'" <<<"$out"
check "... a command-line-only option, with its line" grep -q "^bad.conf:4: 'once' goes only on the command line" <<<"$out"
check "... a flag that is not yes or no, with its line" grep -q "^bad.conf:5: no-http: 'maybe' is not yes or no" <<<"$out"
check "... a line that is not name = value, with its line" grep -q "^bad.conf:6: not 'name = value'" <<<"$out"
out=$("$IBWATCHD" -c missing.conf --check-config 2>&1); rc=$?
check "a -c file that is not there is an error ($out)" test $rc = 2
out=$(printf 'user = no-such-user-here\nno-http = yes\n' >user.conf; "$IBWATCHD" -c user.conf --check-config 2>&1); rc=$?
check "--check-config checks the user exists ($out)" both $rc 1 "no user 'no-such-user-here'" "$out"
out=$("$IBWATCHD" -c good.conf --counter-interval x --check-config 2>&1); rc=$?
check "the command line is checked too ($out)" both $rc 2 "^ibwatchd: --counter-interval: 'x'" "$out"

# ibwatch.conf(5) and the parser name the same options: each key the man
# page documents is known to the parser (exit 0 with "configuration OK",
# or exit 1 or 2 with an error that is not "unknown" or "command line
# only": about its value 'x', or a check after parsing such as
# --http-cert without --http-key; nothing printed or a crash counts as
# unknown), and each option in --help is either in the man
# page or refused in a file as command-line only.
man=$top/docs/man/ibwatch.conf.5
keys=$(sed -n 's/^\.BI "\([a-z-]*\) = " .*/\1/p' "$man" | sort -u)
known_key() { # KEY: true when the parser takes KEY as a file option
	local out rc
	printf '%s = x\n' "$1" >key.conf
	out=$("$IBWATCHD" -c key.conf --check-config 2>key.err)
	rc=$?
	out="$out$(cat key.err)"
	case $rc in
	0) grep -qx 'key.conf: configuration OK' <<<"$out" ;;
	1 | 2) [ -n "$out" ] && ! grep -q "unknown option\|goes only on the command line" <<<"$out" ;;
	*) return 1 ;;
	esac
}
unknown=""
for k in $keys; do
	known_key "$k" || { unknown="$unknown $k"; echo "# $k: $(cat key.err)"; }
done
check "every option in ibwatch.conf(5) ($(wc -w <<<"$keys")) is one the parser knows${unknown:+ (not:$unknown)}" \
	test -z "$unknown" -a "$(wc -w <<<"$keys")" -gt 35
undocumented=""
for o in $("$IBWATCHD" --help | grep -o -- '--[a-z-]*' | sed 's/^--//' | sort -u); do
	grep -qx "$o" <<<"$keys" && continue
	printf '%s = x\n' "$o" >key.conf
	out=$("$IBWATCHD" -c key.conf --check-config 2>&1)
	[ $? = 2 ] && grep -qx "key.conf:1: '$o' goes only on the command line" <<<"$out" ||
		undocumented="$undocumented $o"
done
check "every other option is refused in the file as command-line only${undocumented:+ (not:$undocumented)}" \
	test -z "$undocumented"
cli=$(sed -n '/^\.SH COMMAND LINE ONLY/,/^\.SH EXAMPLE/p' "$man")
listed=1
for o in config check-config once ping count ping-type trace reverse confirm version help; do
	grep -qw -- "$o" <<<"$cli" || listed=0
done
check "... and ibwatch.conf(5) lists those" test $listed = 1

;;
sighup)
# A running agent from a config file: SIGHUP with a changed interval,
# then with a broken file.
P=$(free_port)
cat >run.conf <<EOF
discovery-interval = 3600
counter-interval = 3600
ping-interval-ms = 1000
no-snmp = yes
http = 127.0.0.1:$P
state-file = $PWD/counters.state
EOF
spawn node0001 "$IBWATCHD" -c run.conf >agent.out 2>agent.log &
agent=$!
pids+=($agent)
U=http://127.0.0.1:$P
# the fewest probes sent to an endport (0 before the first discovery)
sent() { curl -s -m 5 "$U/api/v1/endports" | jq '[.[].sent] | min // 0' 2>/dev/null; }
for _ in $(seq 1 100); do [ "$(sent)" -ge 1 ] 2>/dev/null && break; sleep 0.1; done
check "the agent runs from its config file" grep -q "configuration from run.conf" agent.log
# The file's 3600 s is the interval in force: the first counter sweep
# after a start runs at once (reason "start"), and the next one, spread
# over 80% of the interval, does not end while the pinger, every 1000 ms
# by the same file, sends every endport three more probes (the agent's
# own clock, not ours). With an interval under about 3 s (the SIGHUP's
# 1 s below) it would.
for _ in $(seq 1 100); do [ "$(sweeps)" -ge 1 ] 2>/dev/null && break; sleep 0.1; done
n0=$(sweeps) p0=$(sent)
for _ in $(seq 1 100); do [ "$(sent)" -ge $((p0 + 3)) ] && break; sleep 0.1; done
check "with counter-interval 3600, no counter sweep ends after the first while every endport is pinged 3 more times ($n0 -> $(sweeps) sweeps, $p0 -> $(sent) probes)" \
	test "$(sweeps)" = 1 -a "$n0" = 1 -a "$(sent)" -ge $((p0 + 3))
sed -i 's/^counter-interval = 3600/counter-interval = 1/; s/^ping-interval-ms = 1000/ping-interval-ms = 2000/' run.conf
kill -HUP "$agent"
for _ in $(seq 1 100); do [ "$(sweeps)" -ge $((n0 + 3)) ] && break; sleep 0.1; done
check "SIGHUP with counter-interval 1: sweeps every second now ($n0 -> $(sweeps))" test "$(sweeps)" -ge $((n0 + 3))
check "... and it says so" grep -q 'SIGHUP: run.conf applied: discovery every 3600 s, counters every 1 s' agent.log
# The diff of every option: the changed interval applied, the changed
# ping interval named as needing a restart, nothing else named.
check "... naming each changed option: counter-interval applied, ping-interval-ms needs a restart ($(grep -o 'SIGHUP: [a-z-]* changed.*' agent.log | xargs))" \
	test "$(grep -o 'SIGHUP: [a-z-]* changed.*' agent.log)" = "SIGHUP: counter-interval changed in run.conf: applied
SIGHUP: ping-interval-ms changed in run.conf: needs a restart"
printf 'counter-interval = 3600\ncounter-interval = sometimes\n' >>run.conf
kill -HUP "$agent"
for _ in $(seq 1 50); do grep -q 'not applied' agent.log && break; sleep 0.1; done
check "SIGHUP with a broken file: the error with its line" grep -q "SIGHUP: run.conf:8: counter-interval: 'sometimes' is not a number" agent.log
check "... and the running configuration stays" grep -q 'SIGHUP: run.conf not applied: the running configuration stays' agent.log
# With the running interval (1 s) two more sweeps come within seconds;
# with the broken file's 3600 s they would not come in the 30 s allowed.
n1=$(sweeps)
for _ in $(seq 1 300); do [ "$(sweeps)" -ge $((n1 + 2)) ] && break; sleep 0.1; done
check "... still sweeping at the running interval ($n1 -> $(sweeps))" test "$(sweeps)" -ge $((n1 + 2))
check "... and serving" test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz")" = 200

# SIGTERM: the state file is written on the way out. Counter sweeps
# every 3600 s first (and the sweep under way over), so that no sweep
# writes it between its removal and the SIGTERM.
sed -i '/^counter-interval = /d' run.conf
echo 'counter-interval = 3600' >>run.conf
n2=$(sweeps)
kill -HUP "$agent"
for _ in $(seq 1 100); do grep -q 'counters every 3600 s' agent.log && break; sleep 0.1; done
for _ in $(seq 1 50); do [ "$(sweeps)" -gt "$n2" ] && break; sleep 0.1; done
check "SIGHUP back to counter-interval 3600" grep -q 'SIGHUP: run.conf applied: discovery every 3600 s, counters every 3600 s' agent.log
rm -f counters.state
check "SIGTERM stops the agent with exit status 0" stopped_clean "$agent"
check "... writing the state file at exit (removed before)" bash -c 'grep -q "^p " counters.state && grep -q "^end " counters.state'
check "... and logs the stop" grep -q 'signal 15: stopping' agent.log

;;
nobody)
# Dropping privileges: started as root, running as nobody, still
# sweeping the fabric and serving HTTP.
if [ "$(id -u)" = 0 ]; then
	P=$(free_port)
	U=http://127.0.0.1:$P
	spawn node0001 "$IBWATCHD" --user nobody --no-state-file --no-snmp --http "127.0.0.1:$P" \
		--discovery-interval 1 --counter-interval 1 >nobody.out 2>nobody.log &
	a2=$!
	pids+=($a2)
	for _ in $(seq 1 100); do [ "$(sweeps)" -ge 2 ] 2>/dev/null && break; sleep 0.1; done
	uid=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$a2/status")
	check "--user nobody: every uid of the process is nobody's ($uid)" test "$uid" = "65534 65534 65534 65534"
	check "... and it still sweeps the fabric ($(sweeps) counter sweeps)" test "$(sweeps)" -ge 2
	check "... and logs the change" grep -q 'running as nobody (uid 65534' nobody.log
	# An HCA reset: the device dies and comes back. The reopen runs as
	# nobody. (On the simulator there is no device node whose mode could
	# refuse it; a real node that nobody may not open is refused at the
	# start: unit_localdev checks that decision.)
	if [ -n "${IBW_KM_STATE_DIR:-}" ]; then
		touch "$IBW_KM_STATE_DIR/dead.$a2"
		for _ in $(seq 1 100); do
			curl -s -m 5 "$U/api/v1/status" | jq -e '.engine.device_lost' >/dev/null && break
			sleep 0.1
		done
		rm -f "$IBW_KM_STATE_DIR/dead.$a2"
		s0=$(sweeps)
		for _ in $(seq 1 200); do
			curl -s -m 5 "$U/api/v1/status" |
				jq -e --argjson s "$s0" '.engine.device_reopens == 1 and (.stale | not) and .sweeps.counter_sweeps > $s' >/dev/null && break
			sleep 0.1
		done
		check "... and after an HCA reset, still nobody, it opens the device again and sweeps ($(curl -s -m 5 "$U/api/v1/status" | jq -c '[.engine.device_reopens, .stale]'))" \
			bash -c 'curl -s -m 5 "$1/api/v1/status" | jq -e --argjson s "$2" ".engine.device_reopens == 1 and (.stale | not) and .sweeps.counter_sweeps > \$s" >/dev/null' _ "$U" "$s0"
		check "... logging why it could not tell beforehand" grep -q 'user nobody: cannot tell whether it may reopen the device' nobody.log
	fi
	check "... and stops on SIGTERM with exit status 0" stopped_clean "$a2"
else
	# Not root (CI runs as root): changing user must be refused, clearly.
	spawn node0001 "$IBWATCHD" --user root --no-state-file --no-snmp --no-http --once \
		>nobody.out 2>nobody.err &
	a2=$!
	wait $a2
	rc=$?
	check "not root: --user root is refused with exit status 1 ($rc, $(cat nobody.err))" \
		bash -c "[ $rc = 1 ] && grep -qx 'ibwatchd: user root: only root can change user' nobody.err"
	echo "ok - skipped: the privilege drop itself needs root (uid $(id -u))"
fi

;;
local)
# The local link goes and comes back.
# start_agent tries other ports when the one it drew is taken (a random
# port once was, by another test running beside this one).
start_agent node0003 --no-state-file --no-snmp --ping-method pma \
	--log-level debug --discovery-interval 2 --counter-interval 2 --ping-interval-ms 300 ||
	{ echo "not ok - the agent does not start"; exit 1; }
U=http://127.0.0.1:$P
a3=$agent
ln -sf "agent-$P.log" local.log
st() { curl -s -m 5 "$U/api/v1/status"; }
for _ in $(seq 1 150); do st | jqe '.endports.up == 32 and .stale == false' && break; sleep 0.1; done
st >before.json
check "before: fresh, 44 nodes, 32 endports up ($(jq -c '{stale, n: .fabric.nodes, ep: .endports}' before.json))" \
	jq -e '.stale == false and .fabric.nodes == 44 and .endports.up == 32' before.json
sim 'Unlink "node0003"[1]'
for _ in $(seq 1 100); do st | jqe '.local_port_lost' && break; sleep 0.1; done
st >lost.json
check "local link unlinked: the data is marked stale, the port lost" jq -e '.stale == true and .local_port_lost == true and .local_port_state == "down"' lost.json
# Pings pause: none is sent while the agent looks for its port twice
# more (1 s, then 2 s later: 10 ping intervals of 300 ms, in which
# every endport would have gone down had its pings gone on and been
# lost), and no endport goes down.
sent() { curl -s -m 5 "$U/api/v1/endports" | jq '[.[].sent] | add'; }
looks() { grep -c 'monitor: local port still down; next look in' local.log; }
n0=$(looks) s0=$(sent)
for _ in $(seq 1 100); do [ "$(looks)" -ge $((n0 + 2)) ] && break; sleep 0.1; done
n1=$(looks) s1=$(sent)
st >lost2.json
check "... no ping sent while it looked for its port twice more (looks $n0 -> $n1, probes $s0 -> $s1)" \
	test "$n1" -ge $((n0 + 2)) -a "$s0" = "$s1" -a "$s0" -gt 0
check "... the last fabric is kept (44 nodes, none gone) and no endport went down for it" \
	jq -e '.fabric.nodes == 44 and .fabric.gone_nodes == 0 and .endports.down == 0' lost2.json
check "... /healthz says 503" test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$U/healthz")" = 503
check "... and it is logged" grep -q 'local port 1 is down: keeping the last picture of the fabric (44 nodes)' local.log
sim 'Relink "node0003"[1]'
for _ in $(seq 1 150); do st | jqe '.stale == false' && break; sleep 0.1; done
st >back.json
check "relinked: fresh again without a restart" jq -e '.stale == false and .local_port_lost == false and .local_port_state == "active" and .fabric.nodes == 44' back.json
check "... the same process ($a3), which logs the recovery" bash -c "kill -0 $a3 && grep -q 'local port is active again' local.log"
check "... and no node was ever reported gone" bash -c "! grep -q 'event: node_gone' local.log"

;;
esac

finish
