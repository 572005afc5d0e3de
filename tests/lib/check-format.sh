#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every tracked C file is formatted as .clang-format says.
# usage: check-format.sh CLANG_FORMAT SOURCE_DIR
cf=$1 src=$2
cd "$src" || exit 2
bad=0
for f in $(git ls-files '*.c' '*.h' 2>/dev/null || find core http agent tests -name '*.[ch]'); do
	if ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "not clang-formatted: $f (run: clang-format -i $f)"
		bad=1
	fi
done
exit $bad
