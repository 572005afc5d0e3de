#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The AgentX subagent with a real snmpd master agent on a private socket
# and a loopback port, on a 32-host fat tree: snmpwalk of the whole
# subtree against the JSON API and perfquery, a port's row found by its
# GUID (the lookup's fixed-length GUID index), notifications received by a real snmptrapd (endport down/up,
# port state, error threshold), snmpd killed and restarted while HTTP
# keeps answering and a real Prometheus scrapes without a failure, Nagios' check_snmp on an endport's state, and the
# notification rate limit under a flapping link.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}"

on_fattree snmp 32

trap stop_started EXIT

ROOT=.1.3.6.1.4.1.32473
# snmptrapd logs a notification per line, varbinds separated by tabs.
has_trap() { grep -q "= OID: $ROOT\.0\.$1	" traps.log; }
MIBARGS=(-M "$here/../mib:$here/../mib/ietf" -m IBWATCH-MIB)
# The tools load no MIB unless told (Debian has none of the IETF ones).
export MIBS="" MIBDIRS=""
export SNMP_PERSISTENT_DIR=$PWD/snmp-persist
export SNMPCONFPATH=$PWD/snmp-conf # no /etc/snmp for the tools
mkdir -p "$SNMP_PERSISTENT_DIR" "$SNMPCONFPATH"

start_snmptrapd
trapd_up() { ss -Hlun "sport = :$trap_port" | grep -q .; }
check "snmptrapd listens on 127.0.0.1:$trap_port" trapd_up

# snmpd: master agent on ./agentx.sock, SNMP on a loopback port.
SOCK=$PWD/agentx.sock
snmp_port=$(free_port)
cat >snmpd.conf <<EOF
master agentx
agentXSocket $SOCK
agentXTimeout 5
rocommunity public 127.0.0.1
trap2sink 127.0.0.1:$trap_port public
EOF
start_snmpd || bad "snmpd does not start"
A=(-v2c -c public -t 2 -r 1 "127.0.0.1:$snmp_port")

# An agent on node0001, a subagent of our snmpd, with the other
# arguments; HTTP port in $P.
snmp_agent() { start_agent node0001 --no-state-file --agentx "$SOCK" "$@"; }
U() { echo "http://127.0.0.1:$P$1"; }

# 1. The whole subtree. The walk, /api/v1/ports, /api/v1/endports and
# /api/v1/status must come from one snapshot: ibwAgentSnapshotSeq before
# and after the walk and the JSON's snapshot_seq all equal. A spread
# sweep publishes what it read every second, so the sweeps here run at
# full speed, each published once at its end, every 30 s, and the pings'
# findings every 15 s; a walk takes one to three seconds on a loaded
# machine, so retry.
sim 'PerformanceSet "node0007"[1] PortCounters.SymbolErrorCounter=77'
sim 'PerformanceSet "node0007"[1] PortCounters.PortRcvErrors=5'
snmp_agent --discovery-interval 3600 --counter-interval 30 --counter-full-speed \
	--ping-interval-ms 15000 --up-after 1 --ping-method pma ||
	{ echo "not ok - the agent does not start"; exit 1; }
for _ in $(seq 1 150); do
	curl -s -m 5 "$(U /api/v1/status)" >status.json
	jq -e '.sweeps.counter_sweeps >= 1 and .endports.up == 32' status.json >/dev/null && break
	sleep 0.2
done
for _ in $(seq 1 100); do
	snmpget "${A[@]}" -Oqv "$ROOT.1.1.1.0" 2>/dev/null | grep -q . && break
	sleep 0.2
done
seqs=""
for try in 1 2 3 4 5 6 7 8; do
	s0=$(snmpget "${A[@]}" -Oqv "$ROOT.1.1.9.0")
	curl -s -m 20 "$(U /api/v1/status)" >status.json
	curl -s -m 20 "$(U /api/v1/ports)" >ports.json
	curl -s -m 20 "$(U /api/v1/endports)" >eps.json
	snmpwalk "${A[@]}" -On -Oe -Oq -Ot "$ROOT" >walk.txt 2>walk.err
	s1=$(snmpget "${A[@]}" -Oqv "$ROOT.1.1.9.0")
	seqs="$seqs $s0/$(jq .snapshot_seq status.json)/$s1"
	[ "$s0" = "$s1" ] && [ "$s0" = "$(jq .snapshot_seq status.json)" ] && break
