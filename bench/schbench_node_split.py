#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a schbench run's threads were forked to, and on which node each message thread's workers
sat at given instants (docs/validation.md, "schbench throughput").

    schedlab run --machine bergamo-2s --kernel K --seed S --trace T.zst -- schbench -m 2 -t 128 -r 3 -z 2
    python3 bench/schbench_node_split.py T.zst [--at 0.0095,0.02,0.1,1,2.9] [--smt-offset 256]
        [--node-cpus 128]

T is the ftrace text of `schedlab run --trace` (zstd-compressed if it ends in .zst). Printed:

- the workers' forks (`sched_wakeup_new` of a `schbench-worker`): how many went to each node,
  how many distinct CPUs they used and the CPUs that took the most;
- at each instant of --at (simulated seconds), per message thread: the node it last ran on and
  the nodes its workers last ran on (a worker's CPU is the one of its last `sched_switch` in
  before the instant; a worker's parent is read from `sched_process_fork`).

The topology is bergamo-2s's numbering by default: CPU c and c + 256 are one core's threads,
cores 0-127 are node 0 and 128-255 node 1.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

FORK = re.compile(r'sched_process_fork: comm=(\S+) pid=(\d+) child_comm=(\S+) child_pid=(\d+)')
WAKE_NEW = re.compile(r'sched_wakeup_new: comm=(\S+) pid=(\d+) .*target_cpu=(\d+)')
SWITCH = re.compile(r'\[(\d+)\].*?\s([\d.]+): sched_switch: .*==> next_comm=(\S+) next_pid=(\d+)')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('trace')
    ap.add_argument('--at', default='0.0095,0.02,0.1,1,2.9')
    ap.add_argument('--smt-offset', type=int, default=256)
    ap.add_argument('--node-cpus', type=int, default=128)
    a = ap.parse_args()
    try:
        instants = sorted(float(x) for x in a.at.split(','))
    except ValueError:
        ap.error(f"--at '{a.at}' is not a comma-separated list of seconds")
    if a.smt_offset <= 0 or a.node_cpus <= 0:
        ap.error('--smt-offset and --node-cpus must be positive')
    if not os.path.isfile(a.trace):
        ap.error(f"trace '{a.trace}': no such file")

    def node(cpu):
        return (cpu % a.smt_offset) // a.node_cpus

    cmd = ['zstdcat', a.trace] if a.trace.endswith('.zst') else ['cat', a.trace]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    parent = {}
    forks = collections.Counter()
    fork_nodes = collections.Counter()
    last = {}
    nxt = 0
    switches = 0

    def dump(t):
        parts = []
        for m in sorted(set(parent.values())):
            cnt = collections.Counter(node(c) for p, c in last.items() if parent.get(p) == m)
            where = node(last[m]) if m in last else '?'
            split = ' '.join(f'node{n}={cnt[n]}' for n in sorted(set(cnt) | {0, 1}))
            parts.append(f'msg {m} (on node {where}): workers {split}')
        print(f't={t:.4f}s  ' + '; '.join(parts))

    for line in proc.stdout:
        if 'sched_process_fork' in line:
            m = FORK.search(line)
            if m and m.group(3) == 'schbench-worker':
                parent[int(m.group(4))] = int(m.group(2))
            continue
        if 'sched_wakeup_new' in line:
            m = WAKE_NEW.search(line)
            if m and m.group(1) == 'schbench-worker':
                cpu = int(m.group(3))
                forks[cpu] += 1
                fork_nodes[node(cpu)] += 1
            continue
        if 'sched_switch' not in line:
            continue
        m = SWITCH.search(line)
        if not m:
            continue
        switches += 1
        t = float(m.group(2))
        while nxt < len(instants) and t >= instants[nxt]:
            if nxt == 0:
                top = ', '.join(f'cpu{c} {n}' for c, n in forks.most_common(6))
                print(f'worker forks: {sum(forks.values())}, by node '
                      + ' '.join(f'node{n}={fork_nodes[n]}' for n in sorted(fork_nodes))
                      + f', on {len(forks)} distinct CPUs (most: {top})')
            dump(instants[nxt])
            nxt += 1
        if nxt >= len(instants):
            break
        last[int(m.group(4))] = int(m.group(1))
    early = nxt >= len(instants)
    proc.stdout.close()
    rc = proc.wait()
    if rc != 0 and not early:
        sys.exit(f"schbench_node_split.py: reading '{a.trace}' failed ({cmd[0]} exit {rc})")
    if switches == 0 or not forks:
        sys.exit(f"schbench_node_split.py: '{a.trace}' has no sched_switch lines or no "
                 "schbench-worker forks: not the ftrace text of a schbench run's --trace")
    while nxt < len(instants):
        dump(instants[nxt])
        nxt += 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
