#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Many agents, many fabrics (docs/operations.md): two ibwatchd on one
# simulated fabric (A, attached at node0001 and node0002, the SM on
# node0008) and one on a second (B, the same cabling with other GUIDs,
# its SM on node0007), a real Prometheus scraping all three every 3 s
# with the shipped rules (rate() over 15 s, not 5 min, to fit the
# suite's time) and writing to a real VictoriaMetrics, as
# deploy/prometheus/prometheus.yml and docs/operations.md set them up:
# metrics-fabric-label all, and the pair's infiniband_* series written
# to the store as one series per port (the instance replaced by the
# fabric, the store keeping one sample per scrape interval).
#
# While 4e9 B/s is driven on spine01 port 1 of A, the agent that leads
# (the first started) is killed with SIGKILL, started again, and 30 s
# later the other killed. In the store:
# - every series of the agents carries its fabric's identity, the
#   agents' own (/api/v1/status), A's two the same and B's another;
# - the pair's per-port answer, the shipped rule's
#   fabric:infiniband_switch_port_transmit_data_bytes:rate5m, is one
#   series for the port, with a sample every scrape through both kills,
#   each within 5% of the driven rate;
# - the pair's merged counter never goes back (resets() 0), and its
#   rate() over a minute is within 5% too;
# - infiniband_exporter's recording rules and the Grafana dashboards
#   (ours, and the exporter's where ../shared/peers has them) run
#   against the store without an error, the exporter's rate for the port
#   within 5%.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
. "$here/lib/rates.sh"
. "$here/lib/store.sh"
: "${IBWATCHD:?}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	exec "$here/lib/with-fabric.sh" fabrics \
		"$here/fixtures/side-by-side.net" --sm node0008 -- "$0" "$@"
fi
dirB=${IBW_TEST_WORK:-$PWD/..}/fabrics-b simA=$IBW_SIM_DIR
trap 'stop_started; "$IBW_SIMFABRIC" stop "$dirB" >/dev/null 2>&1' EXIT
"$IBW_SIMFABRIC" stop "$dirB" >/dev/null 2>&1
rm -rf "$dirB"
# Two fabrics never share a GUID (EUI-64s are unique): B's nodes get
# theirs from another base, as an ibnetdiscover file names them.
{
	echo 'switchguid=0x0000000000a00000'
	echo 'caguid=0x0000000000b00000'
	cat "$here/fixtures/side-by-side.net"
} >fabric-b.net
"$IBW_SIMFABRIC" start "$dirB" "$PWD/fabric-b.net" --sm node0007 >/dev/null ||
	{ echo "not ok - the second fabric does not start"; exit 1; }

scrape=3 win=15s
rate=4e9
agent_args=(--no-snmp --discovery-interval 5 --counter-interval 2
	--metrics-fabric-label all)

# on_b CMD...: CMD on fabric B (its simulator's variables, in its
# scratch directory), in this shell: start_agent there sets P, agent and
# pids as here.
on_b() {
	local back=$PWD rc
	. "$dirB/env"
	cd "$dirB/work" || return 1
	"$@"
	rc=$?
	cd "$back" || return 1
	. "$simA/env"
	return $rc
}
# kill_agent PID: SIGKILL, as a crash or a host lost would end it.
kill_agent() {
	local p keep=()
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
	pids=("${keep[@]}")
}
fid() { curl -s -m 5 "http://127.0.0.1:$1/api/v1/status" | jq -r '.fabric.id // empty'; }

rates_drive 600 "spine01[1]=$rate"
start_agent node0001 --state-file "$PWD/a1.state" "${agent_args[@]}" ||
	{ echo "not ok - agent A1 does not start"; exit 1; }
a1=$agent A1=$P
start_agent node0002 --state-file "$PWD/a2.state" "${agent_args[@]}" ||
	{ echo "not ok - agent A2 does not start"; exit 1; }
a2=$agent A2=$P
on_b start_agent node0003 --state-file "$PWD/b1.state" "${agent_args[@]}" ||
	{ echo "not ok - agent B1 does not start"; exit 1; }
B1=$P

# The shipped rules, rate() over the test's window and increase() over 1 min.
sed -e "s/\[5m\]/[$win]/g" -e 's/\[15m\]/[1m]/g' \
	"$here/../deploy/prometheus/ibwatch.rules.yml" >rules.yml
check "promtool accepts the shipped rules" promtool check rules rules.yml
# docs/operations.md: the pair's infiniband_* series, one per port in
# the store: instance replaced by the fabric; the store keeps one sample
# per scrape interval of the two.
store_write_relabel="      - source_labels: [__name__, fabric]
        regex: 'infiniband_.+;(.+)'
        target_label: instance
        replacement: '\$1'"
vm_start vm -dedup.minScrapeInterval=${scrape}s || bad "VictoriaMetrics is not up"
store_prometheus prom ${scrape}s rules.yml -- "127.0.0.1:$A1" "127.0.0.1:$A2" "127.0.0.1:$B1" ||
	bad "Prometheus is not ready"
