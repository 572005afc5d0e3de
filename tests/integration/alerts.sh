#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Alerts that reach a person (docs/operations.md): the shipped rules
# (deploy/prometheus/ibwatch.rules.yml, their `for:` cut to 5 s to fit
# the suite's time) in a real Prometheus scraping a pair of ibwatchd on
# the side-by-side fabric, sending to a real Alertmanager with the
# shipped alertmanager.yml (its waits cut to 1 s). A job runs on
# node0001 and node0005. Then node0005's cable is driven to failing
# (LinkDownedCounter 20: more than 10 link downs in the hour), node0007
# is unlinked (a host down) and spine02 (a switch down, its two
# cables with it). Alertmanager's API must then hold, active and not
# inhibited, one IBWatchLinkFailing (the cable's ends and fabric in its
# labels, its ends' names and the job in its text), one
# IBWatchEndportDown (node0007) and one IBWatchSwitchDown (spine02),
# each once for the pair, and beside them only the fixture's degraded
# cable (node0003's, checked before the faults); the down cables of
# node0007 and spine02 (and node0007's losses) as alerts inhibited by
# those; and the groups per cable and per fabric.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
. "$here/lib/store.sh"
: "${IBWATCHD:?}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	exec "$here/lib/with-fabric.sh" alerts \
		"$here/fixtures/side-by-side.net" --sm node0008 -- "$0" "$@"
fi
trap stop_started EXIT

jobs=$PWD/jobs
mkdir -p "$jobs"
printf 'job_id=4711\nuser=alice\npartition=debug\nnodes=node[0001,0005]\n' >"$jobs/.tmp" &&
	mv "$jobs/.tmp" "$jobs/4711"
args=(--no-snmp --no-state-file --discovery-interval 2 --counter-interval 2
	--ping-interval-ms 1000 --jobs-dir "$jobs" --jobs-check-interval 2 --lft-interval 2)
start_agent node0001 "${args[@]}" || { echo "not ok - agent 1 does not start"; exit 1; }
U1=http://127.0.0.1:$P T1=127.0.0.1:$P
start_agent node0002 "${args[@]}" || { echo "not ok - agent 2 does not start"; exit 1; }
T2=127.0.0.1:$P

sed -E 's/^( +for: ).*/\15s/' "$here/../deploy/prometheus/ibwatch.rules.yml" >rules.yml
sed -E 's/^( +group_(wait|interval): ).*/\11s/' "$here/../deploy/prometheus/alertmanager.yml" >am.yml
check "promtool and amtool accept the shipped files" \
	bash -c 'promtool check rules rules.yml >/dev/null && amtool check-config am.yml >/dev/null'
am_start am am.yml || bad "Alertmanager is not up"
store_prometheus prom 2s rules.yml -- "$T1" "$T2" || bad "Prometheus is not ready"
PU=http://127.0.0.1:$prom_port AU=http://127.0.0.1:$am_port
store_wait "$PU" 'count(ibwatch:agent_answering) == 2' 60 || bad "the two agents never both answered"
# the job's routes are known (the census read the tables)
for _ in $(seq 1 100); do
	curl -s -m 5 "$U1/api/v1/links" | jq -e '[.links[] | select(.jobs == ["4711"])] | length > 0' >/dev/null && break
	sleep 0.3
done
fab=$(curl -s -m 5 "$U1/api/v1/status" | jq -r .fabric.id)
# The fixture's one degraded cable (node0003's, 1 lane of 4) pages as
# it should, and is all there is.
for _ in $(seq 1 60); do
	curl -s -m 5 "$AU/api/v2/alerts" >before.json
	[ "$(jq length before.json)" -gt 0 ] && break
	sleep 1
done
sleep 5 # (two more evaluations and sends)
curl -s -m 5 "$AU/api/v2/alerts" >before.json
check "before the faults, one alert: node0003's degraded cable ($(jq -r '[.[].annotations.summary] | join("; ")' before.json))" \
	jq -e 'length == 1 and .[0].labels.alertname == "IBWatchLinkDegraded" and (.[0].annotations.summary | test("node0003 HCA-1 port 1"))' before.json

# the nodes' GUIDs, as the agent has them
curl -s -m 5 "$U1/api/v1/nodes" >nodes.json
g() { jq -r --arg n "$1" '.[] | select(.name == $n or .description == $n) | .guid' nodes.json | head -n1; }
g5=$(g "node0005 HCA-1") g7=$(g "node0007 HCA-1") gs2=$(g spine02) gl2=$(g leaf02)
p7=$(curl -s -m 5 "$U1/api/v1/endports" | jq -r '.[] | select(.name == "node0007 HCA-1") | .port_guid')
echo "# node0005 $g5, node0007 $g7 (port $p7), spine02 $gs2, leaf02 $gl2"

sim 'PerformanceSet "node0005"[1] PortCounters.LinkDownedCounter=20'
sim 'Unlink "node0007"[1]'
sim 'Unlink "spine02"'
t0=$(date +%s)

