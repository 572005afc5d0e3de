#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Engine throughput benchmark on the 2048-host 2-level fat tree.
#   tests/bench/engine.sh [BUILD_DIR]       (default: build)
# Builds nothing itself: run `cmake --build BUILD_DIR` first.
. "$(dirname "$0")/lib.sh"
bench_net 2 2048 "$work/fattree-2048.net"
exec "$top/tests/lib/with-fabric.sh" bench_engine "$work/fattree-2048.net" \
	--sm node2048 --osm-args "-s 0" --ibsim-args "$flags" --timeout 120 \
	-- "$top/tests/lib/preloaded.sh" "$build/tests/bench_engine" "$@"