PU=http://127.0.0.1:$prom_port VU=http://127.0.0.1:$vm_port

# Each agent's identity: A's two the same, B's another.
for _ in $(seq 1 100); do
	idA1=$(fid "$A1") idA2=$(fid "$A2") idB=$(fid "$B1")
	[ -n "$idA1" ] && [ -n "$idA2" ] && [ -n "$idB" ] && break
	sleep 0.3
done
check "the pair agrees on fabric A's identity ($idA1), B has another ($idB)" \
	test -n "$idA1" -a "$idA1" = "$idA2" -a -n "$idB" -a "$idB" != "$idA1"
smA=$(at node0001 sminfo -t 300 2>/dev/null | sed -n 's/.*sm guid \(0x[0-9a-f]*\).*/\1/p')
check "... its SM port GUID is the one sminfo names ($smA)" \
	test -n "$smA" -a "${idA1#*/}" = "$(printf '0x%016x' "$smA")"

port='guid="0x0000000000200000",port="1"'
answer="fabric:infiniband_switch_port_transmit_data_bytes:rate5m{$port,fabric=\"$idA1\"}"
store_wait "$VU" "$answer" 120 || bad "no per-port answer in the store after 2 min"
# Warm: each agent learns when its scraper comes from three scrapes, and
# the rate() of a series that starts in its window reads low. The run
# starts at the fourth answer in a row within 2% (90 s at most).
steady=0
for _ in $(seq 1 30); do
	v=$(curl -s -m 5 "$VU/api/v1/query" --data-urlencode "query=$answer" | jq -r '.data.result[0].value[1] // 0')
	if awk -v v="$v" -v r="$rate" 'BEGIN { exit !(v / r > 0.98 && v / r < 1.02) }'; then
		steady=$((steady + 1))
	else
		steady=0
	fi
	[ "$steady" -ge 4 ] && break
	sleep "$scrape"
done
[ "$steady" -ge 4 ] || bad "the per-port answer never held within 2% for four scrapes"
t0=$(date +%s)
echo "# $(date -u +%T) steady"
sleep 10
# leading: which agent the rules take the fabric's answers from
leading() { curl -s -m 5 "$PU/api/v1/query" --data-urlencode "query=ibwatch:agent_leading{fabric=\"$idA1\"}" | jq -r '[.data.result[].metric.instance] | join(" ")'; }
l=$(leading)
check "A1, started first, leads fabric A ($l)" test "$l" = "127.0.0.1:$A1"
tk1=$(date +%s)
kill_agent "$a1"
echo "# $(date -u +%T) killed A1 (the leader)"
sleep 20
agent_port=$A1 start_agent node0001 --state-file "$PWD/a1.state" "${agent_args[@]}" ||
	bad "agent A1 does not start again"
a1=$agent
echo "# $(date -u +%T) A1 started again"
# Long enough for A1 to learn its scraper (three scrapes) and then fill
# a 15 s window with readings in step with it: an agent that takes over
# sooner answers with a reading or two up to a sweep off (4% measured in
# a 30 s window 40 s after its start; the shipped 5 min window makes
# that a tenth of it).
sleep 30
l=$(leading)
check "A2 took over, and leads still with A1 back ($l)" test "$l" = "127.0.0.1:$A2"
tk2=$(date +%s)
kill_agent "$a2"
echo "# $(date -u +%T) killed A2 (the leader now)"
sleep 20
l=$(leading)
check "A1 took over from A2 ($l)" test "$l" = "127.0.0.1:$A1"
t1=$(date +%s)
vm_flush

# 1. Every series of the agents, in the store, carries its fabric.
curl -s -m 60 "$VU/api/v1/series" --data-urlencode 'match[]={job="ibwatch"}' \
	--data-urlencode "start=$((t0 - 120))" --data-urlencode "end=$t1" >series.json
python3 - "$idA1" "$idB" "127.0.0.1:$B1" >labels.txt <<'PY'
import json, sys
ida, idb, binst = sys.argv[1:4]
own = ("up", "scrape_")  # Prometheus' own series of each target
n = bad = 0
for s in json.load(open("series.json"))["data"]:
    name = s["__name__"]
    if name.startswith(own):
        continue
    n += 1
    inst = s.get("instance", "")
    want = idb if inst == binst else ida if inst.startswith("127.") else None
    f = s.get("fabric")
    if f is None or (want and f != want) or f not in (ida, idb):
        bad += 1
        if bad <= 5:
            print("# wrong or no fabric:", s)
print(f"{n} {bad}")
PY
read -r nser nbad < <(tail -n 1 labels.txt)
grep '^#' labels.txt
check "every one of the agents' $nser series in the store carries its fabric's identity" \
	test "${nser:-0}" -gt 3000 -a "${nbad:-1}" = 0

# 2. The pair's answer for the port: one series, a sample every scrape
# through both kills, each within 5% of the rate.
curl -s -m 30 "$VU/api/v1/export" --data-urlencode "match[]=$answer" \
	--data-urlencode "start=$t0" --data-urlencode "end=$t1" >answer.jsonl
