#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""perf bench sched messaging's wake-all in a trace, wakee by wakee, and the autogroup's
loads at it (docs/replay.md, "The wake-all's turn is wake_wide()", lane replay8).

    python3 bench/replay_wake_all.py data/traces/perf_messaging_g1_l200.trace.txt.xz
    python3 bench/replay_wake_all.py data/traces/tracecmd_perf_messaging_g2_l100.report.txt.xz
    schedlab replay TRACE --comm '^sched-messaging$' --trace r.txt; python3 bench/replay_wake_all.py r.txt

Reads ftrace text (tracefs, `trace-cmd report`, a replay's `--trace`), plain or xz. The main
process is the task with the most sched_process_fork events; the wake-all is the longest run
of its sched_wakings of its children with less than 50 us between two. Each wakee is
classed by the CPU of its next sched_wakeup against the waking's CPU and its previous CPU
(target_cpu): p its previous CPU, w the waker's, B both, o another. Printed: the children
and how long the forks took, the time from the last child's block to the go, the classes
(run-length coded) and where the first wakee on its previous CPU after a waker's-CPU one
comes (the turn).

The loads (an estimate by PELT from the trace's times, not the kernel's figures): each
child's load is taken as 1024 at its last block before the go (a new task's load_avg,
which its ~0.1 ms run barely moves) decayed by y^32 = 1/2 per 1.024 ms period to the go;
the main process adds 1024 on its CPU; then calc_group_shares() splits the group's 1024 by
those loads. Other tasks of the recorder's session are not in the trace and not counted.
"""
import argparse
import itertools
import lzma
import re
import sys
from collections import Counter

TASK = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]")
STAMP = re.compile(r"\s(\d+\.\d+):")
EVENT = re.compile(r":\s+(sched_\w+):")


def events_of(path):
    opener = lzma.open if path.endswith(".xz") else open
    out = []
    with opener(path, "rt") as f:
        for line in f:
            m = TASK.match(line)
            e = EVENT.search(line)
            if not m or not e:
                continue
            out.append((float(STAMP.search(line).group(1)), int(m.group(3)), int(m.group(2)),
                        e.group(1), line))
    return out


def wakee_pid(line):
    m = re.search(r"\bpid=(\d+)", line) or re.search(r"sched_wakeup:\s+\S+:(\d+)", line)
    return int(m.group(1))


def cpu_field(line):
    m = re.search(r"target_cpu=(\d+)", line) or re.search(r"CPU:(\d+)", line)
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    a = ap.parse_args()
    ev = events_of(a.trace)
    forks = [e for e in ev if e[3] == "sched_process_fork"]
    if not forks:
        sys.exit(f"{a.trace}: no sched_process_fork")
    main_pid = Counter(e[2] for e in forks).most_common(1)[0][0]
    kid_forks = [e for e in forks if e[2] == main_pid]
    kids = {int(re.search(r"child_pid=(\d+)", e[4]).group(1)) for e in kid_forks}
    wakings = [(i, e) for i, e in enumerate(ev)
               if e[3] == "sched_waking" and e[2] == main_pid and wakee_pid(e[4]) in kids]
    if not wakings:
        sys.exit(f"{a.trace}: the main process (pid {main_pid}) wakes none of its children")
    bursts, cur = [], []
    for i, e in wakings:
        if cur and e[0] - cur[-1][1][0] > 50e-6:
            bursts.append(cur)
            cur = []
        cur.append((i, e))
    bursts.append(cur)
    burst = max(bursts, key=len)
    go = burst[0][1][0]
    classes = []
    for i, e in burst:
        p, prev, waker_cpu = wakee_pid(e[4]), cpu_field(e[4]), e[1]
        ran = next((cpu_field(x[4]) for x in ev[i + 1:i + 200]
                    if x[3] == "sched_wakeup" and wakee_pid(x[4]) == p), -1)
        classes.append("B" if ran == prev == waker_cpu else "w" if ran == waker_cpu
                       else "p" if ran == prev else "o")
    s = "".join(classes)
    turn = next((k + 1 for k in range(1, len(s)) if s[k] == "p" and "w" in s[:k]), None)
    blocks = {}
    for e in ev:
        if e[0] < go and e[3] == "sched_switch" and e[2] in kids and \
                re.search(r"( S ==>|prev_state=S )", e[4]):
            blocks[e[2]] = (e[1], e[0])
    print(f"{a.trace}: main process {main_pid}, {len(kids)} children forked over "
          f"{(kid_forks[-1][0] - kid_forks[0][0]) * 1e3:.1f} ms; the last child blocked "
          f"{(go - max(t for _, t in blocks.values())) * 1e6:.0f} us before the go at {go:.6f} "
          f"(waker on cpu{burst[0][1][1]})")
    print(f"wake-all, {len(s)} wakees: " +
          " ".join(f"{len(list(g))}{k}" for k, g in itertools.groupby(s)) +
          (f"; turns at wakee {turn}" if turn else "; no turn"))
    y = 0.5 ** (1 / 32)
    load = Counter()
    for cpu, t in blocks.values():
        load[cpu] += 1024 * y ** ((go - t) / 1.024e-3)
    load[burst[0][1][1]] += 1024
    total = sum(load.values())
    print("group load by cpu (estimate): " +
          ", ".join(f"cpu{c} {load[c]:.0f}, entity {1024 * load[c] / total:.0f}"
                    for c in sorted(load)))


if __name__ == "__main__":
    main()
