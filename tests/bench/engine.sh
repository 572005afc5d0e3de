#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Engine throughput benchmark on the 2048-host 2-level fat tree.
#   tests/bench/engine.sh [BUILD_DIR]       (default: build)
# Builds nothing itself: run `cmake --build BUILD_DIR` first.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
work=$build/bench-work
mkdir -p "$work"
"$build/tests/ibw-fattree" --levels 2 --hosts 2048 >"$work/fattree-2048.net"
flags=$("$build/tests/ibw-fattree" --levels 2 --hosts 2048 --flags)
export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
exec "$top/tests/lib/with-fabric.sh" bench_engine "$work/fattree-2048.net" \
	--sm node2048 --osm-args "-s 0" --ibsim-args "$flags" --timeout 120 \
	-- "$top/tests/lib/preloaded.sh" "$build/tests/bench_engine" "$@"