python3 - "$rate" "$scrape" "$t0" "$t1" <<'PY' >answer.txt
import json, sys
rate, step, t0, t1 = map(float, sys.argv[1:5])
rows = [json.loads(l) for l in open("answer.jsonl") if l.strip()]
print(f"# {len(rows)} series")
if len(rows) != 1:
    sys.exit(1)
t = [x / 1000 for x in rows[0]["timestamps"]]
v = rows[0]["values"]
gap = max(b - a for a, b in zip(t, t[1:]))
lo, hi = min(v) / rate, max(v) / rate
print(f"# {len(v)} samples, {t[0] - t0:.1f} s after the start to {t1 - t[-1]:.1f} s before the end,"
      f" largest gap {gap:.1f} s, {lo:.4f} to {hi:.4f} of the rate")
# the last scrape's sample may still be on its way (remote write)
sys.exit(not (t[0] - t0 <= 1.5 * step and t1 - t[-1] <= 2.5 * step and gap <= 1.5 * step
              and 0.95 <= lo and hi <= 1.05))
PY
rc=$?
cat answer.txt
check "the pair's per-port answer is one series through both kills: a sample every scrape, each within 5%" \
	test "$rc" = 0

# 3. The pair's merged counter in the store: never back, rate() within 5%.
merged="infiniband_switch_port_transmit_data_bytes_total{$port,instance=\"$idA1\"}"
r=$(curl -s -m 30 "$VU/api/v1/query" --data-urlencode "query=resets($merged[$((t1 - t0))s])" \
	--data-urlencode "time=$t1" | jq -r '[.data.result[].value[1]] | join(" ")')
check "the pair's counter, one series in the store, never goes back (resets: $r)" test "$r" = 0
# Over a minute, as the store's readers (the exporter's rules: 5 min)
# take rates: the store keeps whichever agent's sample is the later in
# each interval, so over a window as short as the test's 15 s a step
# after a restart can carry the restarted agent's reading from before
# it was in step with its scraper, up to a sweep (2 s) off: 10% over
# 15 s, 3% over a minute.
curl -s -m 30 "$VU/api/v1/query_range" --data-urlencode "query=rate($merged[1m])" \
	--data-urlencode "start=$((t0 + 50))" --data-urlencode "end=$t1" --data-urlencode "step=$scrape" |
	jq -r '.data.result[]?.values[][1]' >merged.txt
read -r n lo hi < <(awk -v r="$rate" 'NR == 1 { lo = hi = $1 / r } { x = $1 / r; if (x < lo) lo = x; if (x > hi) hi = x } END { printf "%d %.4f %.4f\n", NR, lo, hi }' merged.txt)
check "... its rate() over a minute within 5% at every step through the restart and the second kill ($n steps, $lo to $hi)" \
	awk -v n="$n" -v lo="$lo" -v hi="$hi" 'BEGIN { exit !(n >= 8 && lo >= 0.95 && hi <= 1.05) }'

# 4. infiniband_exporter's recording rules and the dashboards, against
# the store.
rates_rules exporter.rules.yml 5m
dashes=("$here/../deploy/grafana/ibwatch-dashboard.json")
for f in "$here"/../../shared/peers/infiniband_exporter/grafana-ib-fabric-*.json; do
	[ -r "$f" ] && dashes+=("$f")
done
python3 "$here/lib/dash_queries.py" --time "$t1" "$VU" exporter.rules.yml rules.yml "${dashes[@]}" >dash.txt 2>&1
rc=$?
grep '^error' dash.txt | sed 's/^/# /' | head -20
check "the exporter's recording rules, ours and ${#dashes[@]} dashboards run against the store ($(grep -c '^ok' dash.txt) answered, $(grep -c '^empty' dash.txt) empty)" \
	test "$rc" = 0
# ... and in Prometheus, where the pair's series are two a port: the
# exporter's rules and dashboards join on guid and port alone, so they
# hold only on the store's merged series (docs/operations.md); ours
# hold here too.
python3 "$here/lib/dash_queries.py" --time "$t1" "$PU" rules.yml "${dashes[0]}" >dashp.txt 2>&1
rc=$?
grep '^error' dashp.txt | sed 's/^/# /' | head -20
check "... our rules and dashboard in Prometheus too, beside the pair's two series a port ($(grep -c '^ok' dashp.txt) answered)" \
	test "$rc" = 0
x=$(curl -s -m 30 "$VU/api/v1/query" --data-urlencode "time=$t1" --data-urlencode \
	"query=rate($merged[1m]) * on(guid,port) group_left(switch, host, uplink, uplink_port) infiniband_switch_uplink_info" |
	jq -r '.data.result | length as $n | "\($n) \(.[0].value[1] // 0)"')
check "... the exporter's rate for the port, on the store's one series: one answer within 5% ($x)" \
	awk -v n="${x% *}" -v v="${x#* }" -v r="$rate" 'BEGIN { exit !(n == 1 && v / r >= 0.95 && v / r <= 1.05) }'

finish
