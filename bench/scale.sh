#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cost per event from 16 to 1024 CPUs at equal load per CPU (issue 14): machines of
# Bergamo-like 8-core CCXs with SMT2 (16 CPUs per LLC, up to 128 cores per socket, one
# NUMA node per socket, SLIT 10/32), hackbench with CPUs/16 groups and tbench with
# CPUs/2 clients, each case in a process of its own (build/bench/schedlab_speed).
#
#   bench/scale.sh [--build DIR] [--repeat N] [--cpus "16 32 ..."] [--kernel K]
#                  [--hackbench "ARGS"] [--tbench "ARGS"]
#
# Prints schedlab_speed's table (events, CPU s, ns/event, simulated s per CPU-s, peak
# RSS, bare-heap ratio) and then ns/event relative to the smallest machine.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build="$here/../build"
repeat=1
cpus_list="16 32 64 128 256 512 1024"
kernel="6.6"
hackbench_args="-p -l 100"
tbench_args="-t 0.1"

usage() {
    sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while [[ $# -gt 0 ]]; do
    case "$1" in
    --build) build="${2:?--build needs a directory}"; shift 2 ;;
    --repeat) repeat="${2:?--repeat needs a count}"; shift 2 ;;
    --cpus) cpus_list="${2:?--cpus needs a list}"; shift 2 ;;
    --kernel) kernel="${2:?--kernel needs a profile}"; shift 2 ;;
    --hackbench) hackbench_args="${2?--hackbench needs arguments}"; shift 2 ;;
    --tbench) tbench_args="${2?--tbench needs arguments}"; shift 2 ;;
    -h | --help) usage ;;
    *) echo "scale.sh: unknown argument '$1'" >&2; usage ;;
    esac
done

speed="$build/bench/schedlab_speed"
if [[ ! -x "$speed" ]]; then
    echo "scale.sh: $speed not found: build it first (cmake --build $build --target schedlab_speed)" >&2
    exit 2
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=bench/bergamo_like.sh
. "$here/bergamo_like.sh"

out="$tmp/table.txt"
first=1
for bench in hackbench tbench; do
    for cpus in $cpus_list; do
        f="$(bergamo_like_machine_file "$cpus" "$tmp" scale.sh)"
        if [[ $bench == hackbench ]]; then
            # shellcheck disable=SC2086
            argv=(perf bench sched messaging -g $((cpus / 16)) $hackbench_args)
            name="$cpus CPUs hackbench -g $((cpus / 16))"
        else
            # shellcheck disable=SC2086
            argv=(tbench $tbench_args $((cpus / 2)))
            name="$cpus CPUs tbench $((cpus / 2))"
        fi
        if ((first)); then
            "$speed" --repeat "$repeat" --name "$name" --machine "$f" --kernel "$kernel" -- "${argv[@]}" | tee -a "$out"
            first=0
        else
            "$speed" --repeat "$repeat" --name "$name" --machine "$f" --kernel "$kernel" -- "${argv[@]}" | tail -n 2 | tee -a "$out"
        fi
    done
done

echo
echo "ns per event relative to the smallest machine (hackbench: -g CPUs/16 $hackbench_args; tbench: $tbench_args, CPUs/2 clients)"
python3 - "$out" <<'EOF'
import re, sys
base = {}
for line in open(sys.argv[1]):
    m = re.match(r"(\d+) CPUs (hackbench -g \d+|tbench \d+)\s+(.*)", line)
    if not m:
        continue
    # after the name: CPUs events sim_s CPU_s Mev/CPUs sim/CPUs ns/ev ...
    ns = float(m.group(3).split()[6])
    bench = m.group(2).split()[0]
    base.setdefault(bench, ns)
    print(f"  {bench:9} {int(m.group(1)):5} CPUs  {ns:7.0f} ns/event  x{ns / base[bench]:.2f}")
EOF
