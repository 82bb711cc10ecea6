#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""schbench's hand-offs, recorded against replayed: which of the workers' traced waits for the
message thread the replay keeps, and why it loses the others (docs/replay.md, "schbench:
where the real waking->run goes, by class of wakeup").

  schedlab replay data/traces/schbench_m1_t2_r3.trace.txt.xz --comm '^schbench' \\
      --machine M --trace REPLAY
  schbench_handoffs.py TRACE REPLAY        (TRACE: the recorded trace, uncompressed or .xz)

A schbench worker wakes the message thread and then waits for it; the message thread wakes
it back. A hand-off is a worker's sched_waking of the message thread: it is *across CPUs* if
the following sched_wakeup places the message thread on another CPU than the waker's, and
its wait is *kept* if the worker's next switch-out (S) ends with a sched_waking by the message
thread (not its timer). Per file: hand-offs, across CPUs, kept, and for the kept ones across
CPUs the p10/p50/p90 of waking -> the worker's switch-out and waking -> the message thread's
switch-in (microseconds). Then the k-th hand-off of each worker in TRACE against the k-th in
REPLAY (the replay runs each worker's traced requests in order; the workers are paired in
pid order): of the waits TRACE kept, how many REPLAY kept, lost with the message thread
placed on the waker's own CPU (it runs before the worker's wait, as on one CPU in the
kernel), or lost across CPUs (the message thread's wake came before the worker's wait).
"""
import argparse
import collections
import lzma
import re

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S{4,5})\s+(\d+\.\d+):\s+(\w+):\s+(.*)$')


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else float('nan')


def events(path):
    """(comm, pid, cpu, ts in us, event name, the rest) of each event line of ftrace text
    (TRACE may be .xz); bench/schbench_sharing.py reads its traces with this too."""
    op = lzma.open if path.endswith('.xz') else open
    with op(path, 'rt') as f:
        for ln in f:
            m = LINE.match(ln)
            if m:
                comm, pid, cpu, _flags, ts, name, rest = m.groups()
                yield comm.strip(), int(pid), int(cpu), float(ts) * 1e6, name, rest


def handoffs(path):
    """worker pid -> [(across CPUs, kept, waking->worker out, waking->message thread in)]"""
    ev = list(events(path))
    out = collections.defaultdict(list)
    for i, (comm, pid, cpu, ts, name, rest) in enumerate(ev):
        if name != 'sched_waking' or 'comm=schbench-msg ' not in rest or comm != 'schbench-worker':
            continue
        across = out_at = msg_in = None
        kept = False
        for comm2, _pid2, _cpu2, ts2, name2, rest2 in ev[i + 1:i + 40]:
            if name2 == 'sched_wakeup' and 'comm=schbench-msg ' in rest2 and across is None:
                across = int(re.search(r'target_cpu=(\d+)', rest2).group(1)) != cpu
            if name2 == 'sched_switch' and 'next_comm=schbench-msg ' in rest2 and msg_in is None:
                msg_in = ts2 - ts
            if name2 == 'sched_switch' and f'prev_pid={pid} ' in rest2 and 'prev_state=S' in rest2 \
                    and out_at is None:
                out_at = ts2 - ts
            if out_at is not None and name2 == 'sched_waking' and f' pid={pid} ' in rest2:
                kept = comm2 == 'schbench-msg'
                break
        out[pid].append((across, kept, out_at, msg_in))
    return out


def summary(path, h):
    rows = [x for v in h.values() for x in v]
    k = [x for x in rows if x[0] and x[1]]
    w = [x[2] for x in k if x[2] is not None]
    m = [x[3] for x in k if x[3] is not None]
    print(f'{path}: {len(rows)} hand-offs, {sum(1 for x in rows if x[0])} across CPUs, '
          f'{sum(1 for x in rows if x[1])} waits kept; kept across CPUs ({len(k)}): waking -> worker '
          f'out {pct(w,10):.0f} / {pct(w,50):.0f} / {pct(w,90):.0f}, waking -> message thread in '
          f'{pct(m,10):.0f} / {pct(m,50):.0f} / {pct(m,90):.0f} us (p10 / p50 / p90)')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('trace')
    ap.add_argument('replay')
    o = ap.parse_args()
    t, r = handoffs(o.trace), handoffs(o.replay)
    summary(o.trace, t)
    summary(o.replay, r)
    n = collections.Counter()
    for tp, rp in zip(sorted(t), sorted(r)):
        for a, b in zip(t[tp], r[rp]):
            if a[1]:
                n['kept' if b[1] else 'lost, message thread on the waker\'s CPU' if b[0] is False
                  else 'lost across CPUs'] += 1
    print(f'the {sum(n.values())} waits {o.trace} kept, in {o.replay}: ' +
          ', '.join(f'{k} {v}' for k, v in sorted(n.items())))


if __name__ == '__main__':
    main()
