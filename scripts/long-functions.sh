#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Functions in src/ longer than N lines (default 150), tests and test fixtures not counted,
# counted from the definition's first line to its closing brace (Universal Ctags' end: field).
# Prints "LINES FILE:LINE NAME", longest first; exits 1 when there is any.
# Usage: scripts/long-functions.sh [N]   (run from the repository's top directory)
set -eu
n=${1:-150}
command -v ctags >/dev/null || { echo "long-functions.sh: needs Universal Ctags (ctags)" >&2; exit 2; }
out=$(git ls-files 'src/*.cc' 'src/*.h' | grep -v -e '_test\.cc$' -e '/testlib\.' |
    xargs ctags -x --_xformat='%{line} %{end} %N %F' --kinds-c++=f --fields=+ne -o - |
    awk -v n="$n" '{ len = $2 - $1 + 1; if (len > n) print len, $4 ":" $1, $3 }' | sort -rn)
[ -z "$out" ] && exit 0
echo "$out"
exit 1
