#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What each of a schbench run's worker wakeups waited for
(`git show 9376ffa:docs/validation.md`, "schbench at 1-8 workers: v3 against tip is where the
tick lands (lane schb7)").

    schedlab run --machine bergamo-2s --kernel K --trace T.zst -- schbench -m 2 -t 2 -r 3 -z 2
    python3 bench/schbench_wakeup_tail.py T.zst [--from 2.0] [--to 3.0] [--list N]

T is the ftrace text of `schedlab run --trace` (zstd-compressed if it ends in .zst). Every
`sched_waking` of a schbench-worker by a schbench-msg thread in [--from, --to) (simulated
seconds; the suite's `-r 3 -z 2` scores the third second, 2.0-3.0) is followed to the
worker's next `sched_switch` in and split into:

- the idle state of the worker's previous CPU at the waking (its last `cpu_idle` event;
  "busy" if it was running), and whether that state was chosen at a kept tick (a
  `cpu_idle` exit and a new state at the same instant with no switch between: the
  governor selecting again when the tick found the CPU idle);
- the time from the waking to the `sched_wakeup` (the idle exit, and the IPI where the
  machine's idle states do not poll);
- the time from the `sched_wakeup` to the switch in, when over 1 us (kernel work the CPU
  owed first: its tick's balance passes, its wake list);
- whether the worker migrated in between (`sched_migrate_task`: e.g. a SHARED_RUNQ pop).

It prints the count of each combination, and with --list N the N slowest wakeups. The trace
has microsecond timestamps, so each part is rounded to the microsecond. schbench's own
latency adds the waker's futex_wake and the worker's return to user space to the waking ->
switch-in time printed here.
"""
import argparse
import collections
import re
import subprocess
import sys

LINE = re.compile(r'^\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')
EXIT = 4294967295  # power:cpu_idle's PWR_EVENT_EXIT


def field(rest, name):
    m = re.search(r'(?:^|\s)' + name + r'=(\S+)', rest)
    return m.group(1) if m else None


def wakeups(path, t_from, t_to):
    cmd = ['zstdcat', path] if path.endswith('.zst') else ['cat', path]
    idle = {}      # cpu -> (state or -1, selected at a kept tick)
    last_idle = {}  # cpu -> (EXIT or 'enter', time) of its last cpu_idle event
    pending = {}   # pid -> the wakeup being followed
    done = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as p:
        for line in p.stdout:
            m = LINE.match(line)
            if not m:
                continue
            task, cpu, t, ev, rest = m.group(1).strip(), int(m.group(3)), float(m.group(4)), \
                m.group(5), m.group(6)
            if ev == 'cpu_idle':
                st = int(field(rest, 'state'))
                if st == EXIT:
                    idle[cpu] = (-1, False)
                else:
                    idle[cpu] = (st, last_idle.get(cpu) == (EXIT, t))
                last_idle[cpu] = (EXIT if st == EXIT else 'enter', t)
            elif ev == 'sched_switch':
                last_idle.pop(cpu, None)
                pid = int(field(rest, 'next_pid'))
                w = pending.pop(pid, None)
                if w:
                    w['run'] = t
                    if t_from <= w['waking'] < t_to:
                        done.append(w)
            elif ev == 'sched_waking':
                if field(rest, 'comm') == 'schbench-worker' and task.startswith('schbench-msg'):
                    prev = int(field(rest, 'target_cpu'))
                    pending[int(field(rest, 'pid'))] = {
                        'waking': t, 'prev': prev, 'state': idle.get(prev, (-1, False)),
                        'migrated': False}
            elif ev == 'sched_wakeup':
                w = pending.get(int(field(rest, 'pid')))
                if w and 'wakeup' not in w:
                    w['wakeup'] = t
            elif ev == 'sched_migrate_task':
                w = pending.get(int(field(rest, 'pid')))
                if w:
                    w['migrated'] = True
    if p.returncode:
        sys.exit(f'schbench_wakeup_tail.py: {" ".join(cmd)} failed ({p.returncode})')
    return done


def describe(w):
    st, at_tick = w['state']
    exit_us = round((w.get('wakeup', w['run']) - w['waking']) * 1e6)
    owed_us = round((w['run'] - w.get('wakeup', w['run'])) * 1e6)
    s = ('busy' if st < 0 else f'C{st}') + (' (chosen at a kept tick)' if at_tick else '')
    s += f' | exit {exit_us} us'
    if owed_us > 1:
        s += f' | then owed work {owed_us} us'
    if w['migrated']:
        s += ' | migrated'
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('trace')
    ap.add_argument('--from', dest='t_from', type=float, default=2.0)
    ap.add_argument('--to', dest='t_to', type=float, default=3.0)
    ap.add_argument('--list', type=int, default=0, help='also list the N slowest wakeups')
    a = ap.parse_args()
    ws = wakeups(a.trace, a.t_from, a.t_to)
    print(f'{len(ws)} worker wakeups by their message thread in [{a.t_from}, {a.t_to}) s')
    for what, n in collections.Counter(describe(w) for w in ws).most_common():
        print(f'{n:8d}  {what}')
    for w in sorted(ws, key=lambda w: w['run'] - w['waking'])[-a.list:] if a.list else []:
        print(f"  {w['waking']:.6f} cpu{w['prev']}: {round((w['run'] - w['waking']) * 1e6)} us: "
              f'{describe(w)}')


if __name__ == '__main__':
    main()
