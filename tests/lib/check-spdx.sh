#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every tracked source file (C, shell, Python, CMake) names its licence
# in an SPDX line near its top (LICENSE: BSD-2-Clause). Third-party
# files (mib/ietf), fixtures and debian/ are left out.
# usage: check-spdx.sh SOURCE_DIR
cd "$1" || exit 2
bad=0
for f in $(git ls-files '*.c' '*.h' '*.sh' '*.py' '*.cmake' 'CMakeLists.txt' '*/CMakeLists.txt'); do
	case $f in mib/ietf/* | tests/fixtures/* | debian/*) continue ;; esac
	if ! head -n 3 "$f" | grep -q 'SPDX-License-Identifier: BSD-2-Clause'; then
		echo "no SPDX line in the first 3 lines: $f"
		bad=1
	fi
done
exit $bad