done
echo "# snapshot seqs (snmp before/json/snmp after):$seqs"
check "one snapshot for the walk and the JSON (try $try)" \
	test "$s0" = "$s1" -a "$s0" = "$(jq .snapshot_seq status.json)"
echo "# walked $(wc -l <walk.txt) objects"
# sysORTable (SNMPv2-MIB): the master lists IBWATCH-MIB with its
# description; sysORID is .1.3.6.1.2.1.1.9.1.2, sysORDescr ...1.3.
sysor() { # the sysORDescr of the row whose sysORID is ROOT, if any
	local idx
	idx=$(snmpwalk "${A[@]}" -On -Oq .1.3.6.1.2.1.1.9.1.2 2>/dev/null |
		awk -v r="$ROOT" '$2 == r { n = split($1, a, "."); print a[n] }')
	[ -n "$idx" ] && snmpget "${A[@]}" -Oqv ".1.3.6.1.2.1.1.9.1.3.$idx" 2>/dev/null
}
d=$(sysor)
check "sysORTable lists IBWATCH-MIB ($ROOT: $d)" grep -q 'IBWATCH-MIB' <<<"$d"
check "snmpwalk ends cleanly at the end of the subtree" \
	test -s walk.txt -a ! -s walk.err
check "... and the walk's snapshot and counter sweep are the JSON's" \
	test "$(awk -v o="$ROOT.1.1.16.0" '$1 == o { print $2 }' walk.txt)" = "$(jq .sweeps.counter_sweeps status.json)" \
	-a "$(awk -v o="$ROOT.1.1.9.0" '$1 == o { print $2 }' walk.txt)" = "$(jq .snapshot_seq status.json)"
check "... the fabric totals equal /api/v1/status" python3 - "$ROOT" <<'PY'
import json, sys
root = sys.argv[1]
w = dict(l.split(" ", 1) for l in open("walk.txt").read().splitlines() if " " in l)
st = json.load(open("status.json"))
f = st["fabric"]
want = {18: f["nodes"], 19: f["switches"], 20: f["cas"], 21: f["ports"], 22: f["links"],
        23: st["endports"]["up"], 25: st["endports"]["down"]}
bad = [(k, w.get(f"{root}.1.1.{k}.0"), v) for k, v in want.items() if w.get(f"{root}.1.1.{k}.0") != str(v)]
print("# mismatches:", bad) if bad else None
sys.exit(1 if bad else 0)
PY
# Every port: the walk's rows are the JSON's ports, and every counter the
# JSON has is in the walk with the same total (MIB column <- JSON key,
# read from the MIB's own DESCRIPTIONs).
check "every port and counter of the walk equals /api/v1/ports" python3 - "$ROOT" "$here/../mib/IBWATCH-MIB.txt" <<'PY'
import json, re, sys
root, mibfile = sys.argv[1], sys.argv[2]
mib = open(mibfile).read()
cols = {}
for name, col_desc, num in re.findall(r'(ibwPort\w+) OBJECT-TYPE(.*?)::= \{ ibwPortEntry (\d+) \}', mib, re.S):
    m = re.search(r'counters\.totals\.(\w+)', col_desc)
    if m:
        cols[int(num)] = m.group(1)
assert len(cols) == 32, cols
rows = {}
pre = root + ".1.3.1."
for line in open("walk.txt"):
    oid, _, val = line.rstrip("\n").partition(" ")
    if oid.startswith(pre):
        sub = [int(x) for x in oid[len(pre):].split(".")]
        assert len(sub) == 2, oid  # column, row
        rows.setdefault(sub[1], {})[sub[0]] = val
