#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A trace's switch-outs of the selected tasks by class: which the replay's voluntary and
involuntary rows count, and which of them a replay can make (docs/replay.md, "schbench: the
switches by class").

  switch_classes.py TRACE [--comm REGEX]      (TRACE: ftrace text, plain or .xz)

Counted as `schedlab replay`'s table counts them: every sched_switch whose prev matches
REGEX (default: every task). Voluntary: prev left in a sleep state or exited, per prev comm
and state. Involuntary (prev runnable, R or R+): per prev comm, whether next is selected
(its comm) or not (`not selected`: a replay with that --comm has no such task, so it cannot
make this switch), and how next became runnable: woken (sched_wakeup or sched_wakeup_new) at
most 20 us, 20-200 us or more than 200 us before, or preempted earlier. A wakeup preemption is
a switch within 20 us of the wakee's wakeup; a switch to a task runnable for longer is a
tick's or a slice's. Pids are stripped from comms (schbench-worker-16000 -> schbench-worker).
"""
import argparse
import collections
import re

import ftrace_text


def events(path):
    for _comm, _pid, _cpu, _flags, ts, name, fields in ftrace_text.records(path):
        yield float(ts) * 1e6, name, fields


def how(since, ts):
    if since is None:
        return 'not seen runnable'
    t, kind = since
    if kind == 'preempted':
        return 'preempted earlier'
    dt = ts - t
    return 'woken <= 20 us before' if dt <= 20 else 'woken 20-200 us before' if dt <= 200 else \
        'woken > 200 us before'


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('trace')
    ap.add_argument('--comm', default='', help='the selected tasks (default: every task)')
    a = ap.parse_args()
    sel = re.compile(a.comm)
    since = {}  # pid -> (us, 'woken' | 'preempted')
    vol, invol = collections.Counter(), collections.Counter()
    for ts, name, f in events(a.trace):
        if name in ('sched_wakeup', 'sched_wakeup_new'):
            since[f['pid']] = (ts, 'woken')
        elif name == 'sched_switch':
            prev = f['prev_comm']
            if f['prev_pid'] == '0' or not sel.search(prev):
                continue
            if f['prev_state'].startswith('R'):
                since[f['prev_pid']] = (ts, 'preempted')
                nxt = f['next_comm']
                nxt = nxt if f['next_pid'] != '0' and sel.search(nxt) else 'not selected'
                invol[(prev, nxt, how(since.get(f['next_pid']), ts))] += 1
            else:
                vol[(prev, f['prev_state'])] += 1
    print(f'{a.trace}: voluntary {sum(vol.values())}, involuntary {sum(invol.values())}')
    print('| voluntary: prev | state | n |\n|---|---|---:|')
    for (p, s), n in sorted(vol.items(), key=lambda x: -x[1]):
        print(f'| {p} | {s} | {n} |')
    print('\n| involuntary: prev | next | next became runnable | n |\n|---|---|---|---:|')
    for (p, n_, h), n in sorted(invol.items(), key=lambda x: -x[1]):
        print(f'| {p} | {n_} | {h} | {n} |')


if __name__ == '__main__':
    main()
