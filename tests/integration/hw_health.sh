#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Hardware health in-band on a 16-host fat tree whose nodes say NVIDIA's
# VendorID (0x02c9), but node0015, of another vendor. The kernel and
# fabric model (tests/preload/km_hw.h) makes leaf01, spine01 and
# node0003 serve NVIDIA's vendor MADs with register images written
# through NVIDIA's layout database (tests/lib/hwmodel.py, by
# tests/tools/adb.py); leaf02 and the other switches answer nothing of
# class 0x0A, the other hosts "not supported".
# - Every value of /api/v1/hardware and the ibswinfo series equals what
#   the database's layouts decode from the images the devices serve
#   (mstflint's own mstreg and mstlink cannot read a register in-band:
#   docs/testing.md says why);
# - the series carry infiniband_exporter's names and labels; promtool;
# - node0015 (another vendor) costs no MAD, a silent switch one per
#   discovery, none per sweep; a register a device lacks is not asked
#   again;
# - a stopped fan, a failed supply and a hot sensor make events, the
#   JSON, the series and ibwHardwareChange traps say so, and their
#   recovery too, and Nagios' check_snmp as check_ibwatch_hardware runs
#   it (CRITICAL, then OK); ibwHwDeviceTable, ibwHwSensorTable, ibwHwFanTable and
#   ibwHwPsuTable through snmpd, read by name with snmptable;
# - cable modules (PDDR's module info and latched flags pages): each
#   value equals the database's decoding; node0003's module's lane 2 rx
#   power under its warning, then its alarm, makes its cable degraded,
#   then failing, the lane and its value named in /api/v1/links,
#   /metrics, ibwLinkTable, the ibwLinkHealthChange trap, the event and
#   Nagios' check_snmp (WARNING, then CRITICAL), and the map's details
#   in headless Chromium.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
: "${IBWATCHD:?}" "${IBW_FATTREE:?}" "${IBW_KMODEL:?}"

if [ -z "${IBW_SIM_DIR:-}" ]; then
	work=${IBW_TEST_WORK:-$PWD/test-work}
	mkdir -p "$work"
	# ibsim's net file: vendid= before a node sets its VendorID, devid=
	# its DeviceID (Quantum's 0xd2f0, ConnectX-6's 0x101b).
	"$IBW_FATTREE" --levels 2 --hosts 16 | awk '
		/^Switch/ { print "vendid=0x2c9"; print "devid=0xd2f0" }
		/^(Ca|Hca)/ { print ($0 ~ /"node0015"/ ? "vendid=0x15b3" : "vendid=0x2c9"); print "devid=0x101b" }
		{ print }' >"$work/hw_health-16.net" || exit 1
	exec "$tap_lib/with-fabric.sh" hw_health "$work/hw_health-16.net" \
		--sm node0016 -- "$0"
fi
trap stop_started EXIT
# jq -e on a file, its output dropped
qjq() { jq "$@" >/dev/null; }

check "the model is loaded, with its state directory" \
	[ -d "${IBW_KM_STATE_DIR:-/nonexistent}" ]
sw_lid() { at node0001 ibswitches | awk -v n="\"$1\"" '$0 ~ n { print $(NF - 2) }'; }
l_leaf01=$(sw_lid leaf01)
l_spine01=$(sw_lid spine01)
l_leaf02=$(sw_lid leaf02)
l3=$(lid_of node0003)
check "LIDs of leaf01 ($l_leaf01), spine01 ($l_spine01), leaf02 ($l_leaf02), node0003 ($l3)" \
	eval '[ -n "$l_leaf01" ] && [ -n "$l_spine01" ] && [ -n "$l_leaf02" ] && [ -n "$l3" ]'
check "ibnetdiscover sees node0015 of another vendor, the rest NVIDIA's" \
	eval '[ "$(at node0001 ibnetdiscover | grep -c "^vendid=0x2c9")" = 23 ] &&
		at node0001 ibnetdiscover | grep -B4 "# \"node0015 HCA-1\"" | grep -q "^vendid=0x15b3"'

