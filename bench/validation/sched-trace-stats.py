#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Scheduler statistics of one `perf bench sched messaging` run, from a trace.

Reads the text of either `perf script` (after `perf record -a -e sched:sched_switch
-e sched:sched_waking -e sched:sched_wakeup -e sched:sched_wakeup_new ...`) or
`schedlab run --trace FILE` (ftrace text), and prints, for the benchmark's tasks
(comm sched-messaging):

  - switches out of receivers and senders by state: S (slept) or R (preempted), and
    how many preemptions came right after a wakeup onto that CPU;
  - run lengths (switch-in to switch-out) per role and state, p10/p50/p90;
  - where wakeups went (sched_waking is emitted on the waker's CPU): to the waker's
    CPU (and how often although the wakee's previous CPU was idle, which mainline's
    select_idle_sibling() does not do within an LLC) or another, and whether that other
    CPU was idle;
  - fork placement (sched_wakeup_new targets), the gap between forks and each child's
    first run (creation to first sleep);
  - idle periods per CPU within the run.

Roles follow perf's messaging.c: per group, 20 receivers are created, then 20 senders,
so in pid order the first 20 children of each group receive. Pass the group count.

  sched-trace-stats.py TRACE GROUPS

Sets a real run beside a simulated one (docs/validation.md, "This machine"; the
session-4 "Fifth look" in its history used it).
"""
import collections
import re
import sys

EVENT = re.compile(r"\[(\d+)\]\s.*?(\d+\.\d+):\s+(?:sched:)?(\w+):\s+(.*)")
SWITCH = re.compile(r"prev_comm=(.*?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
WAKE = re.compile(r"comm=(.*?) pid=(\d+) .*target_cpu=(\d+)")
COMM = "sched-messaging"


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: sched-trace-stats.py TRACE GROUPS")
    path, groups = sys.argv[1], int(sys.argv[2])
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            m = EVENT.search(line)
            if m and m.group(3) in ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new"):
                events.append((int(m.group(1)), float(m.group(2)), m.group(3), m.group(4)))
    if not events:
        sys.exit(f"{path}: no sched_switch/sched_waking/sched_wakeup_new events")

    # The benchmark's pids: the smallest is perf's main task, then the children.
    pids = set()
    for _, _, ev, rest in events:
        m = SWITCH.search(rest) if ev == "sched_switch" else WAKE.search(rest)
        if not m:
            continue
        if ev == "sched_switch":
            if m.group(1) == COMM:
                pids.add(int(m.group(2)))
            if m.group(4) == COMM:
                pids.add(int(m.group(5)))
        elif m.group(1) == COMM:
            pids.add(int(m.group(2)))
    pids = sorted(pids)
    if len(pids) < 1 + 40 * groups:
        sys.exit(f"{path}: {len(pids)} {COMM} tasks, expected 1 + 40 x {groups}")
    role = {pids[0]: "main"}
    for g in range(groups):
        for i, p in enumerate(pids[1 + 40 * g: 1 + 40 * (g + 1)]):
            role[p] = "recv" if i < 20 else "send"

    out_state = collections.Counter()
    runs = collections.defaultdict(list)
    woken_here = {}  # cpu -> a wakeup onto it happened since its last switch
    idle = {}  # cpu -> idle since
    idle_periods = collections.defaultdict(list)
    run_start = {}
    last_cpu = {}  # pid -> the CPU it last ran on
    wake_where = collections.Counter()
    forks, fork_gaps, first_run, started = {}, [], {}, {}
    last_fork = None
    t_first = t_last = None
    for cpu, ts, ev, rest in events:
        if ev == "sched_switch":
            m = SWITCH.search(rest)
            if not m:
                continue
            prev, state, nxt = int(m.group(2)), m.group(3), int(m.group(5))
            if prev in role or nxt in role:
                t_first = ts if t_first is None else t_first
                t_last = ts
            if prev in role and role[prev] != "main":
                kind = "R" if state.startswith("R") else "S"
                label = f"{role[prev]} {kind}"
                if kind == "R" and woken_here.get(cpu):
                    label += " after a wakeup"
                out_state[label] += 1
                if prev in run_start:
                    runs[f"{role[prev]} {kind}"].append((ts - run_start[prev]) * 1e6)
                if prev in started and prev not in first_run:
                    first_run[prev] = (ts - started[prev]) * 1e6
            woken_here[cpu] = False
            if nxt == 0:
                idle[cpu] = ts
            elif cpu in idle:
                if t_first is not None:
                    idle_periods[cpu].append((ts - idle.pop(cpu)) * 1e6)
                else:
                    idle.pop(cpu)
            run_start[nxt] = ts
            last_cpu[nxt] = cpu
            if nxt in forks and nxt not in started:
                started[nxt] = ts
        elif ev in ("sched_waking", "sched_wakeup"):
            m = WAKE.search(rest)
            if not m:
                continue
            pid, target = int(m.group(2)), int(m.group(3))
            if ev == "sched_wakeup":
                woken_here[target] = True
                continue
            if pid not in role:
                continue
            if target == cpu:
                wake_where["to the waker's CPU"] += 1
                prev = last_cpu.get(pid)
                if prev is not None and prev != cpu and prev in idle:
                    # Mainline's select_idle_sibling() returns an idle previous CPU that
                    # shares the LLC before it settles for a busy target.
                    wake_where["  of which prev CPU idle"] += 1
            elif target in idle:
                wake_where["to another CPU, idle"] += 1
            else:
                wake_where["to another CPU, busy"] += 1
        else:  # sched_wakeup_new
            m = WAKE.search(rest)
            if m and m.group(1) == COMM:
                forks[int(m.group(2))] = int(m.group(3))
                if last_fork is not None:
                    fork_gaps.append((ts - last_fork) * 1e6)
                last_fork = ts

    print(f"{path}: {len(role) - 1} children, {groups} group(s), span {t_last - t_first:.4f} s")
    print("switches out (state, and for R whether a wakeup onto that CPU preceded it):")
    for k in sorted(out_state):
        print(f"  {k:<28} {out_state[k]:7d}")
    print("run lengths, us (p10 / p50 / p90, total ms):")
    for k in sorted(runs):
        xs = runs[k]
        print(f"  {k:<12} n={len(xs):6d}  {pct(xs, .1):8.1f} {pct(xs, .5):8.1f} {pct(xs, .9):8.1f}  {sum(xs) / 1000:8.1f}")
    print("wakeups of the children (sched_waking):")
    for k in sorted(wake_where):
        print(f"  {k:<28} {wake_where[k]:7d}")
    if forks:
        print("forks: targets " + ", ".join(f"cpu{c}: {n}" for c, n in sorted(collections.Counter(forks.values()).items()))
              + f"; gap p50 {pct(fork_gaps, .5):.0f} us; first run p10/p50/p90 "
              f"{pct(list(first_run.values()), .1):.0f}/{pct(list(first_run.values()), .5):.0f}/"
              f"{pct(list(first_run.values()), .9):.0f} us")
    for cpu in sorted(idle_periods):
        xs = idle_periods[cpu]
        print(f"idle cpu{cpu}: {len(xs)} periods, p50 {pct(xs, .5):.0f} us, total {sum(xs) / 1000:.1f} ms")


if __name__ == "__main__":
    main()