# the rows by their GUID and port columns
walk = {(r[1].strip('"'), int(r[2])): r for r in rows.values()}
assert len(walk) == len(rows)
ports = json.load(open("ports.json"))
bad = 0
seen = set()
for p in ports:
    key = (p["node_guid"], p["port"])
    seen.add(key)
    row = walk.get(key)
    if row is None:
        print("# missing in the walk:", key); bad += 1; continue
    if p.get("lid") is not None and row.get(4) != str(p["lid"]):
        print("# lid differs", key, row.get(4), p["lid"]); bad += 1
    states = {"down": "1", "init": "2", "armed": "3", "active": "4"}
    if p.get("state") in states and row.get(6) != states[p["state"]]:
        print("# state differs", key); bad += 1
    tot = (p.get("counters") or {}).get("totals", {})
    for col, k in cols.items():
        if k in tot and row.get(col) != str(tot[k]):
            print("# counter", k, key, row.get(col), tot[k]); bad += 1
        if k not in tot and col in row:
            print("# counter in the walk only", k, key); bad += 1
extra = set(walk) - seen
if extra:
    print("# in the walk only:", sorted(extra)[:5]); bad += 1
ctrs = sum(len((p.get("counters") or {}).get("totals", {})) for p in ports)
print("# %d ports, %d counters compared" % (len(ports), ctrs))
sys.exit(1 if bad or len(ports) < 100 or ctrs < 100 * 18 else 0)
PY
check "every endport of the walk equals /api/v1/endports" python3 - "$ROOT" <<'PY'
import json, sys
root = sys.argv[1]
pre = root + ".1.4.1."
rows = {}
for line in open("walk.txt"):
    oid, _, val = line.rstrip("\n").partition(" ")
    if oid.startswith(pre):
        sub = [int(x) for x in oid[len(pre):].split(".")]
        rows.setdefault(sub[1], {})[sub[0]] = val
walk = {(r[1].strip('"'), int(r[2])): r for r in rows.values()}
eps = json.load(open("eps.json"))
states = {"up": "1", "degraded": "2", "down": "3", "unknown": "4"}
bad = 0
for e in eps:
    row = walk.get((e["node_guid"], e["port"]), {})
    if row.get(4) != str(e["lid"]) or row.get(7) != states[e["state"]] or \
       row.get(5) != '"%s"' % e["name"] or row.get(3) != '"%s"' % e["port_guid"]:
        print("# endport differs", e["name"], row); bad += 1
print("# %d endports compared" % len(eps))
sys.exit(1 if bad or len(eps) != 32 or len(walk) != 32 else 0)
PY

# ... and perfquery for the same port.
n7=$(jq -r '.[] | select(.node_name == "node0007 HCA-1") | .node_guid' ports.json)
l7=$(jq -r '.[] | select(.node_name == "node0007 HCA-1") | .lid' ports.json)
idx7=$(port_row "$n7" 1)
pq=$(at node0002 perfquery "$l7" 1)
pqv() { sed -n "s/^$1:\.*//p" <<<"$pq"; }
sv() { snmpget "${A[@]}" -Oqv "$ROOT.1.3.1.$1.$idx7"; }
check "ibwPortSymbolErrors equals perfquery ($(pqv SymbolErrorCounter))" \
	test "$(sv 20)" = "$(pqv SymbolErrorCounter)" -a "$(pqv SymbolErrorCounter)" = 77
check "ibwPortRcvErrors equals perfquery ($(pqv PortRcvErrors))" test "$(sv 23)" = "$(pqv PortRcvErrors)"
# The walk and ports.json are one snapshot: the octets there are exactly
# 4 x the words read (no reset since the agent started, so the total is
# the first read scaled, plus the later increments scaled), and
# perfquery, read later, has at least those words.
x=$(awk -v o="$ROOT.1.3.1.34.$idx7" '$1 == o { print $2 }' walk.txt)
xw=$(jq -r '.[] | select(.node_name == "node0007 HCA-1" and .port == 1) | .counters.raw.PortXmitData' ports.json)
xq=$(pqv PortXmitData)
check "ibwPortXmitDataBytes ($x) is in octets: exactly 4 x the words of the same snapshot ($xw), which perfquery ($xq, read later) has reached" \
	test -n "$x" -a -n "$xw" -a -n "$xq" -a "${xw:-0}" -gt 0 -a "$x" = "$((4 * ${xw:-0}))" -a "${xq:-0}" -ge "${xw:-0}"
