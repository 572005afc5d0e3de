#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The simulated-fabric test bed itself: two fabrics side by side, console
# commands with replies, clients under the preload, and a stop that ends
# exactly the processes it started.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/lib/tap.sh"
sf=$here/lib/simfabric.sh
net=/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca
work=${IBW_TEST_WORK:-$PWD/test-work}/testbed
a=$work/a b=$work/b

# running PID: alive and not a zombie (an orphan waits a moment for init)
running() { [ -n "$(tr -d '\0' 2>/dev/null <"/proc/$1/cmdline")" ]; }

cleanup() { "$sf" stop "$a"; "$sf" stop "$b"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
rm -rf "$work"

check "first fabric starts" "$sf" start "$a" "$net" --sm Hca1
check "second fabric starts beside it" "$sf" start "$b" "$net" --sm Hca2
sock_a=$(. "$a/env"; echo "$IBSIM_SOCKNAME")
sock_b=$(. "$b/env"; echo "$IBSIM_SOCKNAME")
check "each fabric has its own socket" [ "$sock_a" != "$sock_b" ]

# A client on fabric a sees the LID opensm gave it.
lid_a=$( (. "$a/env"; cd "$a/work" && SIM_HOST=Hca3 LD_PRELOAD=$IBW_SIM_PRELOAD smpquery -D portinfo 0 1 2>&1) | sed -n 's/^Lid:\.*//p')
check "a client on the fabric reads its port (lid '$lid_a')" bash -c "[ -n '$lid_a' ] && [ '$lid_a' -gt 0 ]"

reply=$("$sf" cmd "$a" 'Attached')
check "console command gets its reply" grep -q 'Client' <<<"$reply"
reply=$("$sf" cmd "$a" 'Unlink "Hca3"[1]')
check "Unlink answers" [ -n "$reply" ]
out=$( (. "$a/env"; cd "$a/work" && SIM_HOST=Hca1 LD_PRELOAD=$IBW_SIM_PRELOAD perfquery "$lid_a" 1 2>&1) ); rc=$?
gone() { [ "$1" -ne 0 ] || ! grep -q PortXmitData <<<"$2"; }
check "Unlink takes the host off the fabric (perfquery exit $rc)" gone $rc "$out"
"$sf" cmd "$a" 'Relink "Hca3"[1]' >/dev/null
"$sf" cmd "$a" 'PerformanceSet "Hca3"[1] PortCounters.SymbolErrorCounter=1234' >/dev/null
sym=""
for _ in $(seq 1 40); do
	sym=$( (. "$a/env"; cd "$a/work" && SIM_HOST=Hca1 LD_PRELOAD=$IBW_SIM_PRELOAD perfquery "$lid_a" 1 2>/dev/null) | sed -n 's/^SymbolErrorCounter:\.*//p')
	[ "$sym" = 1234 ] && break
	sleep 0.1
done
check "PerformanceSet shows in perfquery after Relink" [ "$sym" = 1234 ]

pids_a="$(cat "$a/opensm.pid") $(cat "$a/ibsim.pid")"
pids_b="$(cat "$b/opensm.pid") $(cat "$b/ibsim.pid")"
"$sf" stop "$a"
gone=1
for p in $pids_a; do running "$p" && gone=0; done
check "stop ends the fabric's processes" [ $gone = 1 ]
alive=1
for p in $pids_b; do running "$p" || alive=0; done
check "and leaves the other fabric alone" [ $alive = 1 ]
"$sf" stop "$b"

finish