# mod SERIAL LANE2_RX_UW: a 4-lane optical module (powers in uW; its
# warning and alarm thresholds: rx under 100 and 40 uW, -10 and -14 dBm)
mod() {
	cat <<EOF
{"vendor": "Mellanox", "pn": "MFS1S00-H003E", "sn": "$1", "rev": "A2",
 "length": 3, "type": 2, "identifier": 0, "wavelength": 850,
 "temp": 45.0, "volt": 3.3, "rx_uw": [800, 790, $2, 810],
 "tx_uw": [900, 900, 900, 900], "bias_ma": [6.5, 6.5, 6.5, 6.5],
 "alarm": {"rx_low": 40, "rx_high": 3000, "tx_low": 100, "tx_high": 3000,
           "temp_high": 75, "temp_low": -5, "volt_high": 3.6,
           "volt_low": 3.0, "bias_high": 12, "bias_low": 2},
 "warning": {"rx_low": 100, "rx_high": 2000, "tx_low": 200, "tx_high": 2000,
             "temp_high": 70, "temp_low": 0, "bias_high": 10, "bias_low": 3}}
EOF
}
# spec FAN2_RPM PSU1_DC SPINE_TEMP [RX_UW]: the devices' values; RX_UW
# is node0003's module's lane 2 (default 780 uW, -1.08 dBm).
spec() {
	local rx=${4:-780}
	cat >spec.json <<EOF
{"$l_leaf01": {"hwid": "0x24d", "switch": true, "fw": [27, 2010, 6102],
  "psid": "MT_0000000063", "uptime": 13862333, "device_id": 53744,
  "serial": "MT2001X00001", "part": "MQM8790-HS2F", "revision": "A1",
  "product": "Quantum HDR",
  "sensors": {"0": {"name": "asic", "temp": 45.5, "max": 50.125, "hi": 105, "lo": 95},
              "1": {"name": "amb", "temp": -3.25, "max": 30, "hi": 70, "lo": 60}},
  "fans": {"1": {"rpm": 9000, "min": 2000, "max": 20000},
           "2": {"rpm": $1, "min": 2000, "max": 20000}},
  "modules": {"3": $(mod MT2001FT00001 770)},
  "psus": [{"present": true, "dc": true, "fan": 2, "watts": 200},
           {"present": true, "dc": $2, "fan": 2, "watts": 190}]},
 "$l_spine01": {"hwid": "0x24d", "switch": true, "fw": [27, 2011, 1020],
  "psid": "MT_0000000064", "uptime": 500, "device_id": 53744,
  "serial": "MT2001X00002", "part": "MQM8700-HS2F", "revision": "B2",
  "product": "Quantum HDR managed",
  "sensors": {"0": {"name": "asic", "temp": $3, "max": 90, "hi": 85, "lo": 75}},
  "fans": {"1": {"rpm": 9100, "min": 2000, "max": 20000}},
  "psus": [{"present": true, "dc": true, "fan": 3, "watts": 210},
           {"present": true, "dc": true, "fan": 2, "watts": 0}]},
 "$l3": {"hwid": "0x20f", "fw": [20, 39, 1002], "psid": "MT_0000000222",
  "uptime": 77, "device_id": 4123,
  "sensors": {"0": {"name": "asic", "temp": 55, "max": 60, "hi": 105, "lo": 95}},
  "modules": {"1": $(mod MT2001FT00002 "$rx")}}
}
EOF
	python3 "$here/lib/hwmodel.py" write spec.json "$IBW_KM_STATE_DIR/hw"
	sleep 0.1 # the model looks at its file every 20 ms
}
spec 8800 true 40
python3 "$here/lib/hwmodel.py" expect spec.json >expect.json
check "the database decodes what the devices serve" \
	qjq -e --arg l "$l_leaf01" '.[$l].firmware_version == "27.2010.6102" and
		.[$l].psid == "MT_0000000063" and .[$l].sensors["1"].temperature_c == -3.25' expect.json

# The SNMP side: snmptrapd, snmpd with the agent over AgentX.
snmp_stack || { echo "not ok - snmpd does not start"; exit 1; }
MIBARGS=(-M "$here/../mib:$here/../mib/ietf" -m IBWATCH-MIB)