check "ibwPortLid equals the JSON's LID ($l7)" test "$(sv 4)" = "$l7"

# 2. The row found by the GUID: the lookup table's fixed-length GUID
# index (18 characters, no length) and the port's row.
out=$(snmpget "${A[@]}" -On "$ROOT.1.3.1.6.$idx7" 2>&1)
check "snmpget of node0007's port row $idx7 (ibwPortLookupIndex): ibwPortState = active ($out)" grep -q ' = INTEGER: 4$' <<<"$out"
codes=$(printf '%s' "$n7" | od -An -tu1 | xargs | tr ' ' '.')
out=$(snmpget "${A[@]}" -On "$ROOT.1.9.1.3.18.$codes.1" 2>&1)
check "the lookup's GUID with a length prefix is no such instance ($out)" grep -q 'No Such Instance' <<<"$out"
out=$(snmpget "${A[@]}" "${MIBARGS[@]}" "IBWATCH-MIB::ibwPortLookupIndex.'$n7'.1" "IBWATCH-MIB::ibwPortNodeName.$idx7" 2>&1)
want="IBWATCH-MIB::ibwPortLookupIndex.'$n7'.1 = Gauge32: $idx7"
check "the MIB names them: ibwPortLookupIndex.'$n7'.1, ibwPortNodeName ($out)" \
	bash -c 'grep -qxF "$2" <<<"$1" && grep -q "node0007 HCA-1" <<<"$1"' _ "$out" "$want"
check "the first agent stops cleanly (SIGTERM, exit 0)" stopped_clean "$agent"

# 3-5: an agent that pings and sweeps fast.
snmp_agent --discovery-interval 1 --counter-interval 1 --ping-interval-ms 300 \
	--down-after 2 --up-after 2 --ping-method pma --agentx-ping-interval 2 \
	--threshold SymbolErrorCounter=100 --watch-path "node0020 HCA-1" --trace-interval 1 ||
	{ echo "not ok - the second agent does not start"; finish; exit 1; }
for _ in $(seq 1 100); do
	curl -s -m 5 "$(U /api/v1/endports)" | jqe 'length == 32 and all(.state == "up")' && break
	sleep 0.2
done
for _ in $(seq 1 100); do
	snmpget "${A[@]}" -Oqv "$ROOT.1.4.1.7.$idx7" 2>/dev/null | grep -qx 1 && break
	sleep 0.2
done
chk=/usr/lib/nagios/plugins/check_snmp
epoid=$ROOT.1.4.1.7.$idx7
out=$("$chk" -H 127.0.0.1 -p "$snmp_port" -P 2c -C public -o "$epoid" -w 1 -c 2); rc=$?
check "check_snmp on the endport's state: OK while it answers ($out)" [ $rc = 0 ]

: >traps.log.mark
sim 'Unlink "node0007"[1]'
for _ in $(seq 1 100); do
	has_trap 1 && break
	sleep 0.1
done
check "snmptrapd gets ibwEndportDown after Unlink" has_trap 1
check "... with the endport's state down(3) and its previous state up(1)" \
	awk -v o="OID: $ROOT.0.1	" -v s="$ROOT.1.4.1.7.$idx7 = INTEGER: 3" -v p="$ROOT.1.7.5.0 = INTEGER: 1" \
	'index($0, o) && index($0, s) && index($0, p) { a = 1 } END { exit !a }' traps.log
