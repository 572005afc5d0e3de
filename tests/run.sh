#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Install what the tests need, build from scratch and run every test.
#
#   tests/run.sh            three builds: a sanitizer (ASan+UBSan) build
#                           running every test but style, packaging,
#                           runsh_fails (it tests this script, not C)
#                           and the release ones (the default build's);
#                           a ThreadSanitizer build of the unit tests
#                           and the tests labelled tsan (the HTTP
#                           server's threads against the probe loop);
#                           and the default build, the one that ships,
#                           running the unit, style, packaging (the .deb
#                           and the RPM from the release tarball) and
#                           selfcheck tests and the integration tests
#                           labelled release (tests/CMakeLists.txt says
#                           which and why): every integration test runs
#                           once, under the sanitizers or, for those,
#                           in the build that ships
#   IBW_DEFAULT_ALL=1 tests/run.sh   the default build runs every test too
#                           (but label big's: ctest -L big in a build)
#   IBW_NO_SANITIZE=1 tests/run.sh   skip the sanitizer build
#   IBW_NO_TSAN=1 tests/run.sh       skip the ThreadSanitizer build
#
# Exits non-zero on any failure; the last line is ctest's summary.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

"$top/deploy/install-deps.sh"

jobs=$(nproc 2>/dev/null || echo 2)
status=0

# Each step is checked by hand: run_suite is called from `||`, where bash
# ignores `set -e`, so a failed configure would otherwise go on to a
# ctest that finds no tests and exits 0. --no-tests=error makes a run
# with nothing registered fail too.
run_suite() { # run_suite BUILD_DIR [cmake args...]
	local dir=$1; shift
	rm -rf "$dir"
	cmake -S "$top" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null ||
		{ echo "run.sh: configure failed ($dir)" >&2; return 1; }
	cmake --build "$dir" -j "$jobs" ||
		{ echo "run.sh: build failed ($dir)" >&2; return 1; }
	(cd "$dir" && ctest --output-on-failure --no-tests=error -j "$jobs" \
		--timeout 600 "${CTEST_ARGS[@]}")
}

if [ -z "${IBW_NO_SANITIZE:-}" ]; then
	echo "== sanitizer build (ASan+UBSan) =="
	CTEST_ARGS=(-LE 'style|packaging|selfcheck|release|big')
	run_suite "$top/build-test-asan" -DIBW_SANITIZE=ON || status=1
fi

if [ -z "${IBW_NO_TSAN:-}" ]; then
	echo "== ThreadSanitizer build (the HTTP server's threads) =="
	# One at a time: the agent runs several times slower under TSan,
	# and the timing of http_abuse's probe flood and of /healthz's
	# freshness (3 sweeps of 1 s) does not hold with another test
	# beside it on 2 cores. About 2.5 min on 2 cores, build included.
	CTEST_ARGS=(-j 1 -L '^(unit|tsan)$')
	run_suite "$top/build-test-tsan" -DIBW_TSAN=ON || status=1
fi

echo "== default build =="
if [ -n "${IBW_DEFAULT_ALL:-}" ] || [ -n "${IBW_NO_SANITIZE:-}" ]; then
	# all but the 57,024-port tree's minutes (ctest -L big)
	CTEST_ARGS=(-LE '^big$')
else
	CTEST_ARGS=(-L '^(unit|style|packaging|selfcheck|release)$')
fi
run_suite "$top/build-test" || status=1
exit $status