# One discovery every 4 s, a hardware sweep every second.
start_agent node0001 --no-ping --no-state-file --discovery-interval 4 \
	--hardware-interval 1 --agentx "$SOCK"
check "the agent listens" [ -n "${P:-}" ]
U=http://127.0.0.1:$P
hw_sweeps() { curl -s -m 5 "$U/api/v1/hardware" | jq -r '.sweeps // 0'; }
wait_hw() { # N more sweeps, 30 s at most
	local want=$(($(hw_sweeps) + $1))
	for _ in $(seq 1 300); do
		[ "$(hw_sweeps)" -ge "$want" ] && return 0
		sleep 0.1
	done
	return 1
}
check "the hardware sweeps run" wait_hw 3
curl -s "$U/api/v1/hardware" >hw.json

# (1) every value against the database's decoding of the served images
for l in "$l_leaf01" "$l_spine01" "$l3"; do
	check "LID $l: firmware, PSID, uptime, device IDs and inventory equal the database's decoding" \
		qjq -e --slurpfile x expect.json --arg l "$l" '
			($x[0][$l]) as $e | (.nodes[] | select(.lid == ($l | tonumber))) as $n |
			$n.state == "ok" and
			([("firmware_version", "psid", "uptime_s", "device_id", "hw_dev_id",
			   "serial_number", "part_number", "revision", "product_name") as $k |
			  select($e | has($k)) | $n[$k] == $e[$k]] | all)' hw.json
	check "LID $l: every sensor (temperature, max, thresholds, name) equals the database's decoding" \
		qjq -e --slurpfile x expect.json --arg l "$l" '
			($x[0][$l]) as $e | (.nodes[] | select(.lid == ($l | tonumber))) as $n |
			($n.sensors | length) == ($e.sensors | length) and
			([$n.sensors[] | . as $s | $e.sensors[($s.index | tostring)] as $w |
			  [("name", "temperature_c", "max_c", "threshold_high_c", "threshold_low_c") as $k |
			   $s[$k] == $w[$k]] | all] | all)' hw.json
	check "LID $l: every fan and power supply equals the database's decoding" \
		qjq -e --slurpfile x expect.json --arg l "$l" '
			($x[0][$l]) as $e | (.nodes[] | select(.lid == ($l | tonumber))) as $n |
			($n.fans | length) == ($e.fans | length) and
			([$n.fans[] | . as $f | $e.fans[($f.tacho | tostring)] as $w |
			  $f.rpm == $w.rpm and $f.min_rpm == $w.min_rpm and $f.max_rpm == $w.max_rpm] | all) and
			([$n.power_supplies[] | . as $p | $e.psus[$p.index] as $w |
			  [("present", "dc_ok", "fan", "watts") as $k | $p[$k] == $w[$k]] | all] | all) and
			($n.power_supplies | length) == ($e.psus | length)' hw.json
done
check "node0003 (an HCA) has no MSGI: named missing, and its other registers read" \
	qjq -e --arg l "$l3" '.nodes[] | select(.lid == ($l | tonumber)) |
		.registers_missing == ["MSGI"] and (.sensors | length) == 1 and .fans == [] and
		.power_supplies == []' hw.json
# a node's details have its modules in full, the list their counts
node_hw() { # LID: that node's hardware, from its details
	curl -s "$U/api/v1/nodes/$(jq -r --arg l "$1" '.nodes[] | select(.lid == ($l | tonumber)) | .guid' hw.json)" |
		jq '{nodes: [.hardware]}'
}
node_hw "$l_leaf01" >hw-leaf01.json
node_hw "$l3" >hw-node0003.json
check "spine01 has no PDDR: named missing; leaf01 reads a module at each port with its link up" \
	eval 'qjq -e ".nodes[] | select(.name == \"spine01\") | .registers_missing == [\"PDDR\"]" hw.json &&
		qjq -e ".nodes[] | select(.name == \"leaf01\") | .modules == {ports: 8, present: 1, warning: 0, alarm: 0}" hw.json &&
		qjq -e ".nodes[0] | [.modules[].port] == [1, 2, 3, 4, 5, 6, 7, 8] and
			[.modules[] | select(.present) | .port] == [3]" hw-leaf01.json'
