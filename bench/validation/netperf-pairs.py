#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where netperf's pairs sit on bergamo-2s over time, from a schedlab ftrace text trace.

    schedlab run --machine bergamo-2s --kernel K --seed S --trace T.txt.zst \\
        -- netperf --instances 512 -t TCP_RR -l 1 -- -r 100
    zstdcat T.txt.zst | grep -E 'sched_migrate_task|sched_wakeup_new|sched_process_fork|swapper/' \\
        | bench/validation/netperf-pairs.py [--window MS] [--snapshots S1,S2,...]

Instance i is the i-th netperf that `sh` forks and the i-th child that netserver forks
(src/workload/netperf.cc). A task's CPU is followed through sched_wakeup_new and
sched_migrate_task (the grep keeps only the lines needed: a task changes CPU only there).
Prints, at each snapshot time: clients and servers per node, pairs whose two tasks are on
one CPU / on two CPUs of one LLC / in two LLCs, tasks per LLC and a histogram of tasks per
CPU; then the forking CPUs; then per window: migrations (all, across LLCs, across nodes),
the share of each node's CPU time with a task current (from the switches to and from
swapper), the LLCs below 80% of that, and the idle exits (switches from swapper) per LLC.
The topology is bergamo-2s's: CPU c is core c % 256, LLC (c % 256) // 8, node (c % 256) // 128.
"""
import argparse
import re
import sys

NCPU, NLLC = 512, 32


def llc(c):
    return (c % 256) // 8


def node(c):
    return (c % 256) // 128


def fields(rest):
    return dict(x.split('=', 1) for x in rest.split() if '=' in x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--window', type=float, default=50.0, help='window in ms (default 50)')
    ap.add_argument('--snapshots', default='0.05,0.1,0.2,0.5,1.0',
                    help='snapshot times in seconds, comma separated')
    a = ap.parse_args()
    win = a.window / 1000.0
    snaps = sorted(float(x) for x in a.snapshots.split(','))

    pid_cpu, role = {}, {}
    client_of, server_of = [], []
    fork_cpu = {'netperf': {}, 'netserver': {}}
    curr = [0] * NCPU
    last = [0.0] * NCPU
    busy, migr, exits = {}, {}, {}

    def add_busy(c, t0, t1):
        while t0 < t1:
            w = int(t0 / win)
            end = min(t1, (w + 1) * win)
            busy.setdefault(w, [0.0] * NCPU)[c] += end - t0
            t0 = end

    def snapshot(t):
        print(f'== snapshot at {t:.3f} s')
        tasks = [0] * NLLC
        cpu_tasks = [0] * NCPU
        per_node = [[0, 0] for _ in range(2)]
        for p, r in role.items():
            if p in pid_cpu:
                c = pid_cpu[p]
                cpu_tasks[c] += 1
                tasks[llc(c)] += 1
                per_node[node(c)][0 if r == 'c' else 1] += 1
        one_cpu, one_llc, two_llc = [0] * NLLC, [0] * NLLC, 0
        for a_, b_ in zip(client_of, server_of):
            if a_ in pid_cpu and b_ in pid_cpu:
                ca, cb = pid_cpu[a_], pid_cpu[b_]
                if ca == cb:
                    one_cpu[llc(ca)] += 1
                elif llc(ca) == llc(cb):
                    one_llc[llc(ca)] += 1
                else:
                    two_llc += 1
        for n in range(2):
            print(f'  node{n}: {per_node[n][0]} clients, {per_node[n][1]} servers')
        print(f'  pairs in two LLCs: {two_llc}')
        print('  llc: tasks, pairs on one cpu, pairs on two cpus of the llc, cpus with 0/1/2/3+ tasks')
        for lc in range(NLLC):
            h = [0, 0, 0, 0]
            for c in range(NCPU):
                if llc(c) == lc:
                    h[min(cpu_tasks[c], 3)] += 1
            print(f'  llc{lc:<2} {tasks[lc]:3} {one_cpu[lc]:3} {one_llc[lc]:3}  {h}')

    rx = re.compile(r'\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)')
    snap_i = 0
    for line in sys.stdin:
        m = rx.search(line)
        if not m:
            continue
        cpu, t, ev, rest = int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        while snap_i < len(snaps) and t >= snaps[snap_i]:
            snapshot(snaps[snap_i])
            snap_i += 1
        if ev == 'sched_switch':
            f = fields(rest)
            prev_pid, next_pid = int(f['prev_pid']), int(f['next_pid'])
            if curr[cpu] != 0:
                add_busy(cpu, last[cpu], t)
            if prev_pid == 0 and next_pid != 0:
                e = exits.setdefault(int(t / win), [0] * NLLC)
                e[llc(cpu)] += 1
            curr[cpu], last[cpu] = next_pid, t
        elif ev == 'sched_wakeup_new':
            f = fields(rest)
            pid_cpu[int(f['pid'])] = int(f['target_cpu'])
        elif ev == 'sched_migrate_task':
            f = fields(rest)
            o, d = int(f['orig_cpu']), int(f['dest_cpu'])
            pid_cpu[int(f['pid'])] = d
            mm = migr.setdefault(int(t / win), [0, 0, 0])
            mm[0] += 1
            mm[1] += llc(o) != llc(d)
            mm[2] += node(o) != node(d)
        elif ev == 'sched_process_fork':
            f = fields(rest)
            child, parent = f['child_comm'], f['comm']
            if child == 'netperf' or (child == 'netserver' and parent == 'netserver'):
                pid = int(f['child_pid'])
                role[pid] = 'c' if child == 'netperf' else 's'
                (client_of if child == 'netperf' else server_of).append(pid)
                fork_cpu[child][cpu] = fork_cpu[child].get(cpu, 0) + 1
    while snap_i < len(snaps):
        snapshot(snaps[snap_i])
        snap_i += 1

    print('== forking cpus (cpu: forks)')
    for who, h in fork_cpu.items():
        print(f'  {who}: {dict(sorted(h.items(), key=lambda x: -x[1])[:5])}')
    print(f'== per {a.window:.0f} ms window: migrations [all, across LLCs, across nodes], '
          '% of node 0 / node 1 cpu time with a task current, LLCs below 80%, idle exits per LLC')
    for w in sorted(set(busy) | set(migr)):
        b = busy.get(w, [0.0] * NCPU)
        n0 = sum(b[c] for c in range(NCPU) if node(c) == 0) / (256 * win) * 100
        n1 = sum(b[c] for c in range(NCPU) if node(c) == 1) / (256 * win) * 100
        low = []
        for lc in range(NLLC):
            u = sum(b[c] for c in range(NCPU) if llc(c) == lc) / (16 * win) * 100
            if u < 80:
                low.append(f'{lc}:{u:.0f}')
        e = exits.get(w, [0] * NLLC)
        ex = ' '.join(f'{lc}:{n}' for lc, n in enumerate(e) if n)
        print(f'  {w * win:6.3f} {migr.get(w, [0, 0, 0])} {n0:5.1f} {n1:5.1f} '
              f'low=[{" ".join(low)}] exits=[{ex}]')


if __name__ == '__main__':
    main()
