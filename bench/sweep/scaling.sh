#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# How a sweep of independent runs scales with MPI ranks (issue 19: within 10% of
# linear on this machine's cores), and with --jobs threads in one process for
# comparison. One sweep of RUNS equal runs (perf bench sched messaging -g 8 -l 500
# on milan-2s, about 1.1 s of CPU each) into a fresh store per measurement, for 1 to
# nproc ranks (mpirun -np N, one run at a time per rank) and threads (--jobs N);
# each configuration REPS times, interleaved, the median wall time reported with the
# speedup over 1 and the efficiency (speedup / N). The load average before and after
# says whether the machine was quiet.
#
#   bench/sweep/scaling.sh [--build DIR] [--runs RUNS] [--reps REPS]
set -euo pipefail

build=build
runs=16
reps=3
while [[ $# -gt 0 ]]; do
    case $1 in
    --build) build=$2; shift ;;
    --runs) runs=$2; shift ;;
    --reps) reps=$2; shift ;;
    -h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "scaling.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "scaling.sh: --runs '$runs' is not a positive integer" >&2; exit 2; }
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "scaling.sh: --reps '$reps' is not a positive integer" >&2; exit 2; }
schedlab="$build/src/cli/schedlab"
[[ -x $schedlab ]] || { echo "scaling.sh: $schedlab not found; build first" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "scaling.sh: mpirun not found (openmpi-bin)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/spec.toml" <<SPEC
name = "scaling"
machines = ["milan-2s"]
kernels = ["6.6"]
runs = $runs
check = "sampled"

[[benchmarks]]
command = "perf bench sched messaging -g 8 -l 500"
SPEC

cores=$(nproc)
echo "# $runs runs of 'perf bench sched messaging -g 8 -l 500' on milan-2s; $cores cores"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A times=()
for ((rep = 1; rep <= reps; rep++)); do
    for ((n = 1; n <= cores; n++)); do
        for how in mpi jobs; do
            rm -f "$dir"/store.sqlite*
            start=$(date +%s.%N)
            if [[ $how == mpi ]]; then
                mpirun -np "$n" "$schedlab" sweep "$dir/spec.toml" --store "$dir/store.sqlite" \
                    > /dev/null 2>&1
            else
                "$schedlab" sweep "$dir/spec.toml" --store "$dir/store.sqlite" --jobs "$n" \
                    > /dev/null 2>&1
            fi
            end=$(date +%s.%N)
            times[$how,$n]+="$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') "
        done
    done
done
echo "# load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf "%-6s %5s %10s %8s %10s  %s\n" how N "wall (s)" speedup efficiency "all walls (s)"
for how in mpi jobs; do
    base=$(echo "${times[$how,1]}" | median)
    for ((n = 1; n <= cores; n++)); do
        t=$(echo "${times[$how,$n]}" | median)
        awk -v how="$how" -v n="$n" -v t="$t" -v b="$base" -v all="${times[$how,$n]}" \
            'BEGIN {printf "%-6s %5d %10.2f %8.2f %9.0f%%  %s\n", how, n, t, b / t, 100 * b / t / n, all}'
    done
done