for l in "$l_leaf01" "$l3"; do
	f=hw-leaf01.json
	[ "$l" = "$l3" ] && f=hw-node0003.json
	check "LID $l: the cable module's identity, values and alarm thresholds equal the database's decoding" \
		qjq -e --slurpfile x expect.json --arg l "$l" '
			($x[0][$l].modules) as $e | [.nodes[] | select(.lid == ($l | tonumber)) | .modules[] | select(.present)] as $m |
			($m | length) == ($e | length) and
			([$m[] | . as $o | $e[($o.port | tostring)] as $w |
			  ([("vendor", "part_number", "serial_number", "revision", "length_m", "type", "identifier",
			     "wavelength_nm", "temperature_c", "voltage_v") as $k |
			    $o[$k] == $w[$k]] | all) and
			  ([$o.alarm_thresholds | to_entries[] | ((.value - $w.alarm_thresholds[.key]) | fabs) < 1e-6] | all) and
			  ([range(0; 8) as $i | (($o.rx_power_dbm[$i] - $w.rx_power_dbm[$i]) | fabs) < 1e-6 and
			    (($o.tx_power_dbm[$i] - $w.tx_power_dbm[$i]) | fabs) < 1e-6 and
			    (($o.tx_bias_ma[$i] - $w.tx_bias_ma[$i]) | fabs) < 1e-9] | all) and
			  $o.health == "ok"] | all)' "$f"