# Until the three are active and the five cables' alerts are there.
alerts() { curl -s -m 5 "$AU/api/v2/alerts"; }
for _ in $(seq 1 120); do
	alerts >alerts.json
	jq -e --arg s "$gs2" --arg h "$g7" '
		([.[] | select(.status.state == "active") | .labels.alertname] | sort) as $a
		| ($a | index("IBWatchLinkFailing")) and ($a | index("IBWatchEndportDown"))
		  and ($a | index("IBWatchSwitchDown"))
		  and ([.[] | select(.labels.alertname == "IBWatchLinkDown")] | length) >= 3
		  and ([.[] | select(.labels.alertname == "IBWatchEndportLossy")] | length) >= 1' alerts.json >/dev/null && break
	sleep 1
done
echo "# after $(($(date +%s) - t0)) s:"
jq -r '.[] | "#   \(.status.state) \(.labels.alertname) \(.labels.cable // .labels.name // "") \(.status.inhibitedBy | length)"' alerts.json | sort

check "active: the failing cable, the host down, the switch down and the degraded cable, nothing else" \
	jq -e '[.[] | select(.status.state == "active") | .labels.alertname] | sort ==
		["IBWatchEndportDown", "IBWatchLinkDegraded", "IBWatchLinkFailing", "IBWatchSwitchDown"]' alerts.json
active() { jq -c --arg n "$1" '[.[] | select(.labels.alertname == $n and .status.state == "active")]' alerts.json; }
lf=$(active IBWatchLinkFailing)
check "one IBWatchLinkFailing, node0005's cable, once for the pair" \
	jq -e --arg a "$gl2" --arg b "$g5" --arg f "$fab" 'length == 1 and (.[0].labels |
		.guid == ([$a, $b] | min) and .remote_guid == ([$a, $b] | max) and .fabric == $f
		and .end == .guid and .remote_end == .remote_guid and (.cable | length) > 0)' <<<"$lf"
check "... its text names both ends and the job it carries ($(jq -r '.[0].annotations | "\(.summary); \(.description)"' <<<"$lf"))" \
	jq -e '.[0].annotations | (.summary | test("leaf02 port 1 - node0005 HCA-1 port 1|node0005 HCA-1 port 1 - leaf02 port 1"))
		and (.summary | endswith("is failing")) and (.description | test("link_downed")) and (.description | test("4711"))' <<<"$lf"
ed=$(active IBWatchEndportDown)
check "one IBWatchEndportDown, node0007's" \
	jq -e --arg p "$p7" --arg g "$g7" --arg f "$fab" 'length == 1 and (.[0].labels |
		.guid == $p and .node_guid == $g and .end == $g and .fabric == $f)' <<<"$ed"
sd=$(active IBWatchSwitchDown)
check "one IBWatchSwitchDown, spine02's" \
	jq -e --arg g "$gs2" --arg f "$fab" 'length == 1 and (.[0].labels | .guid == $g and .end == $g and .fabric == $f and .name == "spine02")' <<<"$sd"
check "the down switch's two cables: alerts there, inhibited by it, none active" \
	jq -e --arg g "$gs2" '[.[] | select(.labels.alertname | startswith("IBWatchLink")) | select(.labels.end == $g or .labels.remote_end == $g)]
		| length == 2 and all(.status.state == "suppressed" and (.status.inhibitedBy | length) > 0)' alerts.json
check "the down host's cable: inhibited by its endport's alert" \
	jq -e --arg g "$g7" '[.[] | select(.labels.alertname | startswith("IBWatchLink")) | select(.labels.end == $g or .labels.remote_end == $g)]
		| length == 1 and all(.status.state == "suppressed")' alerts.json
check "nothing active names a down node's cable" \
	jq -e --arg s "$gs2" --arg h "$g7" '[.[] | select(.status.state == "active" and (.labels.alertname | startswith("IBWatchLink"))
		and (.labels.end == $s or .labels.remote_end == $s or .labels.end == $h or .labels.remote_end == $h))] | length == 0' alerts.json
check "... and node0007's losses held back by its endport's alert" \
	jq -e --arg p "$p7" '[.[] | select(.labels.alertname == "IBWatchEndportLossy" and .labels.guid == $p)]
		| length == 1 and all(.status.state == "suppressed")' alerts.json
check "each once for the pair: no alert but an agent's own names an instance" \
	jq -e '[.[] | select((.labels.alertname | test("^IBWatch(Down|Stale)$") | not) and .labels.instance)] | length == 0' alerts.json
curl -s -m 5 "$AU/api/v2/alerts/groups" >groups.json
check "groups per cable and per fabric: the failing cable's own group, the nodes' in the fabric's" \
	jq -e --arg f "$fab" '
		([.[] | select(any(.alerts[]; .labels.alertname == "IBWatchLinkFailing"))] | length == 1 and
		  (.[0].labels | .fabric == $f and (.cable | length) > 0)) and
		([.[] | select(any(.alerts[]; .labels.alertname == "IBWatchSwitchDown"))][0] |
		  .labels == {fabric: $f} and any(.alerts[]; .labels.alertname == "IBWatchEndportDown"))' groups.json

finish
