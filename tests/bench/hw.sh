#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What the hardware sweep costs on the 57,024-port tree (3 levels, 10,368
# hosts, 1,296 switches; HOSTS=N for another) when every node is NVIDIA's
# and serves the access registers (the kernel model's hw file: a dev
# line per node and one set of register images for all, a module at
# every port with its link up): the first sweep (GeneralInfo, the
# inventory, the sensors, fans, supplies and every module) and a steady
# one, in MADs and seconds; the counter sweep beside them; and the
# agent's peak RSS with the sweep and without it (hardware-interval 0).
#   tests/bench/hw.sh [BUILD_DIR]
. "$(dirname "$0")/lib.sh"
export IBW_KMODEL=${IBW_KMODEL:-$build/tests/libibw_kmodel.so}

if [ -n "${IBW_SIM_DIR:-}" ]; then
	at() { SIM_HOST=node0001 LD_PRELOAD=$IBW_SIM_PRELOAD "$@"; }
	# every node a device: switches Quantum (0x24d), hosts ConnectX-6
	at ibswitches | awk '{ print $(NF - 2), 0, "dev", "0x24d" }' >"$IBW_KM_STATE_DIR/hw.new"
	# a CA's LID: the ca-lids file the test bed keeps (LID NAME)
	awk '{ print $1, 0, "dev", "0x20f" }' "$IBW_KM_STATE_DIR/ca-lids" >>"$IBW_KM_STATE_DIR/hw.new"
	python3 - "$top" >>"$IBW_KM_STATE_DIR/hw.new" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1] + "/tests/lib")
import hwmodel
m = {"vendor": "Mellanox", "pn": "MFS1S00-H003E", "sn": "MT2001FT00001",
     "rev": "A2", "length": 3, "type": 2, "temp": 45.0, "volt": 3.3,
     "rx_uw": [800] * 4, "tx_uw": [900] * 4, "bias_ma": [6.5] * 4,
     "alarm": {"rx_low": 40}, "warning": {"rx_low": 100}}
spec = {"0": {"switch": True, "fw": [27, 2010, 6102], "psid": "MT_0000000063",
              "uptime": 100, "serial": "MT2001X00001", "part": "MQM8790",
              "sensors": {"0": {"name": "asic", "temp": 45, "hi": 105}},
              "fans": {str(t): {"rpm": 9000, "min": 2000} for t in range(1, 5)},
              "psus": [{"watts": 200}, {"watts": 200}],
              "modules": {"1": m}}}
for ln in hwmodel.lines(spec):
    w = ln.split()
    if w[2] != "reg":
        continue
    if w[3] == "0x5031":  # PDDR: one image for every port (no local_port)
        mask = bytearray.fromhex(w[4])
        mask[1] = 0
        w[4] = mask.hex()
    print(" ".join(w))
EOF
	mv "$IBW_KM_STATE_DIR/hw.new" "$IBW_KM_STATE_DIR/hw"
	echo "# $(grep -c ' dev ' "$IBW_KM_STATE_DIR/hw") devices in the model"
	run() { # NAME HW_INTERVAL
		local port=$((20000 + RANDOM % 20000)) U pid i
		U=http://127.0.0.1:$port
		LD_PRELOAD=$IBW_SIM_PRELOAD "$build/agent/ibwatchd" --no-state-file \
			--no-snmp --no-ping --http "127.0.0.1:$port" --counter-interval 60 \
			--hardware-interval "$2" >"$1.out" 2>"$1.log" &
		pid=$!
		# stopped whatever fails below (set -e)
		trap 'kill $pid 2>/dev/null' EXIT
		# /api/v1/status alone while waiting: the agent's RSS is the
		# sweeps', not that of answers rendered meanwhile
		for i in $(seq 1 3000); do
			curl -s "$U/api/v1/status" >st.json 2>/dev/null || true
			if [ "$(jq -r '.sweeps.counter_sweeps // 0' st.json 2>/dev/null)" -ge 1 ] 2>/dev/null &&
				[ "$2" = 0 -o "$(jq -r '.sweeps.hardware_sweeps // 0' st.json 2>/dev/null)" -ge 2 ] 2>/dev/null; then
				break
			fi
			sleep 0.2
		done
		jq -r '"counter sweep: \(.sweeps.counters.duration_ms) ms, \(.sweeps.counters.mads) MADs"' st.json
		echo "peak RSS ($1): $(awk '/VmHWM/ { print $2, $3 }' "/proc/$pid/status")"
		if [ "$2" != 0 ]; then
			/usr/bin/time -f "%e" curl -s -o "$1-hw.json" "$U/api/v1/hardware" 2>"$1-time.txt"
			jq -r '"hardware sweeps: \(.sweeps), the last \(.duration_s) s, \(.last_sweep_mads) MADs; \(.mads) MADs and \(.timeouts) timeouts in all; \([.nodes[] | select(.state == "ok")] | length) devices ok, \([.nodes[].modules.present // 0] | add) modules read"' "$1-hw.json"
			echo "/api/v1/hardware: $(stat -c %s "$1-hw.json") bytes in $(cat "$1-time.txt") s; peak RSS after it: $(awk '/VmHWM/ { print $2, $3 }' "/proc/$pid/status")"
		fi
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	}
	run with 30
	run without 0
	exit 0
fi

hosts=${HOSTS:-10368}
bench_net 3 "$hosts" "$work/fattree3-$hosts.net"
awk '/^Switch/ { print "vendid=0x2c9"; print "devid=0xd2f0" }
	/^(Ca|Hca)/ { print "vendid=0x2c9"; print "devid=0x101b" } { print }' \
	"$work/fattree3-$hosts.net" >"$work/fattree3-$hosts-nvidia.net"
exec "$top/tests/lib/with-fabric.sh" bench_hw "$work/fattree3-$hosts-nvidia.net" \
	--sm "$(printf 'node%04d' "$hosts")" --osm-args "-s 0" --ibsim-args "$flags" \
	--timeout 900 -- "$top/tests/bench/hw.sh" "$build"
