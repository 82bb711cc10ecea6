#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What follows a tbench task's waking of another on its own CPU, from an ftrace text trace (a
tracefs recording, or `schedlab replay ... --trace FILE`): docs/replay.md, "The tbench traces",
N = 4's involuntary switches.

For each sched_wakeup of a task whose comm starts with `tbench`, in a tbench task's context, onto
the waker's own CPU (the waker current there), it reads:
- the need-resched character of the sched_wakeup line (the flags' second character, `N` when
  TIF_NEED_RESCHED is set: sched_wakeup is emitted by ttwu_do_wakeup() after
  wakeup_preempt(), so on a kernel trace an `N` there that the sched_waking line does not show is
  the wakeup's own resched: enqueue_entity()'s update_curr() or check_preempt_wakeup_fair());
  schedlab's --trace writes `.` there always, so on a replay the column is not a decision;
- the waker's next switch out on that CPU, if no other waking by it comes first: its prev_state
  (R: preempted, S/D: slept) and the next task: the wakee, another task of the wakee's comm, or
  of the waker's;
- the waker's own history: its previous switch out (R or S), and, when it was S, the time from
  its own last waking to its switch in (its queue wait), in classes;
- between one task's successive `N` wakings, the CPU time it ran (switch in to switch out,
  summed), as percentiles;
- after a preemption (`R`) by another task than the wakee: that task's previous switch out,
  and whether it was woken (S) or switched out (R) less than 50 us before.

usage: wake_resched.py TRACE   (.xz and .zst are read through xz / zstd -d)
"""
import collections
import re
import sys

from ftrace_text import fields, open_text

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+([\d.]+):\s+(\w+):\s+(.*)$")


def wait_class(us):
    for bound in (10, 30, 60):
        if us < bound:
            return f"<{bound} us"
    return ">=60 us"


def analyse(path):
    curr = {}  # cpu -> pid current
    switched_in = {}  # pid -> time of its last switch in
    last_out = {}  # pid -> prev_state of its last switch out
    last_woken = {}  # pid -> time of its last sched_wakeup
    pending = {}  # cpu -> the last same-CPU waking by the current task
    by_flag = collections.Counter()
    by_history = collections.defaultdict(collections.Counter)
    by_wait = collections.defaultdict(collections.Counter)
    ran = collections.Counter()  # pid -> CPU time (s) up to its last switch out
    last_flagged = {}  # pid -> its CPU time at its last `N` waking
    gaps = []
    last_out_at = {}  # pid -> time of its last switch out
    other_next = collections.Counter()
    for line in open_text(path):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, cpu, flags, ts, event, rest = m.groups()
        cpu, pid, ts = int(cpu), int(pid), float(ts)
        if event == "sched_switch":
            f = fields(rest.replace(" ==> ", " "))
            prev, nxt, state = int(f["prev_pid"]), int(f["next_pid"]), f["prev_state"][0]
            if prev in switched_in:
                ran[prev] += ts - switched_in[prev]
            w = pending.pop(cpu, None)
            if w and w["waker"] == prev:
                if nxt == w["wakee"]:
                    to = "the wakee"
                elif f["next_comm"] == w["wakee_comm"]:
                    to = "another of the wakee's comm"
                elif f["next_comm"] == w["waker_comm"]:
                    to = "another of the waker's comm"
                else:
                    to = "another task"
                by_flag[(w["flag"], state, to)] += 1
                if state == "R" and nxt != w["wakee"]:
                    before = last_out.get(nxt, "?")
                    since = last_woken.get(nxt) if before == "S" else last_out_at.get(nxt)
                    recent = since is not None and (ts - since) * 1e6 < 50
                    other_next[(w["flag"], before, "< 50 us" if recent else ">= 50 us")] += 1
                by_history[w["history"]][(w["flag"], state)] += 1
                if w["history"] == "S":
                    by_wait[w["wait"]][(w["flag"], state)] += 1
            last_out[prev] = state
            last_out_at[prev] = ts
            curr[cpu] = nxt
            switched_in[nxt] = ts
        elif event == "sched_wakeup" and comm.startswith("tbench"):
            f = fields(rest)
            wakee = int(f["pid"])
            if int(f["target_cpu"]) == cpu and curr.get(cpu) == pid:
                if flags[1:2] == "N":
                    now = ran[pid] + ts - switched_in.get(pid, ts)
                    if pid in last_flagged:
                        gaps.append((now - last_flagged[pid]) * 1e6)
                    last_flagged[pid] = now
                wait = switched_in.get(pid, ts) - last_woken.get(pid, switched_in.get(pid, ts))
                pending[cpu] = {
                    "waker": pid, "wakee": wakee, "wakee_comm": f["comm"], "waker_comm": comm,
                    "flag": flags[1] if len(flags) > 1 else "?",
                    "history": last_out.get(pid, "?"), "wait": wait_class(wait * 1e6)}
            last_woken[wakee] = ts

    total = sum(by_flag.values())
    print(f"{path}: {total} same-CPU wakings of a tbench task followed by the waker's switch out")
    print("need-resched flag at sched_wakeup, the waker's next switch out, the next task:")
    for k, v in sorted(by_flag.items()):
        print(f"  {k[0]} {k[1]} {k[2]:<30} {v:7d}")

    def share(c):
        n = sum(c.values())
        flagged = sum(v for (fl, _), v in c.items() if fl == "N")
        pre = sum(v for (_, st), v in c.items() if st == "R")
        return f"{n:7d}  N {flagged / n:5.1%}  preempted {pre / n:5.1%}"

    print("by the waker's previous switch out:")
    for h, c in sorted(by_history.items()):
        print(f"  {h}: {share(c)}")
    print("waker's previous switch out S, by its queue wait (its waking to its switch in):")
    for w in ("<10 us", "<30 us", "<60 us", ">=60 us"):
        if w in by_wait:
            print(f"  {w:>7}: {share(by_wait[w])}")
    print("after a preemption by another task than the wakee: the need-resched flag, that task's "
          "previous switch out, and how long before it was woken (S) or switched out (R):")
    for k, v in sorted(other_next.items()):
        print(f"  {k[0]} {k[1]} {k[2]:>8} {v:7d}")
    if gaps:
        gaps.sort()
        q = ", ".join(f"p{int(x * 100)} {gaps[int(x * len(gaps))]:.0f}"
                      for x in (0.1, 0.25, 0.5, 0.75, 0.9))
        print(f"CPU time (us) a task ran between its successive N wakings ({len(gaps)}): {q}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        analyse(p)
