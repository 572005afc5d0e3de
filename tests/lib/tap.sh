# Sourced by the shell tests: "ok"/"not ok" lines and the closing count,
# "N passed, N failed", which ctest's log and CI read.
fails=0 passes=0
ok() { passes=$((passes + 1)); echo "ok - $*"; }
bad() { fails=$((fails + 1)); echo "not ok - $*"; }
# check "what it shows" command args...: ok when the command succeeds
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
# the closing line; the exit status says whether all passed. Daemons
# the test started log here: under the sanitizer build a report lands in
# their log, not in the test's exit status, so any report fails the test.
finish() {
	local f
	for f in $(grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' ./*.log ./*.out 2>/dev/null); do
		bad "sanitizer report in $f: $(grep -m1 -E 'Sanitizer|runtime error:' "$f")"
	done
	echo "$passes passed, $fails failed"
	[ "$fails" = 0 ]
}
# jq -e fails when it produced no result at all, as jq 1.7 does (exit
# 4). jq 1.6 exits 0 there, so `check "..." jq -e COND file.json` passed
# whenever curl had written nothing to file.json: a test that could not
# fail when the agent did not answer.
jq() {
	local a e=0 out rc
	for a in "$@"; do
		case $a in
		--exit-status) e=1 ;;
		--*) ;;
		-*e*) e=1 ;;
		esac
	done
	[ $e = 1 ] || { command jq "$@"; return; }
	out=$(command jq "$@")
	rc=$?
	[ -n "$out" ] || return 4
	printf '%s\n' "$out"
	return $rc
}
# jqe FILTER...: jq -e on standard input, failing when the input is
# empty (jq 1.6 exits 0 on no input: a wait loop on `curl | jq -e` would
# stop at once while the daemon is not listening yet).
jqe() { local in; in=$(cat); [ -n "$in" ] && jq -e "$@" <<<"$in" >/dev/null 2>&1; }
# spawn NODE CMD...: run CMD on the simulated NODE, in the background
# only (`spawn node0002 cmd &`): the exec makes $! the command's own PID,
# so the test stops exactly that process.
spawn() { local h=$1; shift; SIM_HOST=$h LD_PRELOAD=$IBW_SIM_PRELOAD exec "$@"; }
# stop PID...: SIGTERM, then SIGKILL whatever is still there after 5 s
# (under the simulator a process can hang in libumad2sim's own exit
# handler after ibwatchd itself has finished). A zombie counts as gone.
stop() {
	local p i alive
	kill -TERM "$@" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		alive=0
		for p in "$@"; do
			[ -n "$(tr -d '\0' 2>/dev/null <"/proc/$p/cmdline")" ] && alive=1
		done
		[ $alive = 0 ] && return 0
		sleep 0.1
	done
	kill -KILL "$@" 2>/dev/null
	return 0
}
