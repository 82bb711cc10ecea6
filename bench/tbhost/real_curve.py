#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per-op CPU time of the real tbench runs on this host (docs/validation.md, "tbench on this
host: real against the model").

Reads the logs of the lead's runs, docs/validation/tbhost/curve.log (curve.sh) and pinned.log
(a line per run: the Throughput line of tbench, then /proc/stat's aggregate `cpu` line (curve)
or the `cpu1` line (pinned) before and after the run) and prints, per run: MB/s, ops/s (MB/s
over the loadfile's bytes per line), the busy share of the CPUs and its split (user, system,
softirq), and the CPU time per op.

Bytes per op: dbench 4.0's client.txt (Debian 12's dbench package, /usr/share/dbench/client.txt,
458344 lines) moves 2488062937 payload bytes per pass (ReadX ret_size and WriteX size summed),
5428.37 B per line (bench/tbhost/loadfile_sizes.py prints it). tbench counts exactly those bytes
(sockio.c nb_readx()/nb_writex(): child->bytes += ret_size / size), so ops/s = B/s / 5428.4.

usage: real_curve.py curve.log pinned.log
"""
import re
import sys

BYTES_PER_LINE = 5428.37  # loadfile_sizes.py on client.txt


def parse(path, ncpu):
    rows = []
    for line in open(path):
        m = re.search(r"n=(\d+) rep=(\d+) Throughput ([\d.]+) MB/sec", line)
        if not m:
            continue
        stats = re.findall(r"cpu\d? +([\d ]+)", line)
        a = [int(x) for x in stats[0].split()]
        b = [int(x) for x in stats[1].split()]
        d = [y - x for x, y in zip(a, b)]
        user, nice, system, idle, iowait, irq, softirq = d[:7]
        total = sum(d[:8])
        busy = total - idle - iowait
        mbs = float(m.group(3))
        ops = mbs * 1e6 / BYTES_PER_LINE
        cpu_us = ncpu * busy / total / ops * 1e6
        rows.append((int(m.group(1)), int(m.group(2)), mbs, ops, busy / total, user / busy,
                     system / busy, softirq / busy, cpu_us, cpu_us * user / busy,
                     cpu_us * (system + softirq + irq) / busy))
    return rows


def show(title, rows):
    print(title)
    print(f"{'N':>3} {'rep':>3} {'MB/s':>8} {'ops/s':>8} {'busy':>5} {'user':>5} {'sys':>5} "
          f"{'sirq':>5} {'us/op':>6} {'user':>5} {'kern':>5}")
    for r in sorted(rows):
        print(f"{r[0]:3} {r[1]:3} {r[2]:8.1f} {r[3]:8.0f} {r[4]:5.2f} {r[5]:5.2f} {r[6]:5.2f} "
              f"{r[7]:5.2f} {r[8]:6.1f} {r[9]:5.1f} {r[10]:5.1f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: real_curve.py curve.log pinned.log")
    show("unpinned, 2 CPUs (curve.sh: tbench -t 10 N, stat over the whole run)",
         parse(sys.argv[1], 2))
    print()
    show("pinned to CPU 1 (taskset -c 1 tbench_srv; taskset -c 1 tbench -t 8 N 127.0.0.1; "
         "cpu1's stat)",
         parse(sys.argv[2], 1))
