#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# dist.sh SRCDIR NAME-VERSION SPEC OUT: the release tarball OUT, made by
# `cmake --build build --target dist`: the tracked files of SRCDIR as
# they are in its work tree (git stash create records local changes
# without touching the tree or the stash list; with none, HEAD), under
# NAME-VERSION/, and the RPM spec SPEC at the top, where `rpmbuild -tb`
# looks for it.
set -eu
src=$1 prefix=$2 spec=$3 out=$4
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 ||
	{ echo "dist: $src is not a git work tree" >&2; exit 1; }
tree=$(git -C "$src" stash create)
exec git -C "$src" archive --format=tar.gz --prefix="$prefix/" \
	--add-file="$spec" -o "$out" "${tree:-HEAD}"
