#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a schbench run's workers sat, and how much of their math ran beside a busy SMT sibling
(`git show 9376ffa:docs/validation.md`, "schbench at 64 workers, v3 against tip (lane schb5)").

    schedlab run --machine bergamo-2s --kernel K --trace T.zst -- schbench -m 2 -t 64 -r 3 -z 2
    python3 bench/schbench_smt.py T.zst [--from 2.0] [--to 3.0]
        [--smt-offset 256] [--llc-cores 8] [--node-cores 128]

T is the ftrace text of `schedlab run --trace` (zstd-compressed if it ends in .zst). Only
`sched_switch` lines are read. In the window [--from, --to) (simulated seconds; the suite's
`-r 3 -z 2` scores the third second, 2.0-3.0):

- each worker's main CPU (the CPU it ran longest on in the window), counted per node and
  per LLC, and the cores that are the main core of two or more workers;
- every run of a worker (switch in to switch out) of at least 1 ms that began in the window
  (a request's matrix math runs ~2.9 ms in one piece on bergamo-2s), and how many of them had
  another task on the SMT sibling for more than 10% of the run: those are the requests the
  model charges the SMT slowdown (schbench.h: ns_per_mac, with the sibling's share).

The topology is bergamo-2s's numbering by default: CPU c and c + 256 are one core's threads,
cores 0-127 are node 0, and 8 consecutive cores are one LLC; the options change it for
another machine of the same layout (`schedlab topology MACHINE`).
"""
import argparse
import bisect
import collections
import re
import subprocess
import sys

SWITCH = re.compile(r'\[(\d+)\].*?\s([\d.]+): sched_switch: prev_comm=(\S+) prev_pid=(\d+) .*'
                    r'==> next_comm=(\S+) next_pid=(\d+)')


def read_runs(path):
    """Per CPU, the (start, end, pid) of every run of a task; the comm of each pid."""
    cmd = ['zstdcat', path] if path.endswith('.zst') else ['cat', path]
    runs = collections.defaultdict(list)
    start = {}
    comm = {}
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as p:
        for line in p.stdout:
            if 'sched_switch' not in line:
                continue
            m = SWITCH.search(line)
            if not m:
                continue
            cpu, t = int(m.group(1)), float(m.group(2))
            prev, nxt = int(m.group(4)), int(m.group(6))
            comm[nxt] = m.group(5)
            if prev and cpu in start:
                runs[cpu].append((start[cpu], t, prev))
            if nxt:
                start[cpu] = t
            else:
                start.pop(cpu, None)
    if p.returncode:
        sys.exit(f'schbench_smt.py: {" ".join(cmd)} failed ({p.returncode})')
    return runs, comm


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('trace')
    ap.add_argument('--from', dest='t0', type=float, default=2.0)
    ap.add_argument('--to', dest='t1', type=float, default=3.0)
    ap.add_argument('--smt-offset', type=int, default=256)
    ap.add_argument('--llc-cores', type=int, default=8)
    ap.add_argument('--node-cores', type=int, default=128)
    a = ap.parse_args()
    if a.t1 <= a.t0:
        sys.exit(f'schbench_smt.py: --to {a.t1} is not after --from {a.t0}')

    runs, comm = read_runs(a.trace)
    starts = {c: [r[0] for r in rs] for c, rs in runs.items()}

    def core(c):
        return c % a.smt_offset

    def sibling(c):
        return c + a.smt_offset if c < a.smt_offset else c - a.smt_offset

    def busy(c, t0, t1):
        """Time in [t0, t1) that CPU c ran any task."""
        rs = runs.get(c, [])
        i = max(bisect.bisect_left(starts.get(c, []), t0) - 1, 0)
        s = 0.0
        while i < len(rs) and rs[i][0] < t1:
            s += max(0.0, min(t1, rs[i][1]) - max(t0, rs[i][0]))
            i += 1
        return s

    def is_worker(pid):
        return comm.get(pid, '').startswith('schbench-worker')

    where = collections.defaultdict(collections.Counter)  # pid -> cpu -> time in the window
    long_runs = shared = 0
    for c, rs in runs.items():
        for s, e, pid in rs:
            if not is_worker(pid):
                continue
            overlap = max(0.0, min(e, a.t1) - max(s, a.t0))
            if overlap > 0:
                where[pid][c] += overlap
            if a.t0 <= s < a.t1 and e - s >= 1e-3:
                long_runs += 1
                if busy(sibling(c), s, e) > 0.1 * (e - s):
                    shared += 1

    nodes = collections.Counter()
    llcs = collections.Counter()
    cores = collections.Counter()
    for pid, cpus in where.items():
        c = cpus.most_common(1)[0][0]
        nodes[core(c) // a.node_cores] += 1
        llcs[core(c) // a.llc_cores] += 1
        cores[core(c)] += 1
    nr_llcs = a.smt_offset // a.llc_cores
    print(f'{a.trace}, {a.t0}-{a.t1} s: {len(where)} workers ran')
    print('  workers by node (main CPU): ' +
          ', '.join(f'node{n} {nodes[n]}' for n in range(a.smt_offset // a.node_cores)))
    print('  workers per LLC: ' + ' '.join(str(llcs[i]) for i in range(nr_llcs)))
    print(f'  cores that are the main core of 2+ workers: {sum(1 for v in cores.values() if v > 1)}')
    pct = 100.0 * shared / long_runs if long_runs else 0.0
    print(f'  worker runs >= 1 ms: {long_runs}, with the SMT sibling busy > 10% of the run: '
          f'{shared} ({pct:.2f}%)')


if __name__ == '__main__':
    main()
