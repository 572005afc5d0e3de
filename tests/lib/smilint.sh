#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# smilint.sh SMILINT MIBFILE: lint MIBFILE at level 6 against the SMIv2
# modules in mib/ietf; fail on any output, since smilint exits 0 even
# when it reports errors.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
command -v "$1" >/dev/null || { echo "smilint.sh: $1 not found (Debian: smitools)"; exit 1; }
out=$(SMIPATH="$here/../mib/ietf" "$1" -l 6 "$2" 2>&1)
rc=$?
if [ -n "$out" ] || [ $rc != 0 ]; then
	printf '%s\n' "$out"
	echo "smilint -l 6: exit $rc, $(printf '%s\n' "$out" | grep -c .) lines"
	exit 1
fi
echo "smilint -l 6 $(basename "$2"): nothing to report"
