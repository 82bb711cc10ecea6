#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The message threads' wake batches of a schbench run, and the workers' cycles
(`git show 9376ffa:docs/validation.md`, "schbench at 16-64 workers: the wake batches (lane
schb8)"; docs/validation.md, "schbench wakeup p99", has the current summary).

    schedlab run --machine bergamo-2s --kernel K --trace T.zst -- schbench -m 2 -t 16 -r 3 -z 2
    python3 bench/schbench_batches.py T.zst [--from 2.0] [--to 3.0]

schbench's xlist_wake_all() takes one gettimeofday() for the whole list of posted workers
and then fposts them one after the other, so a worker's recorded wakeup latency is its
place in the list times the waker's per-wake cost, plus its own CPU's idle exit and switch.
A list run is taken to begin when the message thread is switched in (its time stamp follows
within a microsecond); a message thread that finds its futex already posted and loops
without sleeping (at 64 workers per thread and more) runs several lists in one run, and
those are counted as one, so the positions are then overstated.

Printed, for the worker wakeups whose list run began in [--from, --to): the 50th/90th/99th
percentiles of the time from the list run's start to the worker's switch in, split into
the start to its sched_waking (its place in the list) and the waking to the switch in; the
list sizes; and each worker's cycle (one waking by its message thread to the next, in
[--from - 1, --to)): the spread of the per-worker mean cycle, the mean within-worker
standard deviation, and how many cycles run more than 1 ms past the median (a request run
beside a busy SMT sibling, a migration's aftermath). The trace has microsecond stamps.
"""
import argparse
import collections
import re
import statistics
import subprocess

LINE = re.compile(r'^\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')


def field(rest, name):
    m = re.search(r'(?:^|\s)' + name + r'=(\S+)', rest)
    return m.group(1) if m else None


def pct(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('trace')
    ap.add_argument('--from', dest='t_from', type=float, default=2.0)
    ap.add_argument('--to', dest='t_to', type=float, default=3.0)
    a = ap.parse_args()
    cmd = ['zstdcat', a.trace] if a.trace.endswith('.zst') else ['cat', a.trace]
    run_start = {}   # message thread pid -> when it was switched in
    run_list = {}    # message thread pid -> wakings in this run
    pending = {}     # worker pid -> (list start, waking, place)
    last_waking = {}
    prev_in_run = {}  # message thread pid -> its previous waking in this run
    gaps = []         # time between two wakings of one list run
    cycles = collections.defaultdict(list)
    lat = []
    sizes = collections.Counter()
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as p:
        for line in p.stdout:
            m = LINE.match(line)
            if not m:
                continue
            task, pid, t, ev, rest = m.group(1).strip(), int(m.group(2)), float(m.group(4)), \
                m.group(5), m.group(6)
            if ev == 'sched_switch':
                prev, nxt = field(rest, 'prev_comm'), field(rest, 'next_comm')
                if prev and prev.startswith('schbench-msg'):
                    ppid = int(field(rest, 'prev_pid'))
                    n = run_list.pop(ppid, None)
                    if n is not None and a.t_from <= run_start[ppid] < a.t_to:
                        sizes[n] += 1
                npid = int(field(rest, 'next_pid'))
                if nxt and nxt.startswith('schbench-msg'):
                    run_start[npid] = t
                    run_list[npid] = 0
                w = pending.pop(npid, None)
                if w and a.t_from <= w[0] < a.t_to:
                    lat.append((t - w[0], w[1] - w[0], t - w[1], w[2]))
            elif ev == 'sched_waking' and task.startswith('schbench-msg') and \
                    field(rest, 'comm') == 'schbench-worker':
                wpid = int(field(rest, 'pid'))
                place = run_list.get(pid, 0)
                run_list[pid] = place + 1
                if place > 0 and a.t_from <= run_start[pid] < a.t_to:
                    gaps.append(t - prev_in_run[pid])
                prev_in_run[pid] = t
                pending[wpid] = (run_start.get(pid, t), t, place)
                if wpid in last_waking and a.t_from - 1 <= t < a.t_to:
                    cycles[wpid].append(t - last_waking[wpid])
                last_waking[wpid] = t
    if not lat:
        print('no worker wakeups in the window')
        return
    print(f'{a.trace}: {len(lat)} worker wakeups by their message thread, list runs '
          f'starting in [{a.t_from}, {a.t_to}) s')
    cols = [sorted(x[i] for x in lat) for i in range(4)]
    for q in (0.5, 0.9, 0.99):
        print(f'  p{int(q * 100)}: list start -> switch in {pct(cols[0], q) * 1e6:.0f} us '
              f'(-> waking {pct(cols[1], q) * 1e6:.0f}, waking -> switch in '
              f'{pct(cols[2], q) * 1e6:.0f}), place in the list {pct(cols[3], q)}')
    top = sorted(lat)[int(0.99 * len(lat)):]
    print(f'  slowest 1% ({len(top)}): mean place {statistics.mean(x[3] for x in top):.1f}, '
          f'mean waking -> switch in {1e6 * statistics.mean(x[2] for x in top):.1f} us')
    quick = [x[2] for x in lat if x[2] < 5e-6]
    slow = [x[2] for x in lat if x[2] >= 5e-6]
    print(f'  waking -> switch in: mean {1e6 * statistics.mean(quick):.3f} us for the {len(quick)} '
          f'under 5 us (a shallow idle exit), {1e6 * statistics.mean(slow) if slow else 0:.3f} us '
          f'for the {len(slow)} others (the deep state\'s exit)')
    print('  list sizes (runs): ' + ' '.join(f'{k}:{v}' for k, v in sorted(sizes.items())))
    if gaps:
        print(f'  the waker\'s time per worker woken (one waking to the next in a list run): mean '
              f'{1e6 * statistics.mean(gaps):.3f} us over {len(gaps)}')
    full = [v for v in cycles.values() if len(v) > 5]
    if full:
        means = [statistics.mean(v) for v in full]
        allc = sorted(x for v in full for x in v)
        med = allc[len(allc) // 2]
        print(f'  worker cycles: {len(allc)}, median {med * 1e6:.0f} us, per-worker means '
              f'sd {1e6 * statistics.pstdev(means):.1f} us, within-worker sd '
              f'{1e6 * statistics.mean(statistics.pstdev(v) for v in full):.1f} us, '
              f'> 1 ms past the median: {sum(1 for x in allc if x - med > 1e-3)}')


if __name__ == '__main__':
    main()
