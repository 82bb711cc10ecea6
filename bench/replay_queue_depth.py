#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The waking->run tail of a trace and of its replay: what each long wait found on its CPU
(docs/replay.md, "The messaging tail: queue depth", lane rplat).

    python3 bench/replay_queue_depth.py data/traces/perf_messaging_g1_l200.trace.txt.xz
    schedlab replay TRACE --comm '^sched-messaging$' --machine M --trace r.txt
    python3 bench/replay_queue_depth.py r.txt [--comm REGEX] [--threshold-us 1000] [--show N]

Reads ftrace text (tracefs, `trace-cmd report` with its sched plugin's lines, a replay's
`--trace`), plain or xz. Each CPU's runnable tasks are followed from the events:
`sched_wakeup` / `sched_wakeup_new` queue a task on their target_cpu, `sched_migrate_task`
moves a queued one, a switch out in state R queues the task where it ran, a switch in takes
it off; a CPU whose switch in is not recorded (CPU 1 of the 6.18 guest in data/traces) gets
it inferred at the first event the TASK-PID column names another task than the one current
there. The tracepoints cannot show a sched_delayed task (DELAY_DEQUEUE): it counts as asleep
from its switch out in a sleep state, as the trace shows it.

For every wakeup of a selected task (a `sched_waking` of a task that is neither running nor
queued, or a `sched_wakeup_new`) to its switch in, printed: the p50 / p99 / max of those
waits, how many exceed --threshold-us, the depth at the wakeup (the tasks runnable on the
CPU it was queued on, the one running included, when its sched_wakeup came), and for the
long waits: their depth, the runs on that CPU until the wakee ran (how many, their lengths,
how many ended preempted), and where they sit in the span of the wakeups (deciles).

Then, for perf bench sched messaging (the process with the most forks is the main one; its
children in fork order are, per group of 2 x --fds, --fds receivers then --fds senders,
as messaging.c's group() creates them), per role the time running, runnable (queued, not
running) and asleep, the switches out asleep (S, D, ...) and preempted (R), the wakeups and
the long waits.
"""
import argparse
import collections
import lzma
import re
import statistics
import sys

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?([\d.]+):\s+(\w+):\s+(.*)$')
KV = re.compile(r'(\w+)=(\S+)')
# trace-cmd report's sched plugin: "comm:pid [prio] S ==> comm:pid [prio]" and
# "comm:pid [prio] [success=1 ]CPU:001"
TC_SWITCH = re.compile(r'^(.+):(\d+) \[(\d+)\] (\S+) ==> (.+):(\d+) \[(\d+)\]\s*$')
TC_WAKEUP = re.compile(r'^(.+):(\d+) \[(\d+)\](?: success=\d)? CPU:(\d+)\s*$')


def fields(event, text):
    """The event's fields as tracefs prints them, from either form."""
    if event == 'sched_switch' and '==>' in text and 'prev_pid=' not in text:
        m = TC_SWITCH.match(text)
        if m:
            return {'prev_comm': m.group(1), 'prev_pid': m.group(2), 'prev_state': m.group(4),
                    'next_comm': m.group(5), 'next_pid': m.group(6)}
    if event in ('sched_wakeup', 'sched_wakeup_new') and 'pid=' not in text:
        m = TC_WAKEUP.match(text)
        if m:
            return {'comm': m.group(1), 'pid': m.group(2), 'target_cpu': m.group(4)}
    return dict(KV.findall(text))


def pct(a, q):
    return a[min(len(a) - 1, int(q * len(a)))] if a else 0.0


def hist(values):
    c = collections.Counter(values)
    return ' '.join(f'{k}:{c[k]}' for k in sorted(c))