check "... its name, LID and port GUID" \
	awk -v n="$ROOT.1.4.1.5.$idx7 = STRING: \"node0007 HCA-1\"" -v l="$ROOT.1.4.1.4.$idx7 = Gauge32: $l7" -v g="$ROOT.1.4.1.3.$idx7 = " \
	'index($0, n) { a = 1 } index($0, l) { b = 1 } index($0, g) { c = 1 } END { exit !(a && b && c) }' traps.log
for _ in $(seq 1 50); do
	"$chk" -H 127.0.0.1 -p "$snmp_port" -P 2c -C public -o "$epoid" -w 1 -c 2 >/dev/null; rc=$?
	[ $rc = 2 ] && break
	sleep 0.2
done
out=$("$chk" -H 127.0.0.1 -p "$snmp_port" -P 2c -C public -o "$epoid" -w 1 -c 2)
check "check_snmp: CRITICAL after Unlink ($out)" [ $rc = 2 ]
for _ in $(seq 1 50); do
	has_trap 3 && break
	sleep 0.1
done
check "ibwPortStateChange for the switch port at the other end: down(1), was active(4)" \
	awk -v o="OID: $ROOT.0.3	" -v s="$ROOT.1.3.1.6." -v p="$ROOT.1.7.4.0 = INTEGER: 4" \
	'index($0, o) && index($0, s) && index($0, p) && /\.1\.3\.1\.6\.[0-9.]* = INTEGER: 1\t/ { a = 1 } END { exit !a }' traps.log
sim 'Relink "node0007"[1]'
for _ in $(seq 1 100); do
	has_trap 2 && break
	sleep 0.1
done
check "snmptrapd gets ibwEndportUp after Relink" has_trap 2
# Back from down it may pass through degraded (lost probes are still in
# the loss window): up is raised from either.
check "... with state up(1), previously down(3) or degraded(2)" \
	awk -v o="OID: $ROOT.0.2	" -v s="$ROOT.1.4.1.7.$idx7 = INTEGER: 1" -v p="$ROOT.1.7.5.0 = INTEGER: [23]" \
	'index($0, o) && index($0, s) && $0 ~ p { a = 1 } END { exit !a }' traps.log
sim 'PerformanceSet "node0009"[1] PortCounters.SymbolErrorCounter=150'
thr_trap() {
	awk -v o="OID: $ROOT.0.4	" -v c="$ROOT.1.7.1.0 = STRING: \"SymbolErrorCounter\"" \
		-v v="$ROOT.1.7.3.0 = Gauge32: 150" -v t="$ROOT.1.7.2.0 = Gauge32: 100" \
		'index($0, o) && index($0, c) && index($0, v) && index($0, t) { a = 1 } END { exit !a }' traps.log
}
for _ in $(seq 1 100); do
	thr_trap && break
	sleep 0.1
done
check "snmptrapd gets ibwErrorThreshold after PerformanceSet: SymbolErrorCounter, value 150, threshold 100" thr_trap
# A watched path changes: unlink the spine's port it enters by, read
# from the hop table (hop 3: node0001, its leaf, the spine).
spine=$(snmpget "${A[@]}" -Oqv "$ROOT.1.6.1.5.1.1.3" | tr -d '"')
sport=$(snmpget "${A[@]}" -Oqv "$ROOT.1.6.1.7.1.1.3")
check "the hop table has the watched path's spine ($spine, in by port $sport)" \
	grep -q '^spine[0-9]*$' <<<"$spine"
sim "Unlink \"$spine\"[$sport]"
path_trap() {
	awk -v o="OID: $ROOT.0.5	" -v t="$ROOT.1.5.1.2.1 = STRING: \"node0020 HCA-1\"" -v p="$ROOT.1.7.6.0 = STRING: \"" \
		'index($0, o) && index($0, t) && index($0, p) && / -> / { a = 1 } END { exit !a }' traps.log
}
for _ in $(seq 1 100); do
	path_trap && break
	sleep 0.1
