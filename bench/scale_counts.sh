#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Cost per event from 16 to 1024 CPUs (issue 14), counted instead of timed: for each
# machine size, `schedlab run` of tbench (CPUs/2 clients, bench/scale.sh's Bergamo-like
# machine files) under valgrind's cachegrind, cut at two simulated times; the counts of the
# shorter run (start-up: topology, programs, forks) are subtracted from the longer one's
# and divided by the events between them (events_fired of each run's --json: a run cut by
# --time-limit prints no summary). Prints instructions, D1 misses and LL misses per event,
# total and by function (the top growers between the first and the last size).
#
#   bench/scale_counts.sh [--build DIR] [--cpus "16 128 1024"] [--kernel K]
#                         [--from S] [--to S] [--tbench "ARGS"] [--top N] [--keep DIR]
#
# Counts do not depend on the host's load; a 1024-CPU case takes ~8 CPU-minutes.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build="$here/../build"
cpus_list="16 128 1024"
kernel="6.6"
from=0.02
to=0.22
tbench_args="-t 0.1"
top=25
keep=""
d1=49152,12,64  # as bench/cachegrind.sh: a Zen 4 or Golden Cove L1d
ll=1048576,8,64 # a Zen 4 L2

usage() {
    sed -n '4,15p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while [[ $# -gt 0 ]]; do
    case "$1" in
    --build) build="${2:?--build needs a directory}"; shift 2 ;;
    --cpus) cpus_list="${2:?--cpus needs a list}"; shift 2 ;;
    --kernel) kernel="${2:?--kernel needs a profile}"; shift 2 ;;
    --from) from="${2:?--from needs simulated seconds}"; shift 2 ;;
    --to) to="${2:?--to needs simulated seconds}"; shift 2 ;;
    --tbench) tbench_args="${2?--tbench needs arguments}"; shift 2 ;;
    --top) top="${2:?--top needs a count}"; shift 2 ;;
    --keep) keep="${2:?--keep needs a directory}"; shift 2 ;;
    -h | --help) usage ;;
    *) echo "scale_counts.sh: unknown argument '$1'" >&2; usage ;;
    esac
done
command -v valgrind >/dev/null || { echo "scale_counts.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
schedlab="$build/src/cli/schedlab"
[[ -x $schedlab ]] || { echo "scale_counts.sh: $schedlab not found: build it first" >&2; exit 2; }

if [[ -n $keep ]]; then
    mkdir -p "$keep"
    tmp="$keep"
else
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
fi

# shellcheck source=bench/bergamo_like.sh
. "$here/bergamo_like.sh"

echo "case: tbench $tbench_args CPUs/2, --kernel $kernel --seed 1, counted from $from to $to simulated s"
echo "cache: D1 $d1, LL $ll (size, associativity, line)"
for cpus in $cpus_list; do
    f="$(bergamo_like_machine_file "$cpus" "$tmp" scale_counts.sh)"
    for t in "$from" "$to"; do
        o="$tmp/cg-$cpus-$t"
        # shellcheck disable=SC2086
        valgrind --tool=cachegrind --cache-sim=yes --D1="$d1" --LL="$ll" --cachegrind-out-file="$o.cg" \
            "$schedlab" run --machine "$f" --kernel "$kernel" --seed 1 --time-limit "$t" --json "$o.json" \
            -- tbench $tbench_args $((cpus / 2)) >"$o.stdout" 2>"$o.stderr" || true
        [[ -s $o.json ]] || { echo "scale_counts.sh: no result for $cpus CPUs at $t s:" >&2; tail -5 "$o.stderr" >&2; exit 1; }
    done
done

# shellcheck disable=SC2086 # one argument per size
python3 - "$tmp" "$from" "$to" "$top" $cpus_list <<'EOF'
import collections, json, re, subprocess, sys
tmp, a, b, top, sizes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
def load(path):
    events, fns, fn = None, collections.defaultdict(lambda: [0] * 9), None
    for line in open(path):
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("fn="):
            fn = line[3:].strip()
        elif line[:1].isdigit():
            acc = fns[fn]
            for i, x in enumerate(line.split()[1:]):
                acc[i] += int(x)
    return events, fns
per = {}
for n in sizes:
    ea = json.load(open(f"{tmp}/cg-{n}-{a}.json"))["events_fired"]
    eb = json.load(open(f"{tmp}/cg-{n}-{b}.json"))["events_fired"]
    ev, fa = load(f"{tmp}/cg-{n}-{a}.cg")
    _, fb = load(f"{tmp}/cg-{n}-{b}.cg")
    ix = [ev.index("Ir"), ev.index("D1mr"), ev.index("D1mw"), ev.index("DLmr"), ev.index("DLmw")]
    d = eb - ea
    out = {}
    for f in set(fa) | set(fb):
        x, y = fb.get(f, [0] * 9), fa.get(f, [0] * 9)
        v = [(p - q) / d for p, q in zip(x, y)]
        out[f] = (v[ix[0]], v[ix[1]] + v[ix[2]], v[ix[3]] + v[ix[4]])
    per[n] = (d, out)
print()
print(f"{'CPUs':>5} {'events':>10} {'I/event':>9} {'D1 miss/ev':>11} {'LL miss/ev':>11}")
for n in sizes:
    d, out = per[n]
    t = [sum(v[i] for v in out.values()) for i in range(3)]
    print(f"{n:>5} {d:>10} {t[0]:9.0f} {t[1]:11.2f} {t[2]:11.2f}")
first, last = per[sizes[0]][1], per[sizes[-1]][1]
names = sorted(set(first) | set(last), key=lambda f: -(last.get(f, (0, 0, 0))[0] - first.get(f, (0, 0, 0))[0]))[:top]
print()
print(f"by function, per event, the {top} largest growers of instructions from {sizes[0]} to {sizes[-1]} CPUs:")
print(f"{'function':60} " + " ".join(f"{'I ' + n:>8}" for n in sizes) + " " + " ".join(f"{'D1 ' + n:>8}" for n in sizes) + " " + " ".join(f"{'LL ' + n:>8}" for n in sizes))
for f in names:
    nm = re.sub(r"\(.*", "", subprocess.run(["c++filt"], input=f, capture_output=True, text=True).stdout.strip())[-60:]
    vals = [per[n][1].get(f, (0, 0, 0)) for n in sizes]
    print(f"{nm:60} " + " ".join(f"{v[0]:8.1f}" for v in vals) + " " + " ".join(f"{v[1]:8.2f}" for v in vals) + " " + " ".join(f"{v[2]:8.2f}" for v in vals))
EOF
