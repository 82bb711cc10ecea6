#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""schbench's message thread woken by a worker on the other CPU (a remote request): what ended
its wait (docs/replay.md, "schbench: where a remote request's wait ends").

  schbench_remote_waits.py TRACE [TRACE ...]   (ftrace text, plain or .xz: a recording or a
                                                replay's --trace)

Per trace, each waking of the thread by a worker on the other CPU than the thread's (the
sched_waking's target_cpu, the thread's previous CPU), by what ended the wait, at the thread's
next switch-in:
- placed on the waker's CPU: the sched_wakeup's target is the waker's CPU (wake_affine());
- idle CPU: the target CPU ran no task at the wakeup (its idle-to-task switch ends the wait; on
  a CPU whose idle-to-task switches are not recorded, CPU 1 of the 6.18 guest, the wait has no
  recorded end: counted here, no length);
- wakeup preemption: the task running there switched out runnable (R) within 100 us of the
  wakeup (the reschedule IPI's path);
- tick: switched out runnable later, within 100 us after a tick of the trace's tick grid
  (below);
- R, other: switched out runnable later, off the tick grid;
- local worker's block: the other worker, running there, switched out not runnable;
- another task: a task that is not schbench's ran there first (and blocked or was preempted);
- moved: the thread's switch-in was on another CPU (a balance pull or a later wakeup's move).
The tick grid: a tick every 4 ms (HZ=250) at the phase, relative to the trace's first event, of
the switches out runnable that follow no wakeup on their CPU within 200 us (the mode of their
phases in 20 us bins, less 20 us); the phase and its support are printed. The CPU's running task
is the last sched_switch's next task or, where idle-to-task switches are missing, the task named
by an event's TASK-PID column.
"""
import collections
import sys

import ftrace_text

MSG, WORKER = 'schbench-msg', 'schbench-worker'
TICK_NS = 4_000_000
WAKE_PREEMPT_NS = 100_000
TICK_WINDOW_NS = 100_000


def ns(ts):
    s, _, f = ts.partition('.')
    return int(s) * 1_000_000_000 + int((f + '000000000')[:9])


def tick_phase(path):
    """The tick grid's phase (ns after the first event mod TICK_NS) and how many switches
    support it."""
    t0, lastwake, phases = None, {}, []
    for _, _, cpu, _, ts, ev, F in ftrace_text.records(path):
        t = ns(ts)
        t0 = t if t0 is None else t0
        if ev in ('sched_wakeup', 'sched_wakeup_new'):
            lastwake[int(F['target_cpu'])] = t
        elif (ev == 'sched_switch' and F['prev_state'].startswith('R') and F['prev_pid'] != '0'
              and t - lastwake.get(int(cpu), -10**18) > 200_000):
            phases.append((t - t0) % TICK_NS)
    if not phases:
        return 0, 0
    bins = collections.Counter(p // 20_000 for p in phases)
    b, _ = max(bins.items(), key=lambda kv: (kv[1], -kv[0]))
    phase = (b * 20_000 - 20_000) % TICK_NS
    near = sum(1 for p in phases if (p - phase) % TICK_NS <= TICK_WINDOW_NS)
    return phase, f'{near} of {len(phases)}'


def scan(path, phase):
    msg, workers = set(), set()
    cur = {}
    t0 = None
    waking = {}  # msg pid -> (waker pid, waker cpu)
    pending = None  # (t, target cpu, what ran there)
    classes = collections.Counter()
    lengths = collections.defaultdict(list)
    for comm, pid, cpu, _, ts, ev, F in ftrace_text.records(path):
        t, cpu, pid = ns(ts), int(cpu), int(pid)
        t0 = t if t0 is None else t0
        if pid:
            cur[cpu] = pid
        if ev == 'sched_switch':
            pp, npid, ps = int(F['prev_pid']), int(F['next_pid']), F['prev_state']
            for c, p in ((F['prev_comm'], pp), (F['next_comm'], npid)):
                if c == WORKER:
                    workers.add(p)
                elif c == MSG:
                    msg.add(p)
            cur[cpu] = npid
            if pending and npid in msg:
                w0, target, ran = pending
                pending = None
                if ran == 'idle':
                    k = 'idle CPU'
                elif ran == 'pulled':
                    k = "placed on the waker's CPU"
                elif cpu != target:
                    k = 'moved'
                elif pp not in workers:
                    k = 'another task' if pp else 'idle CPU (went idle)'
                elif not ps.startswith('R'):
                    k = "local worker's block"
                elif t - w0 <= WAKE_PREEMPT_NS:
                    k = 'wakeup preemption'
                elif (t - t0 - phase) % TICK_NS <= TICK_WINDOW_NS:
                    k = 'tick'
                else:
                    k = 'R, other'
                classes[k] += 1
                lengths[k].append(t - w0)
        elif ev == 'sched_waking' and comm.startswith(WORKER) and F['comm'] == MSG:
            if int(F['target_cpu']) != cpu:
                waking[int(F['pid'])] = cpu
        elif ev in ('sched_wakeup', 'sched_wakeup_new'):
            p, target = int(F['pid']), int(F['target_cpu'])
            if p in waking:
                wcpu = waking.pop(p)
                if pending:  # the thread's switch-in was not recorded (idle to task)
                    classes['idle CPU'] += 1
                if target == wcpu:
                    ran = 'pulled'
                else:
                    ran = 'idle' if cur.get(target, 0) == 0 else 'task'
                pending = (t, target, ran)
            if cur.get(target, 0) == 0:
                cur[target] = p  # an idle CPU runs its wakee next
        elif pending and pid in msg and ev != 'sched_switch' and pending[2] == 'idle':
            # the thread's first event after an unrecorded idle-to-task switch
            classes['idle CPU'] += 1
            pending = None
    return classes, lengths


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] / 1000 if xs else float('nan')


def main():
    for path in sys.argv[1:]:
        phase, support = tick_phase(path)
        classes, lengths = scan(path, phase)
        print(f'{path}: remote requests {sum(classes.values())}; tick grid phase '
              f'{phase / 1e6:.3f} ms ({support} unwoken R switches within it)')
        for k, v in classes.most_common():
            ls = lengths.get(k, [])
            tail = (f'  wait us p10/50/90 {pct(ls, .1):.0f} / {pct(ls, .5):.0f} / '
                    f'{pct(ls, .9):.0f}, n {len(ls)}') if ls else ''
            print(f'  {v:5d}  {k}{tail}')


if __name__ == '__main__':
    main()
