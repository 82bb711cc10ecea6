#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# One `perf bench sched messaging` run traced on this machine beside the same
# command simulated, through the same statistics (sched-trace-stats.py): switch
# states, run lengths, where wakeups went, fork placement, idle periods.
#
#   bench/validation/trace-messaging.sh [BUILD_DIR] [MACHINE] [KERNEL] -- MESSAGING ARGS
#   e.g. bench/validation/trace-messaging.sh build host 6.18 -- -g 4
#
# Needs perf with the sched tracepoints (root, tracefs). Output of earlier sittings is in
# the git history of docs/validation.md ("This machine").
set -euo pipefail
build=build machine=host kernel=6.18
[[ $# -gt 0 && $1 != -- ]] && { build=$1; shift; }
[[ $# -gt 0 && $1 != -- ]] && { machine=$1; shift; }
[[ $# -gt 0 && $1 != -- ]] && { kernel=$1; shift; }
[[ ${1:-} == -- ]] && shift
args=("$@")
schedlab="$build/src/cli/schedlab"
here=$(dirname "$0")
[[ -x $schedlab ]] || { echo "trace-messaging.sh: $schedlab not found; build first (make)" >&2; exit 2; }
command -v perf >/dev/null || { echo "trace-messaging.sh: perf not installed (apt install linux-perf)" >&2; exit 2; }
groups=10 # perf's default
for ((i = 0; i < ${#args[@]}; i++)); do
    [[ ${args[i]} == -g ]] && groups=${args[i + 1]}
    [[ ${args[i]} == --group=* ]] && groups=${args[i]#--group=}
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== real: perf bench sched messaging ${args[*]}"
perf record -q -o "$out/real.data" -a -e sched:sched_switch -e sched:sched_waking \
    -e sched:sched_wakeup -e sched:sched_wakeup_new -- perf bench sched messaging "${args[@]}" |
    grep 'Total time'
perf script -i "$out/real.data" >"$out/real.txt" 2>/dev/null
python3 "$here/sched-trace-stats.py" "$out/real.txt" "$groups"
echo
echo "== schedlab --machine $machine --kernel $kernel: perf bench sched messaging ${args[*]}"
"$schedlab" run --machine "$machine" --kernel "$kernel" --trace "$out/sim.txt" --no-summary -- \
    perf bench sched messaging "${args[@]}" | grep 'Total time'
python3 "$here/sched-trace-stats.py" "$out/sim.txt" "$groups"
