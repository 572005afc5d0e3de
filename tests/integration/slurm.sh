#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The job view with a real Slurm (tests/lib/slurm.sh: munged, slurmctld,
# a slurmd per host of the 16-host fat tree) and the shipped prolog and
# epilog (deploy/slurm) writing ibwatchd's --jobs-dir:
# - the hostlist parser agrees with scontrol show hostnames on a table;
# - /api/v1/jobs equals squeue's running jobs within 2 s of a start and
#   an end; a file a missed epilog left is dropped at the next squeue
#   check, a missed prolog's job written;
# - a job's rates are the sum of its host ports' (driven counters);
#   hosts in two jobs (and an array's tasks on one host) are shared;
# - with a leaf-spine cable failing, /api/v1/links lists exactly the
#   running jobs whose host pairs ibtracert routes over it, and its
#   link_health_changed event names them; ibwatch_job_* in /metrics;
# - ibwatchd as the shipped unit runs it (its user, umask and sandbox,
#   the spool as the shipped tmpfiles.d entry makes it) and Slurm as
#   sites run it: a job in a hidden partition, one in a partition the
#   agent's group may not use, and all of them under PrivateData=jobs
#   stay in the view; the squeue check mends the spool in the sandbox;
#   the jobs options and the host map follow SIGHUP; a job that ends
#   between squeue's answer and the check's write is not written back.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
. "$here/lib/tap.sh"
. "$here/lib/slurm.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_HOSTLIST:?}"

for b in munged slurmctld slurmd sbatch squeue scontrol; do
	command -v "$b" >/dev/null || { echo "not ok - $b is needed (tests/run.sh installs slurm-wlm and munge)"; exit 1; }
done
on_fattree slurm 16
trap 'slurm_stop; stop_started' EXIT

# The spool where the shipped scripts write it, moved under ./root, as
# the shipped tmpfiles.d entry makes it: its owner the unit's User=
# (ibwatch; nobody stands in for it here), its group SlurmUser's.
prolog=$top/deploy/slurm/ibwatch-prolog epilog=$top/deploy/slurm/ibwatch-epilog
tmpfiles=$top/deploy/slurm/ibwatch-jobs.tmpfiles
units=("$top/deploy/systemd/ibwatchd.service.in" "$top/deploy/systemd/ibwatchd@.service.in")
spool=$(sed -n 's/^dir=\([^ ]*\) .*/\1/p' "$prolog")
unit_user=$(sed -n 's/^User=//p' "${units[0]}")
read -r _ _ tmode towner tgroup _ < <(awk -v p="$spool" '$1 == "d" && $2 == p' "$tmpfiles")
same_spool() {
	[ -n "$spool" ] && grep -qx "dir=$spool # ibwatchd's --jobs-dir" "$epilog" &&
		[ "$towner" = "$unit_user" ] && getent group "$tgroup" >/dev/null &&
		grep -qx "ReadWritePaths=-$spool" "${units[0]}" && grep -qx "ReadWritePaths=-$spool" "${units[1]}"
}
check "one spool, $spool: the prolog's, the epilog's, the tmpfiles.d entry's (${tmode:-?} ${towner:-?}:${tgroup:-?}) and the units' ReadWritePaths" same_spool
standin=nobody standin_group=nogroup
jobs=$PWD/root${spool:-/run/ibwatch/jobs}
mkdir -p "$jobs"
chown "$standin:${tgroup:-root}" "$jobs" && chmod "${tmode:-0770}" "$jobs"
# two partitions a site hides from users, for section 7
check "Slurm starts: 16 slurmd idle" slurm_start 16 "$jobs" \
	"PartitionName=hidden Nodes=node0015 Hidden=YES MaxTime=INFINITE State=UP
PartitionName=staff Nodes=node0016 AllowGroups=root MaxTime=INFINITE State=UP"

# 1. The hostlist parser against scontrol.
same=1
for e in 'node[0001-0003,0007]' 'gpu[1-2]-ib[01-02]' 'n[08-11]' 'n[8-11]' \
	'node[009-011]' 'a,b[1-3],c' 'x[0]' 'rack[1-2]n[001-002]' 'node[1-03]' \
	'n[00-02]' 'a,,b' 'node[0001-0016]' 'r[1-2]c[1-3]n[01-02]' \
	'a[1-2]b[1-2]c[1-2]d[1-2]'; do
	ours=$("$IBW_HOSTLIST" "$e" | paste -sd' ')
	ref=$(scontrol show hostnames "$e" 2>/dev/null | paste -sd' ')
	[ "$ours" = "$ref" ] || { same=0; echo "# $e: ours '$ours', scontrol '$ref'"; }
