#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# How a sweep of independent runs scales with MPI ranks (issue 19: within 10% of
# linear on this machine's cores), and with --jobs threads in one process for
# comparison. One sweep of RUNS equal runs (perf bench sched messaging -g 8 -l 500
# on milan-2s, about 0.8 s of CPU each) into a fresh store per measurement, for 1 to
# nproc ranks (mpirun -np N, one run at a time per rank) and threads (--jobs N);
# each configuration REPS times, interleaved; medians reported.
#
# Two figures per configuration:
# - wall: the elapsed time, its speedup over N = 1 and efficiency (speedup / N).
#   Meaningful only on a quiet machine: with sched_autogroup (Debian's default), all
#   of one session's processes share one group's CPU time, so on a machine where
#   other sessions keep the cores busy the sweep gets the same share whatever N is,
#   and the wall speedup says nothing about the sweep.
# - CPU: user + system time of every process (mpirun and the ranks, or the one
#   process), its growth over N = 1 (what MPI, packing results and the store cost),
#   and the work efficiency CPU(N = 1) / CPU(N). Runs are handed out one at a time
#   to whichever rank asks, so on N free cores no rank idles until the last runs
#   are in flight; workers wait for rank 0 in MPI_Recv, which Open MPI spins in, so
#   waiting counts as CPU time here rather than vanishing. On a quiet machine the
#   wall efficiency is then about the work efficiency times the tail's share,
#   (RUNS / N) / ceil(RUNS / N) (1 for 16 runs on 2 or 4 cores), less what cores
#   sharing caches and memory bandwidth cost each other, which only the wall
#   figure shows. `runs per rank` is rank 0's count; on a busy machine it follows
#   which rank got the CPU, not the design.
# The load average before and after says whether the machine was quiet.
#
#   bench/sweep/scaling.sh [--build DIR] [--runs RUNS] [--reps REPS] [--max-n N]
set -euo pipefail

build=build
runs=16
reps=3
max_n=$(nproc)
while [[ $# -gt 0 ]]; do
    case $1 in
    --build) build=$2; shift ;;
    --runs) runs=$2; shift ;;
    --reps) reps=$2; shift ;;
    --max-n) max_n=$2; shift ;;
    -h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "scaling.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "scaling.sh: --runs '$runs' is not a positive integer" >&2; exit 2; }
[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "scaling.sh: --reps '$reps' is not a positive integer" >&2; exit 2; }
[[ $max_n =~ ^[1-9][0-9]*$ ]] || { echo "scaling.sh: --max-n '$max_n' is not a positive integer" >&2; exit 2; }
schedlab="$build/src/cli/schedlab"
[[ -x $schedlab ]] || { echo "scaling.sh: $schedlab not found; build first" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "scaling.sh: mpirun not found (openmpi-bin)" >&2; exit 2; }
[[ -x /usr/bin/time ]] || { echo "scaling.sh: /usr/bin/time not found (Debian package time)" >&2; exit 2; }
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

cores=$max_n
echo "# $runs runs of 'perf bench sched messaging -g 8 -l 500' on milan-2s; N = 1 to $cores ($(nproc) cores)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A walls=() cpus=() split=()
cpu_of() { awk -v tag="$1" '$1 == tag {print $2 + $3}' "$2"; }
for ((rep = 1; rep <= reps; rep++)); do
    for ((n = 1; n <= cores; n++)); do
        for how in mpi jobs; do
            rm -f "$dir"/store.sqlite*
            start=$(date +%s.%N)
            if [[ $how == mpi ]]; then
                /usr/bin/time -f "all-cpu %U %S" -o "$dir/all" mpirun -np "$n" "$schedlab" sweep \
                    "$dir/spec.toml" --store "$dir/store.sqlite" > /dev/null 2> "$dir/stderr"
                split[$n]+="$(sed -n 's/^schedlab: runs per rank ([^)]*): //p' "$dir/stderr" | tr ' ' '/'),"
            else
                /usr/bin/time -f "all-cpu %U %S" -o "$dir/all" "$schedlab" sweep "$dir/spec.toml" \
                    --store "$dir/store.sqlite" --jobs "$n" > /dev/null 2> "$dir/stderr"
            fi
            end=$(date +%s.%N)
            walls[$how,$n]+="$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.2f", b - a}') "
            cpus[$how,$n]+="$(cpu_of all-cpu "$dir/all") "
        done
    done
done
echo "# load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf "%-5s %3s %9s %8s %6s  %8s %7s %9s  %-22s %s\n" how N "wall (s)" speedup "eff." \
    "CPU (s)" "CPU +%" "work eff." "walls (s)" "runs per rank"
for how in mpi jobs; do
    base=$(echo "${walls[$how,1]}" | median)
    base_cpu=$(echo "${cpus[$how,1]}" | median)
    for ((n = 1; n <= cores; n++)); do
        t=$(echo "${walls[$how,$n]}" | median)
        c=$(echo "${cpus[$how,$n]}" | median)
        per_rank=-
        [[ $how == mpi && -n ${split[$n]//,/} ]] && per_rank=${split[$n]%,} # none printed for 1 rank
        awk -v how="$how" -v n="$n" -v t="$t" -v b="$base" -v c="$c" -v bc="$base_cpu" \
            -v all="${walls[$how,$n]% }" -v per_rank="$per_rank" 'BEGIN {
                printf "%-5s %3d %9.2f %8.2f %5.0f%%  %8.2f %6.1f%% %8.0f%%  %-22s %s\n", how, n, t,
                    b / t, 100 * b / t / n, c, 100 * (c / bc - 1), 100 * bc / c, all, per_rank}'
    done
done
