#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""schbench's same-CPU hand-offs: does the worker that wakes the message thread on its own CPU
get preempted by it (R) or block first (S)? (docs/replay.md, "schbench: a reply to a
preempted worker".)

  schbench_same_cpu.py TRACE [TRACE ...]      (ftrace text, plain or .xz: a recording or a
                                               replay's --trace)

A hand-off: a sched_wakeup of schbench-msg written by a schbench-worker on the CPU it names
as target_cpu. Its outcome: that worker's next sched_switch out, by prev_state (R: preempted,
S: blocked first, X: exited). Prints the counts per trace and, with --list N, the first N
that are not R (wakeup and switch times in s, worker pid, CPU).
"""
import argparse
import collections

import ftrace_text


def handoffs(path):
    pending = {}  # worker pid -> (wakeup s, cpu)
    for comm, pid, cpu, _flags, ts, name, fl in ftrace_text.records(path):
        if name == 'sched_wakeup' and comm.startswith('schbench-worker') and \
                fl.get('comm', '').startswith('schbench-msg') and \
                int(fl['target_cpu']) == int(cpu):
            pending[pid] = (float(ts), int(cpu))
        elif name == 'sched_switch' and fl['prev_pid'] in pending:
            t0, c = pending.pop(fl['prev_pid'])
            yield t0, float(ts), fl['prev_pid'], c, fl['prev_state'][0]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('trace', nargs='+')
    ap.add_argument('--list', type=int, default=0, help='list the first N not preempted')
    a = ap.parse_args()
    for path in a.trace:
        n = collections.Counter()
        shown = 0
        for t0, t1, pid, cpu, st in handoffs(path):
            n[st] += 1
            if st != 'R' and shown < a.list:
                shown += 1
                print('  %.6f %.6f pid %s cpu %d %s' % (t0, t1, pid, cpu, st))
        total = sum(n.values())
        rest = ', '.join('%s %d' % (k, v) for k, v in sorted(n.items()) if k not in 'RS')
        print('%s: %d same-CPU hand-offs: preempted (R) %d, blocked first (S) %d%s' %
              (path, total, n['R'], n['S'], ', ' + rest if rest else ''))


if __name__ == '__main__':
    main()