done
check "hostlist expressions expand as scontrol show hostnames (14 cases)" [ "$same" = 1 ]

# a site whose Slurm calls node0014 what the fabric calls node0013
printf '# slurm fabric\nnode0014 node0013\n' >hostmap
start_agent node0001 --no-state-file --counter-interval 2 --ping-interval-ms 1000 --discovery-interval 2 \
	--jobs-dir "$jobs" --jobs-check-interval 2 --jobs-host-map "$PWD/hostmap" \
	--link-threshold symbol_errors_per_day=100
check "the agent listens" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
running() { squeue -h -t R -o %A | sort -n | paste -sd,; }
ours() { curl -s -m 5 "$U/api/v1/jobs" | jq -r '[.jobs[].id] | join(",")'; }
# wait_same: until /api/v1/jobs lists squeue's running jobs; the seconds
# it took in $took
wait_same() {
	local t0 want
	t0=$(date +%s.%N)
	for _ in $(seq 1 100); do
		want=$(running)
		[ "$(ours)" = "$want" ] && break
		sleep 0.05
	done
	took=$(echo "$(date +%s.%N) - $t0" | bc)
	[ "$(ours)" = "$(running)" ]
}

# 2. Jobs: A on leaf01's four hosts, B across leaf01 and leaf02 (sharing
# node0004 with A), C on three other leaves, an array of two tasks on
# node0009, and one that cannot run yet (it begins in an hour).
sb() { sbatch --parsable "$@" --wrap 'sleep 600' 2>/dev/null | cut -d';' -f1; }
A=$(sb -w 'node[0001-0004]' -N 4)
B=$(sb -w 'node0004,node0005' -N 2)
C=$(sb -w 'node[0006,0010,0014]' -N 3)
D=$(sb -a 1-2 -w node0009)
E=$(sb -w node0001 --begin=now+3600)
for _ in $(seq 1 100); do [ "$(squeue -h -t R | wc -l)" = 5 ] && break; sleep 0.1; done
check "squeue: 5 running (A $A, B $B, C $C, the array $D's 2 tasks), $E pending" \
	eval '[ "$(squeue -h -t R | wc -l)" = 5 ] && [ "$(squeue -h -t PD -o %A)" = "$E" ]'
check "the job map equals squeue's running jobs ($(running)) within 2 s" wait_same
echo "# took $took s"
in_map() { ours | tr , '\n' | grep -qx "$1"; }
check "... and the pending one is not in it" eval '! in_map "$E"'
curl -s -m 5 "$U/api/v1/jobs" >j1.json
jobf() { jq -c --arg i "$1" '.jobs[] | select(.id == $i)' j1.json; }
check "job $A: 4 hosts, all found, shares node0004 with $B" \
	eval 'jobf $A | jq -e ".hosts == 4 and .hosts_found == 4 and .shared and .hosts_shared == 1 and .nodes == \"node[0001-0004]\""'
check "job $C: 3 hosts, not shared" eval 'jobf $C | jq -e ".hosts == 3 and (.shared | not)"'
check "job $C's node0014 is the fabric's node0013 (--jobs-host-map)" \
	eval 'curl -s -m 5 "$U/api/v1/jobs/$C" | jq -e "[.ports[] | select(.host == \"node0014\") | .name] == [\"node0013 HCA-1\"]"'
check "the array's tasks: array_job_id $D, tasks 1 and 2, both on node0009, shared" \
	jq -e --arg d "$D" '[.jobs[] | select(.array_job_id == $d)] | length == 2 and
		all(.shared and .nodes == "node0009") and ([.[].array_task_id] | sort) == ["1", "2"]' j1.json

# An end and a start, timed.
scancel "$C"
check "job $C ended: gone from the map within 2 s" wait_same
echo "# took $took s"
C=$(sb -w 'node[0006,0010,0014]' -N 3)
for _ in $(seq 1 100); do squeue -h -t R -o %A | grep -qx "$C" && break; sleep 0.05; done
check "job $C started again: in the map within 2 s" wait_same
echo "# took $took s"