done
check "snmptrapd gets ibwPathChanged with the target and the paths (old -> new)" path_trap
check "... and ibwPathChanges counts it" test "$(snmpget "${A[@]}" -Oqv "$ROOT.1.5.1.8.1")" -ge 1
sim "Relink \"$spine\"[$sport]"
check "snmpTrapOID.0 comes right after sysUpTime.0 in each notification" \
	awk -v t=".1.3.6.1.6.3.1.1.4.1.0" '/\.1\.3\.6\.1\.2\.1\.1\.3\.0 = / { n++; s = $0; sub(/.*\.1\.3\.6\.1\.2\.1\.1\.3\.0 = [^\t]*\t/, "", s); if (index(s, t) == 1) ok++ } END { exit !(n > 0 && n == ok) }' traps.log

# 4. snmpd killed and restarted: the subagent comes back (how soon is
# measured in tests/bench/timing.sh), and HTTP answers meanwhile, with a
# real Prometheus scraping /metrics every half second throughout: at
# least one scrape while snmpd is gone and one after the subagent is
# back, none of them failed.
prom=""
for try in 1 2 3; do
	pp=$(free_port)
	cat >prometheus.yml <<YML
global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: ibwatch
    static_configs:
      - targets: ['127.0.0.1:$P']
YML
	prometheus --config.file=prometheus.yml --storage.tsdb.path="$PWD/tsdb" \
		--web.listen-address="127.0.0.1:$pp" >prometheus.log 2>&1 &
	prom=$!
	for _ in $(seq 1 100); do
		curl -s "http://127.0.0.1:$pp/-/ready" | grep -q Ready && { pids+=("$prom"); break 2; }
		kill -0 "$prom" 2>/dev/null || break
		sleep 0.1
	done
	kill "$prom" 2>/dev/null
	prom=""
