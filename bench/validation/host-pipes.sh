#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Issue 4's host validation: calibrate this machine, run the real perf bench
# commands (RUNS times each), simulate the same commands on the calibrated
# machine with each kernel profile given, and print the real medians beside
# schedlab's (the median over seeds 1..RUNS: a simulated run varies with its
# seed as a real one does from run to run).
#
#   bench/validation/host-pipes.sh [BUILD_DIR] [RUNS] [KERNELS]
#
# KERNELS is a space-separated list of --kernel specs (default "6.18 6.12": the
# host runs 6.18.y; 6.12 lacks NI_RANDOM).
#
# Calibration and real runs belong to the same sitting: a VM's cross-CPU
# wakeup cost changes with the host's load (docs/validation.md).
set -euo pipefail
build=${1:-build}
runs=${2:-5}
read -r -a kernels <<<"${3:-6.18 6.12}"
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
header="| benchmark | real runs | real median |"
rule="|---|---|---|"
for k in "${kernels[@]}"; do
    header+=" schedlab $k | difference |"
    rule+="---|---|"
done
printf '%s\n%s\n' "$header" "$rule"
for k in "${order[@]}"; do
    vals=()
    for ((i = 0; i < runs; i++)); do
        vals+=("$(perf bench sched ${cmd[$k]} 2>&1 | real_value "${cmd[$k]%% *}")")
    done
    real=$(printf '%s\n' "${vals[@]}" | median)
    unit=$([[ $k == pipe ]] && echo "usecs/op" || echo "s")
    row="| ${cmd[$k]} ($unit) | ${vals[*]} | $real |"
    for kern in "${kernels[@]}"; do
        sims=()
        for ((seed = 1; seed <= runs; seed++)); do
            sims+=("$("$schedlab" run --machine "$out/host.json" --kernel "$kern" --seed "$seed" -- \
                perf bench sched ${cmd[$k]} 2>/dev/null | real_value "${cmd[$k]%% *}")")
        done
        sim=$(printf '%s\n' "${sims[@]}" | median)
        diff=$(awk -v r="$real" -v s="$sim" 'BEGIN {printf "%+.0f%%", (s - r) / r * 100}')
        row+=" $sim | $diff |"
    done
    printf '%s\n' "$row"
done
grep -E '^(ipi_wakeup|ipi_send|cstate_c1_exit|cstate_polls|context_switch|wakeup|wakeup_remote_lines|pipe_write|pipe_read|socket_send|socket_recv|exit|line_llc) ' "$out/calibrate.txt" | cut -c1-60