def analyse(path, comm_re, threshold_us, fds, show):
    opener = lzma.open if path.endswith('.xz') else open
    sel = re.compile(comm_re)
    comm = {}
    curr = {}                                   # cpu -> pid running (0: idle)
    queued = collections.defaultdict(set)       # cpu -> pids runnable, not running
    where = {}                                  # pid -> cpu it is queued on
    pending = {}                                # pid -> its wakeup, until it runs
    waits = []
    run_start = {}                              # cpu -> (pid, t)
    state = {}                                  # pid -> (run|rq|sleep, since)
    acc = collections.defaultdict(lambda: collections.defaultdict(float))
    outs = collections.defaultdict(collections.Counter)
    forks = collections.defaultdict(list)
    t0 = None
    inferred = 0

    def set_state(pid, st, t):
        old = state.get(pid)
        if old:
            acc[pid][old[0]] += t - old[1]
        state[pid] = (st, t)

    def switch_in(cpu, pid, t):
        o = where.pop(pid, None)
        if o is not None:
            queued[o].discard(pid)
        curr[cpu] = pid
        run_start[cpu] = (pid, t)
        set_state(pid, 'run', t)
        p = pending.pop(pid, None)
        if p:
            p['end'] = t
            waits.append(p)

    def end_run(cpu, t, st):
        s = run_start.get(cpu)
        if s and s[0] != 0:
            for p in pending.values():
                if p.get('qcpu') == cpu:
                    p['runs'].append((s[0], t - s[1], st))

    with opener(path, 'rt') as f:
        for ln in f:
            m = LINE.match(ln)
            if not m:
                continue
            tpid, cpu, t, ev = int(m.group(2)), int(m.group(3)), float(m.group(4)) * 1e6, m.group(5)
            if t0 is None:
                t0 = t
            fl = fields(ev, m.group(6))
            c = curr.get(cpu)
            if tpid != 0 and tpid != c:         # a switch in the trace did not record
                inferred += 1
                end_run(cpu, t, 'R')
                if c:
                    queued[cpu].add(c)
                    where[c] = cpu
                    set_state(c, 'rq', t)
                    outs[c]['R'] += 1
                switch_in(cpu, tpid, t)
            if ev == 'sched_process_fork':
                forks[int(fl['pid'])].append(int(fl['child_pid']))
                comm[int(fl['child_pid'])] = fl.get('child_comm', '')
            elif ev == 'sched_waking':
                pid = int(fl['pid'])
                comm[pid] = fl['comm']
                if pid not in pending and pid not in where and pid not in curr.values():
                    pending[pid] = {'pid': pid, 't': t, 'runs': [], 'depth': None, 'qcpu': None}
            elif ev in ('sched_wakeup', 'sched_wakeup_new'):
                pid, tc = int(fl['pid']), int(fl['target_cpu'])
                comm[pid] = fl['comm']
                if ev == 'sched_wakeup_new' and pid not in pending:
                    pending[pid] = {'pid': pid, 't': t, 'runs': [], 'depth': None, 'qcpu': None}
                if curr.get(tc) == pid:
                    continue
                o = where.get(pid)
                if o is not None:
                    queued[o].discard(pid)
                queued[tc].add(pid)
                where[pid] = tc
                if state.get(pid, ('sleep',))[0] != 'run':
                    set_state(pid, 'rq', t)
                p = pending.get(pid)
                if p is not None and p['depth'] is None:
                    p['depth'] = len(queued[tc]) - 1 + (1 if curr.get(tc, 0) else 0)
                    p['qcpu'] = tc
            elif ev == 'sched_migrate_task':
                pid, d = int(fl['pid']), int(fl['dest_cpu'])
                o = where.get(pid)
                if o is not None:
                    queued[o].discard(pid)
                    queued[d].add(pid)
                    where[pid] = d
                    p = pending.get(pid)
                    if p is not None:
                        p['qcpu'] = d
            elif ev == 'sched_switch':
                prev, nxt, st = int(fl['prev_pid']), int(fl['next_pid']), fl['prev_state']
                comm[prev] = fl['prev_comm']
                comm[nxt] = fl['next_comm']
                end_run(cpu, t, st)
                if prev:
                    if st.startswith('R'):
                        queued[cpu].add(prev)
                        where[prev] = cpu
                        set_state(prev, 'rq', t)
                        outs[prev]['R'] += 1
                    else:
                        set_state(prev, 'sleep', t)
                        outs[prev]['S'] += 1
                curr[cpu] = nxt
                run_start[cpu] = (nxt, t)
                if nxt:
                    switch_in(cpu, nxt, t)

    sw = [w for w in waits if sel.search(comm.get(w['pid'], ''))]
    if not sw:
        sys.exit(f'{path}: no wakeup of a task whose comm matches {comm_re!r}')
    lat = sorted(w['end'] - w['t'] for w in sw)
    lo, hi = min(w['t'] for w in sw), max(w['end'] for w in sw)
    big = [w for w in sw if w['end'] - w['t'] > threshold_us]
    depths = [w['depth'] for w in sw if w['depth'] is not None]
    print(f'{path}: {len(sw)} wakeups of the selected tasks over {(hi - lo) / 1e3:.1f} ms '
          f'({inferred} switch-ins inferred); waking->run p50 {pct(lat, .5):.1f} '
          f'p99 {pct(lat, .99):.1f} max {lat[-1]:.1f} us')
    print(f'  depth at the wakeup (runnable on its CPU, the running task included): '
          f'mean {statistics.mean(depths):.2f}, median {statistics.median(depths)}')
    print(f'  waits over {threshold_us:.0f} us: {len(big)}')
    if big:
        bd = [w['depth'] for w in big if w['depth'] is not None]
        nr = sorted(len(w['runs']) for w in big)
        rl = sorted(r[1] for w in big for r in w['runs'])
        pre = sum(1 for w in big for r in w['runs'] if r[2].startswith('R'))
        print(f'    depth at the wakeup: mean {statistics.mean(bd):.1f}, median '
              f'{statistics.median(bd)}')
        print(f'    runs on that CPU until the wakee ran: median {statistics.median(nr)}, '
              f'max {nr[-1]}; their lengths p50 {pct(rl, .5):.0f} p90 {pct(rl, .9):.0f} '
              f'max {rl[-1]:.0f} us; {pre} of {len(rl)} ended preempted')
        print('    where they sit in the span of the wakeups (deciles): ' +
              hist([min(9, int((w['t'] - lo) / (hi - lo) * 10)) for w in big]))
    # perf bench sched messaging's roles
    if forks:
        main = max(forks, key=lambda p: len(forks[p]))
        kids = forks[main]
        role = {main: 'main'}
        for i, k in enumerate(kids):
            role[k] = 'receiver' if i % (2 * fds) < fds else 'sender'
        per_pid_waits = collections.defaultdict(list)
        for w in sw:
            per_pid_waits[w['pid']].append(w['end'] - w['t'])
        print(f'  per role (main pid {main}, {len(kids)} children; ms summed over the tasks):')
        for r in ('main', 'receiver', 'sender'):
            pids = [p for p in role if role[p] == r]
            run = sum(acc[p]['run'] for p in pids) / 1e3
            rq = sum(acc[p]['rq'] for p in pids) / 1e3
            slp = sum(acc[p]['sleep'] for p in pids) / 1e3
            nS = sum(outs[p]['S'] for p in pids)
            nR = sum(outs[p]['R'] for p in pids)
            wk = sum(len(per_pid_waits[p]) for p in pids)
            lw = sum(1 for p in pids for x in per_pid_waits[p] if x > threshold_us)
            print(f'    {r:8s} x{len(pids):<3d} running {run:7.1f}  runnable {rq:7.1f}  '
                  f'asleep {slp:7.1f}; out asleep {nS}, preempted {nR}; wakeups {wk}, '
                  f'over {threshold_us:.0f} us {lw}')
    for w in sorted(big, key=lambda w: w['t'] - w['end'])[:show]:
        print(f'  wait {w["end"] - w["t"]:.0f} us: pid {w["pid"]} at {(w["t"] - t0) / 1e3:.2f} ms '
              f'on cpu {w["qcpu"]}, depth {w["depth"]}; runs: ' +
              ' '.join(f'{r[0]}:{r[1]:.0f}{r[2][0]}' for r in w['runs']))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('trace')
    ap.add_argument('--comm', default='^sched-messaging$')
    ap.add_argument('--threshold-us', type=float, default=1000.0)
    ap.add_argument('--fds', type=int, default=20, help="perf bench messaging's -f (20)")
    ap.add_argument('--show', type=int, default=0, help='print the N longest waits')
    a = ap.parse_args()
    analyse(a.trace, a.comm, a.threshold_us, a.fds, a.show)


if __name__ == '__main__':
    main()