done
check "a node's details carry the same hardware" \
	eval 'curl -s "$U/api/v1/nodes/$(jq -r --arg l "$l_leaf01" ".nodes[] | select(.lid == (\$l | tonumber)) | .guid" hw.json)" |
		jq -e --slurpfile h hw.json ".hardware.serial_number == \"MT2001X00001\" and
			.hardware.sensors == ([\$h[0].nodes[] | select(.name == \"leaf01\")][0].sensors)" >/dev/null'

# (3) what each kind of device cost, over three discoveries
discoveries() { curl -s -m 5 "$U/api/v1/status" | jq -r '.sweeps.discoveries // 0'; }
for _ in $(seq 1 300); do
	[ "$(discoveries)" -ge 3 ] && break
	sleep 0.1
done
curl -s "$U/api/v1/status" >status.json
disc=$(jq -r '.sweeps.discoveries' status.json)
curl -s "$U/api/v1/hardware" >hw2.json
sweeps=$(jq -r '.sweeps' hw2.json)
m15=$(jq -r '.nodes[] | select(.name == "node0015 HCA-1") | [.state, .mads] | join(" ")' hw2.json)
m_leaf02=$(jq -r '.nodes[] | select(.name == "leaf02") | [.state, .mads, .timeouts] | join(" ")' hw2.json)
check "node0015, of another vendor, is never asked ($m15)" [ "$m15" = "other_vendor 0" ]
check "leaf02, silent, costs one MAD per discovery: $m_leaf02 after $disc discoveries and $sweeps sweeps" \
	eval 'read -r st m t <<<"$m_leaf02"; [ "$st" = silent ] && [ "$m" = "$t" ] &&
		[ "$m" -le "$disc" ] && [ "$m" -ge $((disc - 1)) ] && [ "$sweeps" -ge $((m + 2)) ]'
check "a host with no agent for the class (node0002) refuses: one MAD per discovery" \
	qjq -e --argjson d "$disc" '.nodes[] | select(.name == "node0002 HCA-1") |
		.state == "refused" and .mads <= $d and .timeouts == 0' hw2.json
m3a=$(jq -r --arg l "$l3" '.nodes[] | select(.lid == ($l | tonumber)) | .last_sweep.mads' hw2.json)
check "node0003's sweep asks MGIR, its one sensor and its module's two PDDR pages, not the MSGI it lacks ($m3a MADs)" [ "$m3a" = 4 ]

# (4) the exporter's series, names and labels
metrics_of "$U" >m1.txt
check "promtool check metrics" eval 'promtool check metrics <m1.txt >promtool.txt 2>&1'
g_leaf01=$(jq -r '.nodes[] | select(.name == "leaf01") | .guid' hw.json)
g_spine01=$(jq -r '.nodes[] | select(.name == "spine01") | .guid' hw.json)
check "infiniband_switch_hardware_info: the exporter's labels, in its order" \
	grep -qx "infiniband_switch_hardware_info{guid=\"$g_leaf01\",firmware_version=\"27.2010.6102\",psid=\"MT_0000000063\",part_number=\"MQM8790-HS2F\",serial_number=\"MT2001X00001\",switch=\"leaf01\"} 1" m1.txt
check "uptime, ASIC temperature and fan speeds as the registers say" \
	eval 'grep -qx "infiniband_switch_uptime_seconds{guid=\"$g_leaf01\"} 13862333" m1.txt &&
		grep -qx "infiniband_switch_temperature_celsius{guid=\"$g_leaf01\"} 45.500" m1.txt &&
		grep -qx "infiniband_switch_fan_rpm{guid=\"$g_leaf01\",fan=\"2\"} 8800" m1.txt &&
		grep -qx "infiniband_switch_fan_status_info{guid=\"$g_leaf01\",status=\"OK\"} 1" m1.txt'
check "power supplies: status, DC, fan (none for a supply without one) and watts (none when 0)" \
	eval 'grep -qx "infiniband_switch_power_supply_status_info{guid=\"$g_spine01\",psu=\"0\",status=\"OK\"} 1" m1.txt &&
		grep -qx "infiniband_switch_power_supply_dc_power_status_info{guid=\"$g_leaf01\",psu=\"1\",status=\"OK\"} 1" m1.txt &&
		! grep -q "infiniband_switch_power_supply_fan_status_info{guid=\"$g_spine01\",psu=\"0\"" m1.txt &&
		grep -qx "infiniband_switch_power_supply_fan_status_info{guid=\"$g_spine01\",psu=\"1\",status=\"OK\"} 1" m1.txt &&
		grep -qx "infiniband_switch_power_supply_watts{guid=\"$g_leaf01\",psu=\"1\"} 190" m1.txt &&
		! grep -q "infiniband_switch_power_supply_watts{guid=\"$g_spine01\",psu=\"1\"}" m1.txt'
check "the ibswinfo collector's rows in the switch collector's families" \
	eval 'grep -q "^infiniband_switch_collect_timeout{collector=\"ibswinfo\",guid=\"$g_leaf01\"} 0$" m1.txt &&
		[ "$(grep -c "^# TYPE infiniband_switch_collect_timeout " m1.txt)" = 1 ]'
check "only the two switches that serve the registers have series" \
	[ "$(grep -c '^infiniband_switch_hardware_info{' m1.txt)" = 2 ]
check "every sensor of every device: ibwatch_hw_temperature_celsius" \
	eval 'grep -q "^ibwatch_hw_temperature_celsius{.*type=\"switch\",sensor=\"1\",name=\"amb\"} -3.250$" m1.txt &&
		grep -q "^ibwatch_hw_temperature_celsius{.*type=\"hca\",sensor=\"0\",name=\"asic\"} 55.000$" m1.txt'

# The same through snmpd, read by name as a manager reads them.
for _ in $(seq 1 100); do
	snmptable "${A[@]}" "${MIBARGS[@]}" -OU -Cf '|' -CH IBWATCH-MIB::ibwHwSensorTable 2>/dev/null |
		grep -q amb && break
	sleep 0.1
done
snmptable "${A[@]}" "${MIBARGS[@]}" -OU -Cf '|' -CH IBWATCH-MIB::ibwHwDeviceTable >snmp-dev.txt 2>snmp.err
snmptable "${A[@]}" "${MIBARGS[@]}" -OU -Cf '|' -CH IBWATCH-MIB::ibwHwSensorTable >snmp-sensor.txt 2>>snmp.err
snmptable "${A[@]}" "${MIBARGS[@]}" -OU -Cf '|' -CH IBWATCH-MIB::ibwHwFanTable >snmp-fan.txt 2>>snmp.err
snmptable "${A[@]}" "${MIBARGS[@]}" -OU -Cf '|' -CH IBWATCH-MIB::ibwHwPsuTable >snmp-psu.txt 2>>snmp.err
check "snmptable ibwHwDeviceTable: leaf01's firmware, PSID, serial, part and uptime" \
	grep -qxF "$g_leaf01|ok|27.2010.6102|MT_0000000063|MT2001X00001|MQM8790-HS2F|13862333|0|0|leaf01" snmp-dev.txt
check "... node0015 otherVendor, leaf02 silent" \
	eval 'grep -q "|otherVendor|.*|node0015 HCA-1$" snmp-dev.txt && grep -q "|silent|.*|leaf02$" snmp-dev.txt'
check "snmptable ibwHwSensorTable: leaf01's sensors in millidegrees, thresholds, hot" \
	eval 'grep -qxF "asic|45500|50125|105000|95000|false|$g_leaf01" snmp-sensor.txt &&
		grep -qxF "amb|-3250|30000|70000|60000|false|$g_leaf01" snmp-sensor.txt'
check "snmptable ibwHwFanTable and ibwHwPsuTable" \
	eval 'grep -qxF "8800|2000|20000|false|$g_leaf01" snmp-fan.txt &&
		grep -qxF "true|true|none|210|false|$g_spine01" snmp-psu.txt'

# (2) a fan stops, a supply's DC fails, a sensor runs hot
seq0=$(curl -s "$U/api/v1/events" | jq -r '[.events[].seq] | max // 0')
spec 0 false 90
check "the next sweeps read it" wait_hw 2
curl -s "$U/api/v1/hardware" >hw3.json
check "leaf01: fan 2 failed, supply 1 failed; spine01's sensor hot" \
	eval 'jq -e ".nodes[] | select(.name == \"leaf01\") | .fans_failed == 1 and .power_supplies_failed == 1 and
		(.fans[] | select(.tacho == 2) | .failed) and (.power_supplies[1] | .failed and (.dc_ok | not))" hw3.json >/dev/null &&
		qjq -e ".nodes[] | select(.name == \"spine01\") | .sensors[0].hot" hw3.json >/dev/null'
curl -s "$U/api/v1/events?since=$seq0" >ev.json
check "an event for each: fan, power supply, temperature" \
	qjq -e '[.events[] | select(.kind == "hardware_health" and .bad == 1) | [.name, .what, .port]] |
		(index([["leaf01", "fan", 2]]) != null) and (index([["leaf01", "power_supply", 1]]) != null) and
		(index([["spine01", "temperature", 0]]) != null)' ev.json
metrics_of "$U" >m2.txt
for _ in $(seq 1 100); do
	[ "$(grep -c "$ROOT.0.11" traps.log 2>/dev/null)" -ge 3 ] && break
	sleep 0.1
done
check "ibwHardwareChange traps at snmptrapd: the fan (index 3, bad) with its detail" \
	eval 'grep -q "$ROOT.1.7.16.0 = STRING: \"fan 2: 0 rpm, low limit 2000\"" traps.log &&
		[ "$(grep -c "$ROOT.0.11" traps.log)" -ge 3 ]'
chk=/usr/lib/nagios/plugins/check_snmp
# nagios_cmd NAME: check_snmp as deploy/nagios's command NAME runs it
nagios_cmd() {
	local oids warn crit
	read -r oids warn crit < <(sed -n "/command_name *$1\$/,/command_line/ s/^ *command_line.*check_snmp .* -o \([^ ]*\) -w \([^ ]*\) -c \([^ ]*\) .*/\1 \2 \3/p" \
		"$here/../deploy/nagios/ibwatch.cfg")
	"$chk" -H 127.0.0.1 -p "$snmp_port" -P 2c -C public -o "$oids" -w "$warn" -c "$crit" -l "$1" >nagios-hw.out
	echo $?
}
check "check_snmp (check_ibwatch_hardware): CRITICAL for the failed fan and supply ($(cat nagios-hw.out 2>/dev/null))" \
	eval '[ "$(nagios_cmd check_ibwatch_hardware)" = 2 ]'
snmptable "${A[@]}" "${MIBARGS[@]}" -OU -Cf '|' -CH IBWATCH-MIB::ibwHwDeviceTable >snmp-dev2.txt 2>>snmp.err
check "ibwHwDeviceTable: leaf01 with a fan and a supply failed" \
	grep -q "^$g_leaf01|ok|.*|1|1|leaf01\$" snmp-dev2.txt
check "the series say ERROR" \
	eval 'grep -qx "infiniband_switch_fan_status_info{guid=\"$g_leaf01\",status=\"ERROR\"} 1" m2.txt &&
		grep -qx "infiniband_switch_power_supply_dc_power_status_info{guid=\"$g_leaf01\",psu=\"1\",status=\"ERROR\"} 1" m2.txt &&
		grep -qx "infiniband_switch_temperature_celsius{guid=\"$g_spine01\"} 90.000" m2.txt'
seq1=$(jq -r '[.events[].seq] | max' ev.json)
spec 8800 true 40
check "and the sweeps after the repair" wait_hw 2
check "each is good again, with an event" \
	eval 'curl -s "$U/api/v1/events?since=$seq1" | jq -e "[.events[] | select(.kind == \"hardware_health\" and .bad == 0) | .what] | sort == [\"fan\", \"power_supply\", \"temperature\"]" >/dev/null'
check "... check_snmp (check_ibwatch_hardware) OK again" \
	eval '[ "$(nagios_cmd check_ibwatch_hardware)" = 0 ]'

# (2, modules) node0003's module: lane 2's rx power under its warning
# (100 uW, -10 dBm), then under its alarm (40 uW, -13.98 dBm). The module
# latches its flags (the model sets them from the spec's thresholds).
link3() { curl -s -m 5 "$U/api/v1/links" | jq -c '[.links[] | select(any(.ends[]; .name == "node0003 HCA-1"))][0]'; }
check "node0003's cable is ok while its module is" eval '[ "$(link3 | jq -r .health)" = ok ]'
i3=$(port_row 0x0000000000100004 1)
col() { snmpget "${A[@]}" -Oqv "$ROOT.1.8.1.$1.$i3" 2>&1; }
chk=/usr/lib/nagios/plugins/check_snmp
read -r oids warn crit < <(sed -n 's/^ *command_line.*check_snmp .* -o \([^ ]*32473\.1\.1\.30\.0[^ ]*\) -w \([^ ]*\) -c \([^ ]*\) .*/\1 \2 \3/p' \
	"$here/../deploy/nagios/ibwatch.cfg")
nagios() { "$chk" -H 127.0.0.1 -p "$snmp_port" -P 2c -C public -o "$oids" -w "$warn" -c "$crit" -l links >nagios.out; echo $?; }
step() { # RX_UW HEALTH REASON LEVEL MIB_HEALTH NAGIOS_RC
	local rx=$1 health=$2 reason=$3 level=$4 mh=$5 rc=$6 k dbm
	spec 8800 true 40 "$rx"
	wait_hw 2
	for _ in $(seq 1 100); do
		[ "$(link3 | jq -r .health)" = "$health" ] && break
		sleep 0.1
	done
	k=$(link3)
	dbm=$(python3 -c "import math; print('%.2f' % (10 * math.log10($rx / 1000)))")
	check "lane 2 at $rx uW ($dbm dBm): node0003's cable $health for $reason, lane 2 and its value named" \
		eval 'jq -e --arg r "$reason" --arg l "$level" --arg d "$dbm" ".health == \"$health\" and .reasons == [\$r] and
			(.ends[] | select(.name == \"node0003 HCA-1\") | .module.level == \$l and .module.lane == 2 and
			 .module.what == \"rx_power\" and (.module.text | startswith(\"lane 2 rx power \" + \$d + \" dBm\")))" <<<"$k" >/dev/null'
	metrics_of "$U" >mm.txt
	check "... /metrics: ibwatch_link_reason $reason, the lane's rx power, the module's health" \
		eval 'grep -q "^ibwatch_link_reason{guid=\"0x0000000000100004\",port=\"1\",.*reason=\"$reason\"} 1\$" mm.txt &&
			awk -v d="$dbm" "/^ibwatch_module_rx_power_dbm{guid=\"0x0000000000100004\",port=\"1\",lane=\"2\"} / { x = \$2 - d; ok = x < 0.005 && x > -0.005 } END { exit !ok }" mm.txt &&
			grep -q "^ibwatch_module_health{guid=\"0x0000000000100004\",port=\"1\"} $([ "$level" = alarm ] && echo 2 || echo 1)\$" mm.txt'
	for _ in $(seq 1 100); do
		[ "$(col 9)" = "$mh" ] && break
		sleep 0.1
	done
	check "... ibwLinkTable: health $mh, reasons $reason, ibwLinkBadLane names lane 2 ($(col 19))" \
		eval '[ "$(col 9)" = "$mh" ] && [ "$(col 10)" = "\"$reason\"" ] &&
			[[ "$(col 19)" == "\"lane 2 rx power $dbm dBm under its low $level"*"at node0003 HCA-1 port 1\"" ]]'
	for _ in $(seq 1 100); do
		grep -q "$ROOT.1.8.1.10.$i3 = STRING: \"$reason\"" traps.log 2>/dev/null && break
		sleep 0.1
	done
	check "... ibwLinkHealthChange at snmptrapd with the lane" \
		awk -v o="OID: $ROOT.0.6	" -v r="$ROOT.1.8.1.10.$i3 = STRING: \"$reason\"" \
		-v l="$ROOT.1.8.1.19.$i3 = STRING: \"lane 2 rx power $dbm dBm" \
		'index($0, o) && index($0, r) && index($0, l) { a = 1 } END { exit !a }' traps.log
	check "... the event names the lane" \
		eval 'curl -s -m 5 "$U/api/v1/events" | jq -e --arg r "$reason" --arg d "$dbm" "[.events[] | select(.kind == \"link_health_changed\" and
			.reasons == [\$r] and (.bad_lanes | startswith(\"lane 2 rx power \" + \$d)))] | length == 1" >/dev/null'
	check "... check_snmp (check_ibwatch_links) exits $rc ($(nagios; cat nagios.out))" eval '[ "$(nagios)" = "$rc" ]'
}
step 90 degraded module_warning warning 2 1
step 30 failing module_alarm alarm 3 2

# The map, in headless Chromium: leaf01's details show its hardware; the
# failing cable, first in the trouble list, names its module's lane.
if /usr/bin/python3 "$here/integration/browser.py" "$U" browser.json \
	--click leaf01 --trouble 1 >browser.out 2>&1; then :; fi
check "the map: leaf01's details show its firmware, sensors, fans, supplies and modules" \
	qjq -e '.details | contains("Hardware") and contains("27.2010.6102 (MT_0000000063)") and
		contains("sensor 1 amb") and contains("fan 2") and contains("power supply 1") and
		contains("module port 3") and contains("hardware_health good: fan 2: 8800 rpm")' browser.json
check "... the trouble list's failing cable names its module's lane" \
	qjq -e '.trouble.clicked[0].details | contains("module at node0003 HCA-1 port 1") and
		contains("alarm: lane 2 rx power")' browser.json

# --metrics-no-modules: a second agent without the module series; the
# module still fails its cable
start_agent node0002 --no-ping --no-state-file --hardware-interval 1 --metrics-no-modules
U=http://127.0.0.1:$P
check "--metrics-no-modules: its hardware sweeps run" wait_hw 2
for _ in $(seq 1 100); do
	metrics_of "$U" >m3.txt
	grep -q 'reason="module_alarm"' m3.txt && break
	sleep 0.1
done
check "... /metrics without ibwatch_module_*, with the switches' series and the module's reason on its cable" \
	eval '! grep -q "^ibwatch_module_" m3.txt && grep -q "^infiniband_switch_hardware_info{" m3.txt &&
		grep -q "^ibwatch_link_reason{guid=\"0x0000000000100004\",port=\"1\",.*reason=\"module_alarm\"} 1\$" m3.txt'

finish
