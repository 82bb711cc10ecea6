#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Issue 4's host validation: calibrate this machine, run the real perf bench
# commands (RUNS times each), simulate the same commands on the calibrated
# machine, and print real medians beside schedlab's figures.
#
#   bench/validation/host-pipes.sh [BUILD_DIR] [RUNS]
#
# Calibration and real runs belong to the same sitting: a VM's cross-CPU
# wakeup cost changes with the host's load (docs/validation.md).
set -euo pipefail
build=${1:-build}
runs=${2:-5}
schedlab="$build/src/cli/schedlab"
[[ -x $schedlab ]] || { echo "host-pipes.sh: $schedlab not found; build first (make)" >&2; exit 2; }
command -v perf >/dev/null || { echo "host-pipes.sh: perf not installed (apt install linux-perf)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$schedlab" calibrate --output "$out/host.json" >"$out/calibrate.txt" 2>&1 ||
    { cat "$out/calibrate.txt" >&2; exit 1; }
echo "calibrated: $out/host.json ($(grep -c '' "$out/host.json") lines)"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
real_value() { # perf bench output -> the figure
    case $1 in
    pipe) awk '/usecs\/op/ {print $1}' ;;
    *) awk '/Total time/ {print $3}' ;;
    esac
}

declare -A cmd=(
    [pipe]="pipe -l 100000"
    [g1p]="messaging -g 1 -p" [g2p]="messaging -g 2 -p" [g4p]="messaging -g 4 -p"
    [g1]="messaging -g 1" [g2]="messaging -g 2" [g4]="messaging -g 4"
)
order=(pipe g1p g2p g4p g1 g2 g4)
printf '| benchmark | real runs | real median | schedlab | difference |\n|---|---|---|---|---|\n'
for k in "${order[@]}"; do
    vals=()
    for ((i = 0; i < runs; i++)); do
        vals+=("$(perf bench sched ${cmd[$k]} 2>&1 | real_value "${cmd[$k]%% *}")")
    done
    real=$(printf '%s\n' "${vals[@]}" | median)
    sim=$("$schedlab" run --machine "$out/host.json" --kernel 6.6 -- perf bench sched ${cmd[$k]} 2>/dev/null |
        real_value "${cmd[$k]%% *}")
    diff=$(awk -v r="$real" -v s="$sim" 'BEGIN {printf "%+.0f%%", (s - r) / r * 100}')
    unit=$([[ $k == pipe ]] && echo "usecs/op" || echo "s")
    printf '| %s (%s) | %s | %s | %s | %s |\n' "${cmd[$k]}" "$unit" "${vals[*]}" "$real" "$sim" "$diff"
done
grep -E '^(ipi_wakeup|ipi_send|cstate_c1_exit|cstate_polls|context_switch|wakeup|pipe_write|pipe_read) ' "$out/calibrate.txt" | cut -c1-60
