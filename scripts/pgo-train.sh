#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The training runs of profile-guided optimisation (`make pgo`, docs/performance.md, "LTO and
# PGO"): short runs of the instrumented `schedlab` of BUILD_DIR (configured with
# -DSCHEDLAB_PGO=generate) that write the profiles -fprofile-use then reads.
#
#   scripts/pgo-train.sh BUILD_DIR
#
# The runs: the four cases of bench/schedlab_speed (the speed table of docs/performance.md),
# shortened, so the profile weighs the fair class's wakeup, switch and balancing paths and the
# messaging and tbench workloads as those runs do; then one run of each golden digest case
# (tests/golden/golden_digest_test.cc: other kernels and patch sets, netperf, schbench, rt-app,
# context_switch1, make, stream, a 1024-CPU machine file) and one of the ext class, so the
# paths they take are not compiled as never run: GCC takes a function of a profiled file that
# no run reached for cold and optimises it for size (a file no run reached at all has no
# profile and is compiled as without PGO). About 5 user-seconds uninstrumented, 8.4 in the
# instrumented build (2026-12-05).
set -euo pipefail

build="${1:?usage: scripts/pgo-train.sh BUILD_DIR}"
schedlab="$build/src/cli/schedlab"
[[ -x $schedlab ]] || { echo "pgo-train.sh: $schedlab not found: build it first" >&2; exit 2; }
golden="$(cd "$(dirname "$0")/../tests/golden" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# run MACHINE KERNEL TIME_LIMIT BENCHMARK ARGS...
run() {
    local machine=$1 kernel=$2 limit=$3
    shift 3
    echo "pgo-train.sh: --machine $machine --kernel $kernel --time-limit $limit -- $*"
    # Exit status 3: the run reached the time limit, as the cut runs do (src/cli/cli_main.cc).
    local rc=0
    "$schedlab" run --machine "$machine" --kernel "$kernel" --seed 1 --time-limit "$limit" \
        -- "$@" >/dev/null 2>"$tmp/stderr" || rc=$?
    if ((rc != 0 && rc != 3)); then
        cat "$tmp/stderr" >&2
        echo "pgo-train.sh: the run above failed (exit status $rc)" >&2
        exit 1
    fi
}

# The speed table's cases (bench/speed_cases.cc), shortened.
run bergamo-2s 6.6 0.25 tbench -t 0.02 256
run milan-2s 6.6 600 perf bench sched messaging -g 20 -p -l 100
run ryzen-7950x 6.6 600 perf bench sched messaging -g 4 -p -l 200
run "$golden/bergamo-4s-1024.json" 6.6 0.1 tbench -t 0.02 512

# The golden digest cases.
run ryzen-7950x 6.6 600 perf bench sched messaging -g 2 -p -l 50
run ryzen-7950x 5.15 600 perf bench sched messaging -g 2 -l 50
run skylake-18c 6.1 600 perf bench sched pipe -l 20000
run ryzen-7950x 6.18+NO_RUN_TO_PARITY 600 perf bench sched pipe -l 10000 -T
run milan-2s 6.12 0.3 tbench -t 2 8
run bergamo-2s tip-2023-08+shared_runq_v3 0.4 tbench -t 0.02 16
run bergamo-2s tip-2023-08+shared_runq_v3_noopt+tg_ratelimit 600 netperf -t TCP_RR --instances 256 -l -500
run spr-2s tip-2023-02+sis_short_v6 600 netperf -t TCP_RR --instances 112 -l -1000
run milan-2s 6.1 600 netperf -t UDP_RR --instances 64 -l -1000
run spr-2s tip-2023-02 600 context_switch1_processes -t 56 -s 1 --warmup 0 --interval 0.01
run icelake-2s 6.18 600 schbench -m 2 -t 16 -r 1 -w 0
run bergamo-2s tip-2023-12 600 schbench --variant=old -m 2 -t 32 -r 1
run skylake-18c 5.15-rc3+stacking 600 perf bench sched messaging -g 4 -l 100
run milan-2s tip-2023-12+shared_runq_v4 600 perf bench sched messaging -g 8 -t -l 50
run ryzen-7950x 6.5 600 rt-app "$golden/rtapp-mix.json" --duration 0.3
run ryzen-7950x 6.6 600 make -j 32 --objects 200
run milan-2s 6.6 600 stream --threads 32 --array-size 1000000 --ntimes 2
run "$golden/bergamo-4s-1024.json" 6.6 600 perf bench sched messaging -g 16 -l 20
run "$golden/bergamo-4s-1024.json" 6.6 0.25 tbench -t 0.02 64

# The ext class (a built-in policy).
run milan-2s 6.12+ext:simple 600 perf bench sched messaging -g 4 -l 50
echo "pgo-train.sh: done"
