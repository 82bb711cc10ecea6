#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where a wakeup's waking->run time goes, read from ftrace text (docs/replay.md, "Where a
timer wakeup's 4-6 us go", lane replay9).

  wake_path.py analyse TRACE [--comm REGEX]
      per wakee CPU and wakeup kind (the wakee's CPU idle or busy at the waking; woken by its
      own CPU in hardirq context, i.e. its timer, or by another CPU, i.e. the wake-list IPI):
      sched_waking -> sched_wakeup -> the switch in, p10/p50/p90 and the mean of the last
      step; with the extra events of `record --events full`, the steps between the wakeup
      and the switch of an idle CPU (clockevent writes, the idle exit, the tick's restart).
      TRACE is /sys/kernel/tracing/trace text (microseconds, flags column), .xz allowed.
      Switches recorded on a CPU only (no inferred switch-ins: the traces of data/traces
      lack CPU 1's idle-to-task switches, so their CPU 1 idle rows are not switch times).
      --tsc-mhz MHZ reads a trace recorded with `record --clock x86-tsc` (timestamps in TSC
      cycles, converted at MHZ: the kernel log's "tsc: Detected ... MHz"). With the timer
      events (`--events timer` or `full`) it also prints, per CPU busy or idle at the timer
      wakeup, hrtimer_expire_exit of the wakee's timer -> local_timer_exit: what
      hrtimer_interrupt() does after the expired timers ran, the clockevent's reprogramming
      (costs.def hrtimer_interrupt_reprogram).

  wake_path.py record MODE OUT [--n N] [--period-us US] [--events sched|timer|full]
                    [--clock local|x86-tsc] [--cpu-b N] [--footprint-kib K]   (root)
      MODE timer: a task pinned to CPU 0 sleeps US microseconds N times (its own timer wakes
      it, on CPU 0); MODE remote: a task on CPU 1 sleeps US and writes a byte to a pipe that a
      task pinned to CPU 0 reads (the wake-list IPI wakes CPU 0); MODE pingpong: a pipe
      ping-pong of N round trips between a task pinned to CPU 0 and one pinned to --cpu-b
      (default 0: both on CPU 0, so each wakeup is a busy CPU's own), the first copying
      --footprint-kib KiB before each of its writes (default 0). Traces sched_waking,
      sched_wakeup, sched_switch (--events full adds irq_vectors timer and IPI entry/exit,
      power:cpu_idle, msr:write_msr, timer:hrtimer_*, timer:tick_stop; --events timer adds
      only local_timer_entry/exit and hrtimer_expire_entry/exit, the fewest events that
      bracket the reprogramming) through tracefs into OUT (trace text). --clock x86-tsc
      stamps the events in TSC cycles (the default local clock prints microseconds), and the
      clock is set back to local after. The CPUs should be otherwise idle: the rows say how
      many wakeups found their CPU idle.
"""
import argparse
import lzma
import os
import re
import sys
import time

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S{4,5})\s+(\d+(?:\.\d+)?):\s+(\w+):\s+(.*)$')
KV = re.compile(r'(\w+)=(\S+)')
T = '/sys/kernel/tracing'
SCHED = ['sched:sched_switch', 'sched:sched_wakeup', 'sched:sched_waking']
FULL = SCHED + ['irq_vectors:local_timer_entry', 'irq_vectors:local_timer_exit',
                'irq_vectors:call_function_single_entry', 'irq_vectors:call_function_single_exit',
                'irq_vectors:reschedule_entry', 'irq_vectors:reschedule_exit', 'power:cpu_idle',
                'msr:write_msr', 'timer:hrtimer_expire_entry', 'timer:hrtimer_expire_exit',
                'timer:hrtimer_start', 'timer:hrtimer_cancel', 'timer:tick_stop']
TIMER = SCHED + ['irq_vectors:local_timer_entry', 'irq_vectors:local_timer_exit',
                 'timer:hrtimer_expire_entry', 'timer:hrtimer_expire_exit']


def events(path, tsc_mhz=None):
    op = lzma.open if path.endswith('.xz') else open
    with op(path, 'rt') as f:
        for ln in f:
            m = LINE.match(ln)
            if m:
                comm, pid, cpu, flags, ts, ev, rest = m.groups()
                us = int(ts) / tsc_mhz if tsc_mhz else float(ts) * 1e6
                yield int(pid), int(cpu), flags, us, ev, rest


def pct(v, p):
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else float('nan')


def analyse(path, comm_re, tsc_mhz=None):
    cre = re.compile(comm_re)
    curr = {}   # cpu -> pid last seen running there
    open_ = {}  # wakee pid -> its wakeup so far
    rows = {}
    steps = {}  # idle CPU's wakeup -> switch, as a sequence of (step, ts)
    reprog = {}  # cpu -> [idle?, its timer's hrtimer_expire_exit] after a timer wakeup there
    reprogs = {}  # 'idle' / 'busy' -> hrtimer_expire_exit -> local_timer_exit (us)
    for pid, cpu, flags, ts, ev, rest in events(path, tsc_mhz):
        if ev == 'hrtimer_expire_exit' and cpu in reprog and reprog[cpu][1] is None:
            reprog[cpu][1] = ts
        elif ev == 'local_timer_exit' and cpu in reprog:
            idle, start = reprog.pop(cpu)
            if start is not None:
                reprogs.setdefault('idle' if idle else 'busy', []).append(ts - start)
        if ev in ('sched_waking', 'sched_wakeup'):
            kv = dict(KV.findall(rest))
            wakee, tgt = int(kv['pid']), int(kv['target_cpu'])
            if ev == 'sched_waking':
                if cre.search(kv['comm']):
                    idle = (pid if tgt == cpu else curr.get(tgt, -1)) == 0
                    by = ('own CPU, hardirq (timer)' if 'h' in flags[2:4] else 'own CPU') \
                        if tgt == cpu else 'other CPU (IPI)' if idle else 'other CPU'
                    open_[wakee] = {'waking': ts, 'tgt': tgt, 'kind': ('idle, ' if idle else 'busy, ') + by}
                    if by.endswith('(timer)'):
                        reprog[cpu] = [idle, None]
            else:
                w = open_.get(wakee)
                if w and 'wakeup' not in w:
                    w['wakeup'] = ts
                    if pid == 0:
                        steps[cpu] = (wakee, [('sched_wakeup', ts)])
        elif ev == 'sched_switch':
            kv = dict(KV.findall(rest))
            nxt, prv = int(kv['next_pid']), int(kv['prev_pid'])
            w = open_.pop(nxt, None)
            if w and 'wakeup' in w and cpu == w['tgt'] and (prv == 0) == w['kind'].startswith('idle'):
                w['switch'] = ts
                s = steps.get(cpu)
                if s and s[0] == nxt and prv == 0:
                    w['steps'] = tuple(s[1] + [('sched_switch', ts)])
                rows.setdefault((cpu, w['kind']), []).append(w)
            steps.pop(cpu, None)
            curr[cpu] = nxt
            continue
        elif cpu in steps and pid == 0:
            name = {'write_msr': 'write_msr ' + rest.split(',')[0],
                    'cpu_idle': 'cpu_idle exit' if '4294967295' in rest else None,
                    'hrtimer_start': 'hrtimer_start tick' if 'tick_nohz_handler' in rest else 'hrtimer_start',
                    'local_timer_exit': 'local_timer_exit',
                    'call_function_single_exit': 'call_function_single_exit',
                    'reschedule_exit': 'reschedule_exit',
                    'hrtimer_expire_exit': None}.get(ev)
            if name:
                steps[cpu][1].append((name, ts))
        elif cpu in steps and pid != 0:
            steps.pop(cpu, None)
        curr[cpu] = pid
    print(f'{path} (wakees {comm_re}; microseconds' +
          (f', TSC cycles at {tsc_mhz} MHz)' if tsc_mhz else ')'))
    print('| CPU | wakee CPU at the waking, woken by | n | waking->wakeup p10/50/90 | '
          'wakeup->switch p10/50/90 (mean) | waking->switch p10/50/90/99 |')
    print('|---|---|---:|---|---|---|')
    for (cpu, kind), v in sorted(rows.items()):
        a = sorted(w['wakeup'] - w['waking'] for w in v)
        b = sorted(w['switch'] - w['wakeup'] for w in v)
        c = sorted(w['switch'] - w['waking'] for w in v)
        d = 2 if tsc_mhz else 0  # TSC stamps resolve below a microsecond
        print(f'| {cpu} | {kind} | {len(v)} | {pct(a,10):.{d}f} / {pct(a,50):.{d}f} / {pct(a,90):.{d}f} | '
              f'{pct(b,10):.{d}f} / {pct(b,50):.{d}f} / {pct(b,90):.{d}f} ({sum(b)/len(b):.2f}) | '
              f'{pct(c,10):.{d}f} / {pct(c,50):.{d}f} / {pct(c,90):.{d}f} / {pct(c,99):.{d}f} |')
    shapes = {}
    for v in rows.values():
        for w in v:
            if 'steps' in w and len(w['steps']) > 2:
                shapes.setdefault(tuple(n for n, _ in w['steps']), []).append(w['steps'])
    for shape, seqs in sorted(shapes.items(), key=lambda kv: -len(kv[1]))[:4]:
        gaps = [sum(s[i + 1][1] - s[i][1] for s in seqs) / len(seqs) for i in range(len(shape) - 1)]
        print(f'\n{len(seqs)} idle wakeups: ' + ''.join(
            f'{shape[i]} -> ({gaps[i]:.2f}) ' for i in range(len(gaps))) + shape[-1] +
            f'; total {sum(gaps):.2f} (mean us between the steps)')
    for kind, v in sorted(reprogs.items()):
        v.sort()
        print(f'\n{len(v)} timer wakeups of a {kind} CPU: hrtimer_expire_exit -> local_timer_exit '
              f'p10/50/90 {pct(v,10):.3f} / {pct(v,50):.3f} / {pct(v,90):.3f} us '
              f'(mean {sum(v)/len(v):.3f})')


def tracefs(name, value):
    with open(os.path.join(T, name), 'w') as f:
        f.write(value)


def record(mode, out, n, period_us, which, clock='local', cpu_b=0, footprint_kib=0):
    if not os.path.exists(os.path.join(T, 'trace')):
        os.system(f'mount -t tracefs nodev {T}')
    tracefs('tracing_on', '0')
    tracefs('set_event', '')
    tracefs('buffer_size_kb', '32768')
    tracefs('trace_clock', clock)
    fd = os.open(os.path.join(T, 'set_event'), os.O_WRONLY | os.O_APPEND)
    for e in {'full': FULL, 'timer': TIMER}.get(which, SCHED):
        os.write(fd, (e + '\n').encode())
    os.close(fd)
    tracefs('trace', '')
    tracefs('tracing_on', '1')
    try:
        if mode == 'timer':
            pid = os.fork()
            if pid == 0:
                os.sched_setaffinity(0, {0})
                for _ in range(n):
                    time.sleep(period_us / 1e6)
                os._exit(0)
            os.waitpid(pid, 0)
        elif mode == 'pingpong':
            # A on CPU 0 writes a byte and reads the reply, B on --cpu-b the other way round;
            # A first copies --footprint-kib KiB (twice that touched), as a task with a cache
            # footprint does between its wakeups, so its try_to_wake_up() finds the kernel's
            # lines evicted.
            a_r, b_w = os.pipe()
            b_r, a_w = os.pipe()
            src = bytearray(footprint_kib * 1024)
            dst = bytearray(footprint_kib * 1024)
            a = os.fork()
            if a == 0:
                os.sched_setaffinity(0, {0})
                for _ in range(n):
                    if footprint_kib:
                        dst[:] = src
                    os.write(a_w, b'x')
                    os.read(a_r, 1)
                os._exit(0)
            b = os.fork()
            if b == 0:
                os.sched_setaffinity(0, {cpu_b})
                for _ in range(n):
                    os.read(b_r, 1)
                    os.write(b_w, b'x')
                os._exit(0)
            os.waitpid(a, 0)
            os.waitpid(b, 0)
        else:
            r, w = os.pipe()
            reader = os.fork()
            if reader == 0:
                os.sched_setaffinity(0, {0})
                for _ in range(n):
                    os.read(r, 1)
                os._exit(0)
            writer = os.fork()
            if writer == 0:
                os.sched_setaffinity(0, {1})
                time.sleep(0.001)
                for _ in range(n):
                    time.sleep(period_us / 1e6)
                    os.write(w, b'x')
                os._exit(0)
            os.waitpid(writer, 0)
            os.waitpid(reader, 0)
    finally:
        tracefs('tracing_on', '0')
        with open(os.path.join(T, 'trace')) as f, open(out, 'w') as o:
            o.write(f.read())
        tracefs('set_event', '')
        tracefs('trace', '')
        tracefs('buffer_size_kb', '7')
        tracefs('trace_clock', 'local')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('analyse')
    a.add_argument('trace')
    a.add_argument('--comm', default='.')
    a.add_argument('--tsc-mhz', type=float, default=None)
    r = sub.add_parser('record')
    r.add_argument('mode', choices=['timer', 'remote', 'pingpong'])
    r.add_argument('--cpu-b', type=int, default=0)
    r.add_argument('--footprint-kib', type=int, default=0)
    r.add_argument('out')
    r.add_argument('--n', type=int, default=2000)
    r.add_argument('--period-us', type=int, default=200)
    r.add_argument('--events', choices=['sched', 'timer', 'full'], default='sched')
    r.add_argument('--clock', choices=['local', 'x86-tsc'], default='local')
    o = ap.parse_args()
    if o.cmd == 'analyse':
        analyse(o.trace, o.comm, o.tsc_mhz)
    else:
        record(o.mode, o.out, o.n, o.period_us, o.events, o.clock, o.cpu_b, o.footprint_kib)


if __name__ == '__main__':
    sys.exit(main())
