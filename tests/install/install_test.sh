#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `cmake --install` gives a schedlab that works from any directory with its data: the HTML
# report's chart libraries are built in (no node_modules), fidelity finds the installed
# reference tables, and the man page is there (issue 16, item 18).
#   tests/install/install_test.sh BUILD_DIR
set -euo pipefail
build=$(realpath "$1")
prefix=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$prefix" "$work"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cd "$work" # neither the source tree nor the build directory
export SCHEDLAB_STORE="$work/store.sqlite" # compare's default results store, not the user's
bin="$prefix/bin/schedlab"
"$bin" fidelity --help | grep -q "default: $prefix/share/schedlab/reference/shared-runq-v3-bergamo-2s" ||
  { echo "fidelity's default --reference is not the installed one"; exit 1; }
test -f "$prefix/share/schedlab/reference/shared-runq-v3-bergamo-2s/tbench.csv" ||
  { echo "reference tables not installed"; exit 1; }
if grep -q 'SCHEDLAB_HELP2MAN:FILEPATH=.*help2man$' "$build/CMakeCache.txt"; then
  man="$prefix/share/man/man1/schedlab.1"
  grep -q '^\.SH COMMANDS' "$man" ||
    { echo "man page missing or without its COMMANDS section"; exit 1; }
  # Every subcommand the CLI's help lists has its section there (scripts/man-include.sh).
  cmds=$("$bin" --help | sed -n '/^Subcommands:$/,/^$/s/^  \([a-z][a-z0-9_-]*\)  .*/\1/p')
  [ -n "$cmds" ] || { echo "no subcommands found in schedlab --help"; exit 1; }
  for cmd in $cmds; do
    grep -q "^\.SS $cmd\$" "$man" || { echo "man page: no section for the subcommand $cmd"; exit 1; }
  done
fi
"$bin" compare --machine ryzen-7950x --kernel 6.6 --kernel 6.5 --runs 2 --format amd \
  --html report.html -- perf bench sched pipe -l 100 >/dev/null 2>&1
grep -q "vegaEmbed" report.html && grep -q "data-charts-rendered" report.html ||
  { echo "the HTML report lacks its chart libraries"; exit 1; }
echo "install layout: ok ($prefix)"
