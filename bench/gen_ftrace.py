#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A large synthetic tracefs text trace, for measuring how `schedlab replay` and
`schedlab latency` scale with the file (docs/replay.md, "Large traces").

On each of --cpus CPUs two tasks ping-pong as perf bench sched pipe's do: the
running one wakes the other (sched_waking, sched_wakeup on the same CPU) and
blocks (sched_switch prev_state=S ==> the other). CPUs take turns, one event a
microsecond, so timestamps are sorted, every switch-in is recorded and every
block has its waker: a trace the parser and the replay accept whole. Output
stops at the first round past --bytes.

    python3 bench/gen_ftrace.py --bytes 1G --cpus 512 > /tmp/big.trace.txt
"""
import argparse
import sys


def size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1:].upper() in units:
        return int(text[:-1]) * units[text[-1:].upper()]
    return int(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bytes", default="1G", help="stop after this much text (K, M, G suffixes)")
    ap.add_argument("--cpus", type=int, default=512, help="CPUs traced (two tasks on each)")
    a = ap.parse_args()
    limit, ncpu = size(a.bytes), a.cpus
    if ncpu < 1 or ncpu > 8192:
        sys.exit("gen_ftrace.py: --cpus: give 1 to 8192")
    out = sys.stdout
    head = f"# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:{ncpu}\n#\n"
    out.write(head)
    written = len(head)
    # the task current on each CPU: 0 or 1 of the pair (pids 1000 + 2c and 1001 + 2c)
    curr = [0] * ncpu
    us = 1_000_000
    while written < limit:
        chunk = []
        for c in range(ncpu):
            x = 1000 + 2 * c + curr[c]
            y = 1000 + 2 * c + (1 - curr[c])
            xc, yc = f"pipe-{x}", f"pipe-{y}"
            task = f"{xc}-{x}"
            for ev in (
                f"sched_waking: comm={yc} pid={y} prio=120 target_cpu={c:03}",
                f"sched_wakeup: comm={yc} pid={y} prio=120 target_cpu={c:03}",
                f"sched_switch: prev_comm={xc} prev_pid={x} prev_prio=120 prev_state=S ==> "
                f"next_comm={yc} next_pid={y} next_prio=120",
            ):
                flags = "d..2." if ev.startswith("sched_switch") else "d..3."
                chunk.append(f"{task:>16} [{c:03}] {flags} {us // 1000000:>5}.{us % 1000000:06}: {ev}\n")
                us += 1
            curr[c] = 1 - curr[c]
        text = "".join(chunk)
        out.write(text)
        written += len(text)


if __name__ == "__main__":
    main()
