#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""schbench's message thread and its CPU going idle (docs/replay.md, "schbench: why the message
thread's CPU goes idle").

  schbench_idle.py TRACE [TRACE ...]          (ftrace text, plain or .xz: a recording or a
                                               replay's --trace)

Per trace:
- msg->idle: the message thread's switches out (not R) to the idle task, by what the two
  workers were doing then (asleep; runnable, with who woke them; running on the other CPU);
- same-CPU hand-offs (a worker's sched_wakeup of the thread on its own CPU) by how the thread's
  previous block ended (its CPU left idle, or a task next) and the worker's next switch-out (R
  preempted, S blocked first);
- the workers' wakings of the thread on the other CPU, by what that CPU ran (idle or a task);
  a CPU whose idle-to-task switches are not recorded (CPU 1 of the 6.18 guest) is taken to run
  a task woken onto it while idle, and the task named by an event's TASK-PID column;
- silent posts: a worker's switch-out S after more than 1 ms on CPU with no waking of the thread
  in that run (a replay's dependency wake of a thread whose wait names the other worker wakes
  nothing).
"""
import collections
import sys

import ftrace_text

MSG, WORKER = 'schbench-msg', 'schbench-worker'


def scan(path):
    workers = set()
    st = {}  # pid -> (state, cpu, how)
    cur = {}  # cpu -> comm running
    idle = collections.Counter()
    handoff = collections.Counter()
    remote = collections.Counter()
    silent = collections.Counter()
    last_sleep = None
    pending = {}
    on, posted = {}, {}
    for comm, pid, cpu, _, ts, ev, F in ftrace_text.records(path):
        cpu, t, pid = int(cpu), float(ts), int(pid)
        if not comm.startswith('<idle>'):
            cur[cpu] = comm
        if ev == 'sched_switch':
            pp, npid, ps = int(F['prev_pid']), int(F['next_pid']), F['prev_state']
            for c, p in ((F['prev_comm'], pp), (F['next_comm'], npid)):
                if c == WORKER:
                    workers.add(p)
            if pp:
                st[pp] = ('R' if ps.startswith('R') else 'S', cpu, '')
            if npid:
                st[npid] = ('run', cpu, '')
            if pp in pending:
                handoff[(pending.pop(pp), ps[0])] += 1
            if F['prev_comm'] == WORKER and ps == 'S' and t - on.get(pp, t) > 1e-3:
                silent['woke the thread' if posted.get(pp) else 'no waking of the thread'] += 1
            if F['next_comm'] == WORKER:
                on[npid], posted[npid] = t, False
            if F['prev_comm'] == MSG and not ps.startswith('R'):
                last_sleep = 'idle' if npid == 0 else 'task'
                if npid == 0:
                    desc = []
                    for w in sorted(workers):
                        s, c, how = st.get(w, ('?', -1, ''))
                        if s == 'run':
                            desc.append('running' + (' (other CPU)' if c != cpu else ''))
                        elif s in ('R', 'W'):
                            desc.append('runnable' + (' here' if c == cpu else ' (other CPU)')
                                        + how)
                        else:
                            desc.append('asleep')
                    idle[' / '.join(sorted(desc))] += 1
            cur[cpu] = F['next_comm']
        elif ev in ('sched_wakeup', 'sched_wakeup_new'):
            p, tc = int(F['pid']), int(F['target_cpu'])
            st[p] = ('W', tc, ', woken by ' + comm.rsplit('-', 1)[0])
            if cur.get(tc, 'swapper').startswith('swapper'):
                cur[tc] = F['comm']
            if F['comm'] == MSG and comm.startswith(WORKER) and tc == cpu:
                pending[pid] = last_sleep
        elif ev == 'sched_waking' and F['comm'] == MSG and comm.startswith(WORKER):
            posted[pid] = True
            tc = int(F['target_cpu'])
            if tc != cpu:
                remote['idle' if cur.get(tc, 'swapper').startswith('swapper') else 'a task'] += 1
    return idle, handoff, remote, silent


def main():
    for path in sys.argv[1:]:
        idle, handoff, remote, silent = scan(path)
        print(f'{path}: msg->idle {sum(idle.values())}')
        for k, v in idle.most_common():
            print(f'  {v:5d}  {k}')
        print('  same-CPU hand-offs by the thread\'s previous block (its CPU left idle / a task '
              'next) -> the worker R / S: ' +
              ', '.join(f'{a} {b} {v}' for (a, b), v in sorted(handoff.items(), key=str)))
        print('  wakings of the thread on the other CPU, that CPU running: ' +
              ', '.join(f'{k} {v}' for k, v in sorted(remote.items())))
        print('  worker blocks after > 1 ms on CPU: ' +
              ', '.join(f'{k} {v}' for k, v in sorted(silent.items())))


if __name__ == '__main__':
    main()
