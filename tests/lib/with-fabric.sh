#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Run a test command against a fresh simulated fabric, then stop it.
#
#   with-fabric.sh NAME NETFILE [simfabric start options] -- CMD [ARGS]
#
# The fabric lives in $IBW_TEST_WORK/NAME (default: ./test-work/NAME).
# CMD runs in the fabric's scratch directory (umad2sim writes its fake
# sysfs into the working directory) with the variables of
# `simfabric.sh env` exported, plus IBW_SIMFABRIC (this test bed's
# script). It decides itself which child processes get LD_PRELOAD.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 4 ] || { echo "usage: with-fabric.sh NAME NETFILE [opts] -- CMD" >&2; exit 2; }
name=$1 net=$2; shift 2
opts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ "${1:-}" = "--" ] || { echo "with-fabric.sh: missing -- before the command" >&2; exit 2; }
shift

dir=${IBW_TEST_WORK:-$PWD/test-work}/$name
"$here/simfabric.sh" stop "$dir" 2>/dev/null
rm -rf "$dir"
child=""
trap '"$here/simfabric.sh" stop "$dir"' EXIT
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; exit 130' INT TERM
"$here/simfabric.sh" start "$dir" "$net" "${opts[@]}" || exit 1
# shellcheck disable=SC1091
. "$dir/env"
export IBW_SIMFABRIC="$here/simfabric.sh"
cd "$dir/work" || exit 1
# In the background so that a signal (a ctest timeout) reaches the trap
# at once rather than after the command ends.
"$@" &
child=$!
wait "$child"
