#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Which schbench worker shares the message thread's CPU, in a trace and in replays of it, and
what moved the message thread (docs/replay.md, "schbench: where the real waking->run goes, by
class of wakeup", the paragraph on placement).

  schbench_sharing.py TRACE REPLAY...    (ftrace text; TRACE may be .xz)

With two workers on two CPUs, a worker's hand-off (its sched_waking of the message thread) is on
the message thread's CPU or across, and only the worker on the other CPU keeps its wait (on one
CPU the woken message thread preempts it and replies first). bench/schbench_handoffs.py pairs
the k-th hand-offs of a trace and a replay, so its "lost by placement" counts hand-offs where
the other worker shared the message thread's CPU at that point of the run. Per file:

- sharing: per 100 ms, A if the first worker (lowest pid) shared the message thread's CPU at
  (more than two thirds of) that bin's hand-offs, B the second, * mixed, . none;
- the hand-offs on the waker's own CPU and across;
- the message thread's migrations: at a worker's waking before its sched_wakeup (wake_affine()
  to the waker's CPU), after the sched_wakeup on the waker's CPU before the waker switched out
  (sched_balance_newidle() pulling it to the blocking waker's CPU), other;
- the chances for such a pull: a worker woke the message thread across CPUs and switched out
  to idle before it ran there; pulled, or not with the message thread in on the other CPU
  within 5 us (the other CPU likely already switching to it) or later;
- the message thread's wakings of a worker: of its last waker (a reply), of the other worker;
  the latter split by whether the message thread blocked since its last waker's waking of it
  ("other worker, not blocked since": a second reply in one burst, to a request that found the
  message thread awake and so recorded no sched_waking of it; docs/replay.md, "Requests and
  replies").
"""
import argparse
import collections
import re

from schbench_handoffs import events  # the same ftrace text reader


def field(rest, name):
    m = re.search(r'(?:^|\s)' + name + r'=(\S+)', rest)
    return m.group(1) if m else None


def analyse(path):
    ev = list(events(path))
    msg = next(int(field(r, 'pid')) for c, _p, _cpu, _t, n, r in ev
               if n == 'sched_waking' and c == 'schbench-worker' and field(r, 'comm') == 'schbench-msg')
    workers = sorted({p for c, p, *_ in ev if c == 'schbench-worker'})
    t0 = ev[0][3]
    bins = collections.defaultdict(collections.Counter)
    c = collections.Counter()
    last_waker = None
    blocked_since = False  # the message thread blocked since its last waker's waking
    for i, (comm, pid, cpu, ts, name, rest) in enumerate(ev):
        if name == 'sched_switch' and field(rest, 'prev_pid') == str(msg) \
                and field(rest, 'prev_state')[:1] in ('S', 'D'):
            blocked_since = True
        if name == 'sched_waking' and comm == 'schbench-msg' and pid == msg \
                and field(rest, 'comm') == 'schbench-worker':
            if int(field(rest, 'pid')) == last_waker:
                c['reply'] += 1
            else:
                c['other worker'] += 1
                c['other worker, blocked since' if blocked_since else
                  'other worker, not blocked since'] += 1
        if name != 'sched_waking' or comm != 'schbench-worker' or int(field(rest, 'pid')) != msg:
            continue
        last_waker, blocked_since = pid, False
        target = woke = moved = out = out_idle = out_first = msg_in = msg_cpu = None
        for comm2, _pid2, cpu2, ts2, name2, rest2 in ev[i + 1:i + 60]:
            if name2 == 'sched_wakeup' and field(rest2, 'pid') == str(msg) and target is None:
                target, woke = int(field(rest2, 'target_cpu')), ts2
            if name2 == 'sched_migrate_task' and field(rest2, 'pid') == str(msg) and moved is None \
                    and msg_in is None:
                moved = ('wake_affine' if woke is None else 'newidle' if out is None and
                         int(field(rest2, 'dest_cpu')) == cpu else 'other')
            if name2 == 'sched_switch' and field(rest2, 'prev_pid') == str(pid) and out is None:
                out, out_idle = ts2, field(rest2, 'next_pid') == '0'
                out_first = msg_in is None
            if name2 == 'sched_switch' and field(rest2, 'next_pid') == str(msg) and msg_in is None:
                msg_in, msg_cpu = ts2, cpu2
            if out is not None and msg_in is not None:
                break
        if target is None:
            continue
        if moved:
            c['moved at a hand-off: ' + moved] += 1
        across = target != cpu
        c['across' if across else 'own CPU'] += 1
        # Which worker shares the message thread's CPU at this hand-off.
        sharer = pid if not across else next((w for w in workers if w != pid), pid)
        bins[int((ts - t0) / 1e5)]['A' if sharer == workers[0] else 'B'] += 1
        if across and out is not None and msg_in is not None:
            if msg_cpu == cpu:
                c['chance: pulled'] += 1
            elif out_idle and out_first:
                c['chance: not pulled, in within 5 us' if msg_in - out <= 5 else
                  'chance: not pulled, in later'] += 1
    c['migrations, all'] = sum(1 for e in ev if e[4] == 'sched_migrate_task'
                               and field(e[5], 'pid') == str(msg))
    line = ''
    for b in range(max(bins) + 1 if bins else 0):
        a, bb = bins[b]['A'], bins[b]['B']
        line += '.' if a + bb == 0 else 'A' if a > 2 * bb else 'B' if bb > 2 * a else '*'
    return line, c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('files', nargs='+')
    for path in ap.parse_args().files:
        line, c = analyse(path)
        print(f'{path}\n  sharing {line}\n  ' + ', '.join(f'{k} {v}' for k, v in sorted(c.items())))


if __name__ == '__main__':
    main()
