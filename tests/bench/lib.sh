# SPDX-License-Identifier: BSD-2-Clause
# Sourced first by the benchmark scripts: strict mode, and
#   top    the source tree
#   build  the build directory (the script's first argument, else
#          top/build)
#   work   $BENCH_WORK, else build/bench-work; made
# bench_net LEVELS HOSTS FILE: the fat tree of LEVELS levels and HOSTS
# hosts written to FILE (ibw-fattree), its ibsim flags in $flags, and
# the guard and work directory exported for tests/lib/with-fabric.sh.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
work=${BENCH_WORK:-$build/bench-work}
mkdir -p "$work"

bench_net() {
	"$build/tests/ibw-fattree" --levels "$1" --hosts "$2" >"$3"
	flags=$("$build/tests/ibw-fattree" --levels "$1" --hosts "$2" --flags)
	export IBW_SIMGUARD=$build/tests/libibw_simguard.so IBW_TEST_WORK=$work
}