# 3. The squeue check: a missed epilog's file, a missed prolog's job.
printf 'job_id=999999\nuser=ghost\npartition=debug\nnodes=node0007\n' >"$jobs/.tmp" && mv "$jobs/.tmp" "$jobs/999999"
# until CMD... succeeds, 8 s at most
until_ok() {
	for _ in $(seq 1 80); do "$@" && return 0; sleep 0.1; done
	return 1
}
ghost_gone() { [ ! -e "$jobs/999999" ] && ! in_map 999999; }
check "a file for a job that is not running shows (as the spool says)" until_ok in_map 999999
check "... and the next check (every 2 s) drops it" until_ok ghost_gone
rm -f "$jobs/$B"
check "job $B's file removed (a missed prolog): the check writes it again" until_ok test -e "$jobs/$B"
check "... and the map has it" wait_same

# 4. Rates: node0005's counters driven; job B's rates are the sum of its
# ports' (node0004's and node0005's) in the same snapshot.
sim 'PerformanceSet "node0005"[1] PortCounters.PortXmitData=100000000'
sim 'PerformanceSet "node0004"[1] PortCounters.PortXmitData=50000000'
ok=0
for _ in $(seq 1 40); do
	s0=$(curl -s -m 5 "$U/api/v1/status" | jq .snapshot_seq)
	curl -s -m 5 "$U/api/v1/jobs/$B" >jb.json
	curl -s -m 5 "$U/api/v1/ports?type=ca" >pc.json
	s1=$(curl -s -m 5 "$U/api/v1/status" | jq .snapshot_seq)
	[ "$s0" = "$s1" ] || continue
	sum=$(jq -n --slurpfile j jb.json --slurpfile p pc.json '
		[$j[0].ports[] | . as $q | $p[0][] | select(.node_guid == $q.guid and .port == $q.port) | .counters.rates.transmit_bytes_per_second] | add')
	mine=$(jq .rates.transmit_bytes_per_second jb.json)
	if jq -e -n "$mine > 0 and ($mine - $sum | fabs) < 1e-6 * $mine" >/dev/null; then
		ok=1
		break
	fi
	sleep 0.5
done
check "job $B transmits the sum of its hosts' ports ($mine = $sum B/s)" [ "$ok" = 1 ]

# 5. A leaf-spine cable failing: the jobs whose pairs cross it.
for _ in $(seq 1 100); do curl -s -m 5 "$U/api/v1/routes" | jq -e '.summary.routed > 0' >/dev/null 2>&1 && break; sleep 0.2; done
check "the route census ran" eval 'curl -s -m 5 "$U/api/v1/routes" | jq -e ".summary.routed > 0"'
declare -A lid
for i in $(seq 1 16); do h=$(printf node%04d "$i"); lid[$h]=$(lid_of "$h"); done
at node0001 ibtracert "${lid[node0004]}" "${lid[node0005]}" >t45.txt
# leaf01's port towards the spine on node0004 -> node0005
lport=$(awk '/"leaf01"$/ { getline; sub(/^\[/, ""); sub(/\].*/, ""); print; exit }' t45.txt)
check "ibtracert node0004 -> node0005 leaves leaf01 by port $lport" [ -n "$lport" ]
# expected: every running job with a host pair whose path (ibtracert)
# crosses leaf01 port $lport either way
expected=""
for id in $(running | tr , ' '); do
	hosts=$(squeue -h -j "$id" -o %N | xargs scontrol show hostnames)
	hit=0
	for a in $hosts; do
		for b in $hosts; do
			[ "$a" = "$b" ] && continue
			at node0001 ibtracert "${lid[$a]}" "${lid[$b]}" >tr.txt 2>/dev/null
			# out of leaf01 by the port, or into leaf01 by it
			if awk -v p="$lport" '
				/"leaf01"$/ { l = 1; if (index($0, "}[" p "]")) f = 1; next }
				l { l = 0; if ($1 == "[" p "]") f = 1 }
				END { exit !f }' tr.txt; then
				hit=1
				break 2
			fi
		done
	done
	[ "$hit" = 1 ] && expected="$expected,$id"
done
expected=${expected#,}
check "ibtracert: the jobs crossing leaf01 port $lport are $expected" [ -n "$expected" ]
sim "PerformanceSet \"leaf01\"[$lport] PortCounters.SymbolErrorCounter=2000"
g1=$(curl -s -m 5 "$U/api/v1/nodes" | jq -r '.[] | select(.name == "leaf01") | .guid')
for _ in $(seq 1 100); do
	curl -s -m 5 "$U/api/v1/links/$g1/$lport" >lk.json
	jq -e '.health != "ok"' lk.json >/dev/null 2>&1 && break
	sleep 0.2
done
# 2000 symbol errors at SDR, where no FEC runs: judged by the
# SymbolErrorCounter, a BER past ber_failing (docs/links.md)
check "the cable at leaf01 port $lport is failing" jq -e '.health == "failing"' lk.json
check "/api/v1/links lists exactly the jobs whose pairs cross it: $(jq -c .jobs lk.json)" \
	jq -e --arg e "$expected" '(.jobs | join(",")) == $e' lk.json
curl -s -m 5 "$U/api/v1/links" >la.json
check "... the same in /api/v1/links" \
	jq -e --arg g "$g1" --argjson p "$lport" --arg e "$expected" '
		(.links[] | select(any(.ends[]; .guid == $g and .port == $p)) | .jobs | join(",")) == $e' la.json
curl -s -m 5 "$U/api/v1/events" >ev.json
check "the link_health_changed event names them (affects)" \
	jq -e --arg g "$g1" --argjson p "$lport" --arg e "$expected" '
		[.events[] | select(.kind == "link_health_changed" and .new == "failing" and
			((.node_guid == $g and .port == $p) or (.peer_guid == $g and .peer_port == $p)))] |
		length == 1 and (.[0].affects | join(",")) == $e' ev.json
curl -s -m 5 "$U/api/v1/jobs/$B" >jb2.json
check "job $B: its links include that cable, worst health failing" \
	jq -e --arg g "$g1" --argjson p "$lport" '.links.worst_health == "failing" and
		any(.links.list[]; .guid == $g and .port == $p)' jb2.json
# The map highlights job B's hosts (leaf01, leaf02) and its switch
# links (those /api/v1/jobs/B lists between two switches).
if [ -x /usr/bin/chromium ] && /usr/bin/python3 -c 'import selenium' 2>/dev/null; then
	/usr/bin/python3 "$here/integration/browser.py" "$U" bj.json --job "$B" >bj.out 2>&1
	want=$(jq -c --slurpfile m <(curl -s -m 5 "$U/api/v1/map") '
		($m[0].switches | map({(.guid): .name}) | add) as $n |
		[.links.list[] | select($n[.guid] != null and $n[.peer_guid] != null) |
			[$n[.guid], $n[.peer_guid]] | sort] | unique | sort' jb2.json)
	check "the map highlights job $B: leaf01 and leaf02, its switch links $want" \
		jq -e --argjson w "$want" '.job.job.leaves == ["leaf01", "leaf02"] and .job.job.bundles == $w and ($w | length) > 0' bj.json
	check "... and its details chart its ports' last hour, summed: all $(jq '.ports | length' jb2.json) ports, 12 points, bytes sent" \
		jq -e --slurpfile j jb2.json '.job_history.ports == ([$j[0].ports | length, 64] | min) and
			(.job_history.sent | length) == 12 and ([.job_history.sent[] | select(. != null)] | add) > 0' bj.json
else
	check "chromium and python3-selenium for the map's job highlight" false
fi
metrics_of "$U" >m.txt
check "/metrics: ibwatch_job_hosts for job $A is 4, ibwatch_job_shared 1" \
	eval 'grep -q "^ibwatch_job_hosts{job_id=\"$A\",user=\"root\",partition=\"debug\"} 4$" m.txt &&
		grep -q "^ibwatch_job_shared{job_id=\"$A\",user=\"root\",partition=\"debug\"} 1$" m.txt'
check "... one ibwatch_job_hosts per running job ($(running | tr , '\n' | wc -l))" \
	eval '[ "$(grep -c "^ibwatch_job_hosts{" m.txt)" = "$(running | tr , "\n" | wc -l)" ]'
check "promtool check metrics takes it" \
	eval "grep -v '^ibwatch_build_info' m.txt | promtool check metrics >promtool.out 2>&1 || ! grep -qi 'error' promtool.out"

# 5b. Snapshots take each job's census walk from the last one while the
# census stands; when the routes change, job B's links follow them.
walks() { curl -s -m 5 "$U/api/v1/jobs" | jq -c .route_walks; }
w0=$(walks)
for _ in $(seq 1 6); do walks >/dev/null; sleep 0.5; done
w1=$(walks)
check "snapshots reuse the jobs' walks: route_walks $w0, then $w1" \
	jq -e -n --argjson a "$w0" --argjson b "$w1" '$b.reused > $a.reused and $b.made == $a.made'
# B's switch hops as ibtracert prints them, "NAME PORT" each, sorted
hops_of_b() {
	local a b
	for a in node0004 node0005; do
		for b in node0004 node0005; do
			[ "$a" = "$b" ] && continue
			at node0001 ibtracert "${lid[$a]}" "${lid[$b]}" 2>/dev/null |
				awk '/^\[/ { p = substr($0, 2, index($0, "]") - 2); if (sw != "") print sw, p
					sw = ""; if ($0 ~ / -> switch port /) { n = $0; sub(/"$/, "", n); sub(/.*"/, "", n); sw = n } }'
		done
	done | sort -u
}
ours_of_b() {
	curl -s -m 5 "$U/api/v1/jobs/$B" |
		jq -r --slurpfile m <(curl -s -m 5 "$U/api/v1/map") '
			($m[0].switches | map({(.guid): .name}) | add) as $n |
			.links.list[] | select($n[.guid] != null) | "\($n[.guid]) \(.port)"' | sort -u
}
before=$(ours_of_b | paste -sd' ')
check "job B's switch hops are ibtracert's: $before" [ "$before" = "$(hops_of_b | paste -sd' ')" ]
sim "Unlink \"leaf01\"[$lport]"
same_hops() {
	now=$(ours_of_b | paste -sd' ')
	[ "$now" != "$before" ] && [ "$now" = "$(hops_of_b | paste -sd' ')" ]
}
for _ in $(seq 1 60); do same_hops && break; sleep 0.5; done
check "leaf01 port $lport unlinked: job B's hops move with the routes, ibtracert's again: $now" same_hops
sim "Relink \"leaf01\"[$lport]"

# 6. The end: every job cancelled, the map empty.
scancel -u "$(id -un)"
check "all cancelled: the map is empty within 2 s" wait_same
check "... and the spool directory holds no job file" eval '[ -z "$(ls "$jobs")" ]'
check "the agent stops cleanly" stopped_clean "$agent"

# 7. ibwatchd as the shipped unit runs it, without systemd: its User=
# (the stand-in), UMask=, NoNewPrivileges=, no capabilities, and
# ProtectSystem=strict (the whole tree read-only in a mount namespace of
# its own) but for ReadWritePaths= (moved under ./root); the jobs options
# in a config file, as SIGHUP reads them.
umask_u=$(sed -n 's/^UMask=//p' "${units[0]}")
rw=$(sed -n 's/^ReadWritePaths=-\{0,1\}//p' "${units[0]}" | sed "s|^/|$PWD/root/|" | paste -sd' ')
check "the unit: ProtectSystem=strict, NoNewPrivileges=yes, UMask=$umask_u, User=$unit_user" \
	eval 'grep -qx ProtectSystem=strict "${units[0]}" && grep -qx NoNewPrivileges=yes "${units[0]}" && [ -n "$umask_u" ]'
# umad2sim makes its simulated sysfs in the working directory: the test
# bed's one writable directory more, not the unit's
simcwd=$PWD/sim-cwd
mkdir -p "$simcwd" && chmod 0777 "$simcwd" # not sticky: race.arm below
cat >sandbox <<SANDBOX
#!/bin/bash
# ibwatchd in the unit's sandbox (tests/integration/slurm.sh, section 7);
# umad2sim is preloaded into ibwatchd alone
pre=\${LD_PRELOAD:-}
unset LD_PRELOAD
exec unshare -m --propagation private -- bash -c '
	mount -o remount,bind,ro / || exit 1
	for p in $rw $simcwd; do
		mount --bind "\$p" "\$p" && mount -o remount,bind,rw "\$p" || exit 1
	done
	cd $simcwd || exit 1
	umask $umask_u
	exec setpriv --reuid=$standin --regid=$standin_group --clear-groups \
		--no-new-privs --inh-caps=-all --bounding-set=-all \
		env LD_PRELOAD="\$0" "\$@"' "\$pre" "$IBWATCHD" "\$@"
SANDBOX
chmod 755 sandbox
# as_agent CMD...: CMD as the agent's user, in a clean environment
as_agent() { setpriv --reuid=$standin --regid=$standin_group --clear-groups env -i PATH=/usr/bin:/bin SLURM_CONF="$SLURM_CONF" "$@"; }
H=$(sb -p hidden -w node0015)
S=$(sb -p staff -w node0016)
Q=$(sb -w node0012)
for _ in $(seq 1 100); do [ "$(squeue -h -t R | wc -l)" = 3 ] && break; sleep 0.1; done
check "running: $H in the hidden partition, $S in staff (AllowGroups=root), $Q in debug" \
	eval '[ "$(running)" = "$H,$S,$Q" ]'
check "... squeue without --all hides $H and $S from the agent's user: $(as_agent squeue -h -t R -o %A | paste -sd,)" \
	eval '[ "$(as_agent squeue -h -t R -o %A | paste -sd,)" = "$Q" ]'
# a missed epilog's file, a minute old
ghost() {
	[ -d "$jobs" ] || return 1
	printf 'job_id=%s\nuser=ghost\npartition=debug\nnodes=node0007\n' "$1" >"$jobs/$1" &&
		touch -d '-1 min' "$jobs/$1"
}
ghost 999998
printf 'node0015 node0013\n' >hostmap2
printf 'jobs-dir = %s\njobs-check-interval = 0\njobs-host-map = %s\n' "$jobs" "$PWD/hostmap2" >jobs.conf
chmod 644 hostmap2 jobs.conf
IBWATCHD=$PWD/sandbox start_agent node0001 -c "$PWD/jobs.conf" --no-state-file --no-snmp \
	--discovery-interval 2 --counter-interval 2
check "the agent listens, in the sandbox as $standin" \
	eval '[ -n "${P:-}" ] && [ "$(stat -c %U /proc/$agent)" = "$standin" ]'
U=http://127.0.0.1:$P
alog=agent-$P.log
named() { curl -s -m 5 "$U/api/v1/jobs/$1" | jq -r --arg h "$2" '[.ports[] | select(.host == $h) | .name] | join(",")'; }
check "no check yet (jobs-check-interval 0): the map is the spool, $H, $S, $Q and 999998" \
	until_ok eval '[ "$(ours)" = "$H,$S,$Q,999998" ]'
check "job $H's node0015 is the fabric's node0013 (jobs-host-map)" \
	until_ok eval '[ "$(named $H node0015)" = "node0013 HCA-1" ]'
sqcheck() { curl -s -m 5 "$U/api/v1/jobs" | jq -c .squeue_check; }
check "... and /api/v1/jobs says no squeue check runs ($(sqcheck))" test "$(sqcheck)" = null
# the shipped scripts as SlurmUser runs them (slurm, the spool's group):
# the agent's user reads what the prolog wrote
as_slurm() {
	setpriv --reuid=slurm --regid=slurm --clear-groups env -i SLURM_JOB_ID=999990 SLURM_JOB_USER=alice \
		SLURM_JOB_PARTITION=debug SLURM_JOB_NODELIST=node0007 "$@"
}
as_slurm "$PWD/slurm/prolog"
check "the prolog, run as slurm, writes a job the agent reads" until_ok in_map 999990
as_slurm "$PWD/slurm/epilog"
check "... and its epilog removes it" until_ok eval '! in_map 999990 && [ ! -e "$jobs/999990" ]'

# SIGHUP: the check every second, node0015 mapped elsewhere
printf 'node0015 node0014\n' >hostmap2
printf 'jobs-dir = %s\njobs-check-interval = 1\njobs-host-map = %s\n' "$jobs" "$PWD/hostmap2" >jobs.conf
kill -HUP "$agent"
check "SIGHUP: the check runs now; in the sandbox, as $standin, it removes a missed epilog's file" \
	until_ok eval '[ ! -e "$jobs/999998" ] && ! in_map 999998'
rm -f "${jobs:?}/$Q"
check "... and writes a missed prolog's job ($Q)" until_ok test -e "$jobs/$Q"
check "... the host map read again: $H's node0015 is now node0014" \
	until_ok eval '[ "$(named $H node0015)" = "node0014 HCA-1" ]'
check "... and the log says jobs-check-interval was applied" \
	grep -q 'SIGHUP: jobs-check-interval changed in .*: applied' "$alog"
check "... /api/v1/jobs: the check removes files ($(sqcheck))" \
	test "$(sqcheck)" = '{"removes_files":true,"reason":null}'
sleep 3
check "three checks on, $H (hidden partition) and $S (AllowGroups) keep their files and stay in the view" \
	eval '[ -e "$jobs/$H" ] && [ -e "$jobs/$S" ] && [ "$(ours)" = "$H,$S,$Q" ]'

# The race: job R runs when squeue answers, without a file (a missed
# prolog), and ends before the check writes one. squeue here is the real
# one behind a wrapper (jobs-squeue, applied on SIGHUP; scontrol beside
# it) that, armed, holds its answer until the test has cancelled R and
# slurmctld has ended it. The check must not leave R's file behind.
R=$(sb -w node0011)
check "job $R runs, its file written by the prolog" until_ok eval 'in_map "$R" && [ -e "$jobs/$R" ]'
mkdir -p sq
ln -sf "$(command -v scontrol)" sq/scontrol
cat >sq/squeue <<SQUEUE
#!/bin/bash
# squeue for slurm.sh's race: armed (race.arm), it answers only once
# race.done exists (15 s at most); each call a line of sq.calls
echo "\$*" >>"$simcwd/sq.calls"
out=\$("$(command -v squeue)" "\$@") || exit 1
if mv "$simcwd/race.arm" "$simcwd/race.fired" 2>/dev/null; then
	for _ in \$(seq 1 150); do [ -e "$simcwd/race.done" ] && break; sleep 0.1; done
fi
printf '%s\n' "\$out"
SQUEUE
chmod 755 sq/squeue
printf 'jobs-squeue = %s\n' "$PWD/sq/squeue" >>jobs.conf
kill -HUP "$agent"
calls() { cat "$simcwd/sq.calls" 2>/dev/null | wc -l; }
check "SIGHUP: the check runs the squeue jobs-squeue names" until_ok eval '[ "$(calls)" -ge 1 ]'
rm -f "${jobs:?}/$R"
touch "$simcwd/race.arm"
check "... which answers with $R running, then holds its answer" until_ok test -e "$simcwd/race.fired"
scancel "$R"
for _ in $(seq 1 100); do [ -z "$(squeue -h -j "$R" -t R,CG -o %A 2>/dev/null)" ] && break; sleep 0.1; done
touch "$simcwd/race.done"
n0=$(calls)
# the check goes on (its confirming squeue, if any), then two more
until_ok eval '[ "$(calls)" -ge $((n0 + 3)) ]'
check "job $R ended between squeue's answer and the write: its file is not left behind, nor logged as written" \
	eval '[ ! -e "$jobs/$R" ] && ! in_map "$R" && ! grep -q "job $R runs (squeue) without a file: written" "$alog"'

# PrivateData=jobs: the agent's user sees none of root's jobs now
echo PrivateData=jobs >>"$SLURM_CONF"
scontrol reconfigure
for _ in $(seq 1 50); do [ -z "$(as_agent squeue --all -h -t R -o %A)" ] && break; sleep 0.1; done
check "PrivateData=jobs: squeue --all shows the agent's user none of the 3 jobs" \
	eval '[ -z "$(as_agent squeue --all -h -t R -o %A)" ] && [ "$(running)" = "$H,$S,$Q" ]'
ghost 999997
check "the agent warns that PrivateData hides jobs, and removes nothing" \
	until_ok grep -q 'PrivateData=jobs hides other users.* jobs from this user: the squeue check removes no job file' "$alog"
check "... and /api/v1/jobs says why" \
	until_ok eval '[ "$(sqcheck)" = '"'"'{"removes_files":false,"reason":"private_data"}'"'"' ]'
sleep 3
check "three checks on, all 3 jobs keep their files and stay in the view (and the ghost 999997 too)" \
	eval '[ -e "$jobs/$H" ] && [ -e "$jobs/$S" ] && [ -e "$jobs/$Q" ] && [ "$(ours)" = "$H,$S,$Q,999997" ]'
check "the sandboxed agent stops cleanly" stopped_clean "$agent"
rm -f "${jobs:?}/999997"
slurm_stop
finish
