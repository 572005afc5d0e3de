# Sourced by the shell tests: "ok"/"not ok" lines and the closing count,
# "N passed, N failed", which ctest's log and CI read.
fails=0 passes=0
ok() { passes=$((passes + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; }
# check "what it shows" command args...: ok when the command succeeds
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# the closing line; the exit status says whether all passed
finish() { echo "$passes passed, $fails failed"; [ "$fails" = 0 ]; }
# spawn NODE CMD...: run CMD on the simulated NODE, in the background
# only (`spawn node0002 cmd &`): the exec makes $! the command's own PID,
# so the test stops exactly that process.
spawn() { local h=$1; shift; SIM_HOST=$h LD_PRELOAD=$IBW_SIM_PRELOAD exec "$@"; }
