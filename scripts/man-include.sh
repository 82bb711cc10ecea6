#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The help2man include file for schedlab.1: each subcommand's --help as a COMMANDS section,
# and where the installed data lives. Used by the build (src/cli/CMakeLists.txt).
#   scripts/man-include.sh SCHEDLAB OUT
set -euo pipefail
bin=$1
out=$2
# The subcommands as `schedlab --help` lists them (CLI11's "Subcommands:" section), so that a
# new one is never left out of the man page.
help=$("$bin" --help)
cmds=$(awk '/^Subcommands:$/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' \
       <<<"$help")
[ -n "$cmds" ] || { echo "man-include.sh: no subcommands in $bin --help" >&2; exit 1; }
{
  echo "[COMMANDS]"
  for cmd in $cmds; do
    echo ".SS $cmd"
    echo ".nf"
    # roff: a leading '.' or "'" starts a request; backslashes escape.
    "$bin" "$cmd" --help | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
    echo ".fi"
  done
  echo "[EXIT STATUS]"
  echo "0 success; 2 bad input (the message names the flag, file, line or key); 3 a run did"
  echo "not finish within its simulated \\fB\\-\\-time\\-limit\\fR. A simulator bug aborts with"
  echo "the scheduler state and the seed."
  echo "[FILES]"
  echo ".TP"
  echo ".I PREFIX/share/schedlab/reference"
  echo "the published tables \\fBschedlab fidelity\\fR scores against."
  echo ".TP"
  echo ".I ~/.config/schedlab/host.json"
  echo "the machine file \\fBschedlab calibrate\\fR writes and the \\fBhost\\fR preset reads."
  echo "[SEE ALSO]"
  echo "README.md and docs/ in the source tree."
} > "$out"
