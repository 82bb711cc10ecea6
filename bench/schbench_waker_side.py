#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Whether a schbench run's worker wakeups wait on the waker's side or the wakee's
(docs/validation.md, "schbench wakeup p99"; the full text is `git show
ffe2e13:docs/validation.md`, "Which published rows carry signal (lane schbw, 2026-12-05)").

    schedlab run --machine bergamo-2s --kernel K --seed S --trace T.zst -- schbench -m 2 -t 512 -r 3 -z 2
    python3 bench/schbench_waker_side.py T.zst [--from 2.0] [--to 3.0]

T is the ftrace text of `schedlab run --trace` (zstd-compressed if it ends in .zst). For every
`sched_waking` of a schbench-worker by a schbench-msg thread in [--from, --to) (simulated
seconds; the suite's `-r 3 -z 2` scores 2.0-3.0) it takes the time to that worker's next
`sched_switch` in, and prints its percentiles. schbench's own wakeup latency starts at the
message thread's stamp, before it wakes the first worker of its list, so it is this time plus
the worker's place in the list (the waker's side); when the two p99s agree, the tail is the
wakee's wait. It also prints how often a message thread was switched out while runnable
(preempted in the middle of its list) and how long it then waited for a CPU.
"""

import argparse
import io
import re
import subprocess
import sys

LINE = re.compile(r'^\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): (.*)$')


def fields(rest):
    out = {}
    for tok in rest.replace(' ==> ', ' ').split():
        if '=' in tok:
            key, val = tok.split('=', 1)
            out[key] = val
    return out


def open_trace(path):
    if path.endswith('.zst'):
        proc = subprocess.Popen(['zstdcat', path], stdout=subprocess.PIPE, text=True)
        return proc.stdout
    return io.open(path, encoding='utf-8')


def pct(values, q):
    if not values:
        return float('nan')
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('trace')
    ap.add_argument('--from', dest='t0', type=float, default=2.0)
    ap.add_argument('--to', dest='t1', type=float, default=3.0)
    args = ap.parse_args()

    waking = {}     # worker pid -> time a message thread woke it
    to_run = []     # waking -> switch in (us)
    msg_out = {}    # message thread pid -> time it was switched out runnable
    msg_wait = []   # that time -> back on a CPU (us)
    for line in open_trace(args.trace):
        m = LINE.match(line)
        if not m:
            continue
        comm, _pid, _cpu, ts, event, rest = m.groups()
        t = float(ts)
        if t >= args.t1:
            break
        if event == 'sched_waking' and comm == 'schbench-msg':
            f = fields(rest)
            if f.get('comm') == 'schbench-worker' and t >= args.t0:
                waking[f['pid']] = t
        elif event == 'sched_switch':
            f = fields(rest)
            if f['prev_comm'] == 'schbench-msg' and f['prev_state'].startswith('R'):
                msg_out[f['prev_pid']] = t
            if f['next_comm'] == 'schbench-msg' and f['next_pid'] in msg_out:
                out = msg_out.pop(f['next_pid'])
                if out >= args.t0:
                    msg_wait.append((t - out) * 1e6)
            if f['next_comm'] == 'schbench-worker' and f['next_pid'] in waking:
                to_run.append((t - waking.pop(f['next_pid'])) * 1e6)

    print(f'worker wakings by a message thread in [{args.t0}, {args.t1}): {len(to_run)}; '
          f'waking -> switch in p50 {pct(to_run, .5):.0f}  p90 {pct(to_run, .9):.0f}  '
          f'p99 {pct(to_run, .99):.0f} us')
    print(f'message threads switched out runnable: {len(msg_wait)}; until back on a CPU p50 '
          f'{pct(msg_wait, .5):.0f}  p99 {pct(msg_wait, .99):.0f} us, '
          f'{sum(msg_wait) / 1000:.1f} ms in all')
    return 0


if __name__ == '__main__':
    sys.exit(main())
