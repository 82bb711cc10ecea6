#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where tbench's time goes, from an ftrace text trace (a tracefs recording of the real run,
or `schedlab run --trace FILE` of the model): docs/validation.md, "tbench on this host: real
against the model".

Counts, for the tasks whose comm is `tbench` or `tbench_srv` (the parent and the daemon
included, as comms cannot tell them apart; they wake a few times a second):
- wakeups (sched_waking) and how often the wakee's target CPU is the waker's own CPU, and how
  often a client and its server (the pair: the wakee of a client's waking) share a CPU;
- sched_switch away from a tbench task: prev_state R (preempted) or S (slept);
- migrations (sched_migrate_task) of tbench tasks;
- switches per second and the mean run length of a tbench task (switch-in to switch-out);
- the idle share (time the CPUs run swapper).
The window: from the first tbench waking to the last event (the whole recording's run).

usage: trace_pairs.py TRACE [TRACE...]   (.xz and .zst are read through xz / zstd -d)
"""
import collections
import re
import sys

from ftrace_text import fields, open_text

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s+(.*)$")
TB = ("tbench", "tbench_srv")


def analyse(path):
    wakes = same_cpu = 0
    pair_cpu = collections.Counter()
    sw_r = sw_s = sw_other = 0
    migr = 0
    runs = 0
    run_time = 0.0
    on_cpu = {}  # cpu -> (pid, since, is_tbench)
    idle_time = collections.Counter()
    first = last = None
    comm_of = {}
    for line in open_text(path):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, cpu, ts, ev, rest = m.group(1).strip(), int(m.group(2)), int(m.group(3)), \
            float(m.group(4)), m.group(5), m.group(6)
        if ev == "sched_waking":
            f = fields(rest)
            if f.get("comm") in TB and comm in TB:
                if first is None:
                    first = ts
                wakes += 1
                if int(f["target_cpu"]) == cpu:
                    same_cpu += 1
        if first is None:
            if ev == "sched_switch":
                f = fields(rest.replace(" ==> ", " "))
                on_cpu[cpu] = (int(f["next_pid"]), None, f["next_comm"] in TB)
            continue
        last = ts
        if ev == "sched_migrate_task":
            f = fields(rest)
            if f.get("comm") in TB:
                migr += 1
        elif ev == "sched_switch":
            f = fields(rest.replace(" ==> ", " "))
            prev_tb = f["prev_comm"] in TB
            if prev_tb:
                st = f["prev_state"]
                if st.startswith("R"):
                    sw_r += 1
                elif st.startswith("S") or st.startswith("D"):
                    sw_s += 1
                else:
                    sw_other += 1
            prev = on_cpu.get(cpu)
            if prev and prev[1] is not None:
                if prev[2]:
                    runs += 1
                    run_time += ts - prev[1]
                if prev[0] == 0:
                    idle_time[cpu] += ts - prev[1]
            on_cpu[cpu] = (int(f["next_pid"]), ts, f["next_comm"] in TB)
    span = (last - first) if first is not None else 0
    ncpu = max(on_cpu) + 1 if on_cpu else 1
    for cpu, (pid, since, _) in on_cpu.items():
        if pid == 0 and since is not None:
            idle_time[cpu] += last - since
    switches = sw_r + sw_s + sw_other
    print(f"{path}: {span:.3f} s from the first tbench waking, {ncpu} CPUs")
    print(f"  wakeups {wakes} ({wakes / span:.0f}/s); onto the waker's CPU {same_cpu} "
          f"({100 * same_cpu / max(wakes, 1):.1f}%)")
    print(f"  tbench switch-outs {switches} ({switches / span:.0f}/s): preempted (R) "
          f"{100 * sw_r / max(switches, 1):.1f}%, slept {100 * sw_s / max(switches, 1):.1f}%")
    print(f"  migrations of tbench tasks {migr} ({migr / span:.1f}/s)")
    print(f"  tbench run length mean {1e6 * run_time / max(runs, 1):.2f} us over {runs} runs")
    print(f"  idle {100 * sum(idle_time.values()) / (span * ncpu):.1f}% of {ncpu} CPUs "
          f"(per CPU: {', '.join(f'{100 * idle_time[c] / span:.1f}' for c in sorted(on_cpu))})")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        analyse(p)