done
check "Prometheus starts" test -n "$prom"
promq() { curl -s -m 5 "http://127.0.0.1:$pp/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'; }
# scraped_after T: Prometheus has a scrape of the agent that began after
# T (s since the epoch), and it succeeded
scraped_after() { promq "up{job=\"ibwatch\"} == 1 and timestamp(up{job=\"ibwatch\"}) > $1" | grep -qx 1; }
for _ in $(seq 1 50); do
	[ "$(promq 'up{job="ibwatch"}')" = 1 ] && break
	sleep 0.2
done
prom_t0=$(date +%s)
kill -KILL "$snmpd_pid"
wait "$snmpd_pid" 2>/dev/null
keep=()
for p in "${pids[@]}"; do [ "$p" = "$snmpd_pid" ] || keep+=("$p"); done
pids=("${keep[@]}")
t_gone=$(date +%s.%N)
# snmpd stays away until Prometheus has scraped the agent once since
# (and HTTP is asked at least 5 times meanwhile)
httpbad=0
for ((i = 1; i <= 100; i++)); do
	[ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "$(U /api/v1/status)")" = 200 ] || httpbad=$((httpbad + 1))
	[ $i -ge 5 ] && scraped_after "$t_gone" && break
	sleep 0.2
done
check "a scrape while snmpd is gone succeeds" scraped_after "$t_gone"
check "HTTP keeps answering while snmpd is gone ($i requests, $httpbad failed)" [ $httpbad = 0 ]
start_snmpd || bad "snmpd does not start again"
back=""
t0=$(date +%s%N)
for _ in $(seq 1 100); do
	if snmpget "${A[@]}" -Oqv "$ROOT.1.1.1.0" 2>/dev/null | grep -q '[0-9]'; then
		back=$((($(date +%s%N) - t0) / 1000000)); break
	fi
	curl -s -m 5 -o /dev/null "$(U /api/v1/status)"
	sleep 0.1
done
t_back=$(date +%s.%N)
echo "# back after ${back:-never} ms"
check "the subagent registers again with the new snmpd" test -n "$back"
snmpwalk "${A[@]}" -On -Oq "$ROOT.1.4" >walk2.txt 2>walk2.err
check "... and walks succeed again ($(wc -l <walk2.txt) endport objects)" \
	test "$(grep -c "^$ROOT.1.4.1.7\." walk2.txt)" = 32 -a ! -s walk2.err
d=$(sysor)
check "... and sysORTable of the new snmpd lists IBWATCH-MIB again ($d)" grep -q 'IBWATCH-MIB' <<<"$d"
check "net-snmp's messages are in ibwatchd's log" grep -q 'snmp: net-snmp: ' "agent-$P.log"
for _ in $(seq 1 100); do scraped_after "$t_back" && break; sleep 0.2; done
check "a scrape after the subagent is back succeeds" scraped_after "$t_back"
# every scrape from before the kill to now: at least the two above (a
# count independent of the machine's speed), none failed
window=$(($(date +%s) - prom_t0 + 1))
scrapes=$(promq "count_over_time(up{job=\"ibwatch\"}[${window}s])")
failed=$(promq "count_over_time(up{job=\"ibwatch\"}[${window}s]) - sum_over_time(up{job=\"ibwatch\"}[${window}s])")
samples=$(promq "min_over_time(scrape_samples_scraped{job=\"ibwatch\"}[${window}s])")
check "Prometheus scraped throughout the restart: ${scrapes:-no} scrapes, ${failed:-no count of} failed, at least ${samples:-no} samples each" \
	test "${scrapes:-0}" -ge 2 -a "${failed:-x}" = 0 -a "${samples:-0}" -gt 100
check "the second agent ran throughout and stops cleanly (SIGTERM, exit 0)" stopped_clean "$agent"

# The rate limit: one notification a minute, a link flapping three times.
# The first counter sweep runs at start: the symbol errors set above
# would cross their threshold then and spend the minute's notification
# before the flapping; a threshold above them keeps it for the first flap.
snmp_agent --discovery-interval 1 --counter-interval 3600 --ping-interval-ms 200 \
	--down-after 2 --up-after 2 --ping-method pma --snmp-trap-rate 1 \
	--threshold SymbolErrorCounter=1000000 ||
	{ echo "not ok - the third agent does not start"; finish; exit 1; }
for _ in $(seq 1 100); do
	curl -s -m 5 "$(U /api/v1/endports)" | jqe 'length == 32 and all(.state == "up")' && break
	sleep 0.2
done
before=$(grep -c "OID: $ROOT\.0\." traps.log)
for flap in 1 2 3; do
	sim 'Unlink "node0011"[1]'
	for _ in $(seq 1 50); do
		curl -s -m 5 "$(U /api/v1/endports)" | jqe '[.[] | select(.state == "down")] | length == 1' && break
		sleep 0.1
	done
	sim 'Relink "node0011"[1]'
	for _ in $(seq 1 50); do
		curl -s -m 5 "$(U /api/v1/endports)" | jqe 'all(.state == "up")' && break
		sleep 0.1
	done
done
# port state changes come from discovery: two whole sweeps after the
# last Relink have reported whatever the flaps left
sweeps() { curl -s -m 5 "$(U /api/v1/status)" | jq '.sweeps.discoveries // empty'; }
d0=$(sweeps)
for _ in $(seq 1 100); do [ "$(sweeps)" -ge $((${d0:-0} + 2)) ] 2>/dev/null && break; sleep 0.1; done
check "two discovery sweeps after the last flap ($d0, then $(sweeps))" [ "$(sweeps)" -ge $((${d0:-0} + 2)) ]
sent=$(snmpget "${A[@]}" -Oqv "$ROOT.1.1.27.0") supp=$(snmpget "${A[@]}" -Oqv "$ROOT.1.1.28.0")
got=$(($(grep -c "OID: $ROOT\.0\." traps.log) - before))
echo "# flapping: $sent sent, $supp suppressed, $got received"
check "a flapping link does not flood the manager: 1 sent, the rest suppressed and counted" \
	test "$sent" = 1 -a "$supp" -ge 5 -a "$got" = 1
check "... and logged" grep -q 'notification rate limit: [0-9]* suppressed' "agent-$P.log"
check "the third agent stops cleanly (SIGTERM, exit 0)" stopped_clean "$agent"

finish
