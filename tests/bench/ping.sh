#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Ping round benchmark: one pma ping to every CA port of the 2048-host
# 2-level fat tree, as the pinger sends it.
#   tests/bench/ping.sh [BUILD_DIR] [ROUNDS]
. "$(dirname "$0")/lib.sh"
rounds=${2:-5}
bench_net 2 2048 "$work/fattree-2048.net"
exec "$top/tests/lib/with-fabric.sh" bench_ping "$work/fattree-2048.net" \
	--sm node2048 --osm-args "-s 0" --ibsim-args "$flags" --timeout 120 \
	-- "$top/tests/lib/preloaded.sh" "$build/tests/bench_ping" --rounds "$rounds"
