#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""schbench's hand-offs in a replay's trace: where each worker's wait for the message thread
went (docs/replay.md, "schbench: where the real waking->run goes, by class of wakeup").

  schedlab replay data/traces/schbench_m1_t2_r3.trace.txt.xz --comm '^schbench' \\
      --machine M --deps keep --trace T
  schbench_handoffs.py T

A schbench worker wakes the message thread and then waits for it. Under `--deps keep` a
rebuilt wait whose wake came first still sleeps 1 ns, so every traced wait shows as a
switch-out. For each sched_waking of the message thread by a worker: the worker's next
switch-out (S) and what woke it next: within 2 us of it, a 1 ns block (the wake came first:
the wait is lost under the default `--deps flow`); else the message thread (the wait slept);
else its timer (its sleep). Per kind: how many hand-offs placed the message thread on the
waker's own CPU (sched_wakeup's target_cpu; it then runs before the worker's wait, as on one
CPU in the kernel), and for those placed on the other CPU the p10/p50/p90 of waking -> the
worker's switch-out and waking -> the message thread's switch-in (microseconds).
Reads ftrace text as `schedlab replay --trace` writes it, or a recorded trace (uncompressed;
there the first kind is a wake that came within 2 us of the switch-out, the wait kept).
"""
import argparse
import re

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S{4,5})\s+(\d+\.\d+):\s+(\w+):\s+(.*)$')
KINDS = ('1 ns block (the wake came first)', 'slept, woken by the message thread',
         'slept, woken by its timer')


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else float('nan')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('trace')
    o = ap.parse_args()
    ev = []
    with open(o.trace) as f:
        for ln in f:
            m = LINE.match(ln)
            if m:
                comm, pid, cpu, _flags, ts, name, rest = m.groups()
                ev.append((comm.strip(), int(pid), int(cpu), float(ts) * 1e6, name, rest))
    out = {k: [] for k in KINDS}
    for i, (comm, pid, cpu, ts, name, rest) in enumerate(ev):
        if name != 'sched_waking' or 'comm=schbench-msg ' not in rest or comm != 'schbench-worker':
            continue
        placed = blocked = msg_in = kind = None
        for comm2, _pid2, _cpu2, ts2, name2, rest2 in ev[i + 1:i + 40]:
            if name2 == 'sched_wakeup' and 'comm=schbench-msg ' in rest2 and placed is None:
                placed = int(re.search(r'target_cpu=(\d+)', rest2).group(1))
            if name2 == 'sched_switch' and 'next_comm=schbench-msg ' in rest2 and msg_in is None:
                msg_in = ts2 - ts
            if name2 == 'sched_switch' and f'prev_pid={pid} ' in rest2 and 'prev_state=S' in rest2 \
                    and blocked is None:
                blocked = ts2
            if blocked is not None and name2 == 'sched_waking' and f' pid={pid} ' in rest2:
                kind = KINDS[0] if ts2 - blocked < 2 else KINDS[1] if comm2 == 'schbench-msg' else KINDS[2]
                break
        if kind is None or placed is None:
            continue
        out[kind].append((placed == cpu, blocked - ts, msg_in))
    print(f'{o.trace}: a worker\'s sched_waking of the message thread, by what became of its wait')
    print('| the worker\'s next switch-out | n | message thread on the waker\'s CPU | on the other CPU: '
          'waking -> worker out p10/50/90 | waking -> message thread in p10/50/90 |')
    print('|---|---:|---:|---|---|')
    for k in KINDS:
        v = out[k]
        b = [x[1] for x in v if not x[0]]
        m = [x[2] for x in v if not x[0] and x[2] is not None]
        print(f'| {k} | {len(v)} | {sum(1 for x in v if x[0])} | '
              f'{pct(b,10):.0f} / {pct(b,50):.0f} / {pct(b,90):.0f} | '
              f'{pct(m,10):.0f} / {pct(m,50):.0f} / {pct(m,90):.0f} |')


if __name__ == '__main__':
    main()
