#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The size distributions of dbench 4.0's client.txt, for the tbench model's loadfile
(src/workload/tbench.cc, tbench_loadfile()).

Reads the loadfile (Debian 12's dbench 4.0-2 package installs it as
/usr/share/dbench/client.txt: 458344 lines, 26214401 bytes) and prints:
- the count of each operation;
- ReadX's ret_size (params[4]: sockio.c nb_readx() replies 39+20+ret_size bytes and counts
  ret_size), WriteX's size (params[3]: nb_writex() sends 39+20+size and counts size) and
  FIND_FIRST's count (params[4]: nb_findfirst() replies 39+90*count), each as {value, lines};
- the payload bytes per line (what tbench's MB/s counts, over all lines).
With --cxx, the three distributions as C++ initializers, as tbench.cc holds them.

usage: loadfile_sizes.py [--cxx] [CLIENT_TXT]
"""
import collections
import sys


def main():
    args = [a for a in sys.argv[1:] if a != "--cxx"]
    cxx = "--cxx" in sys.argv[1:]
    path = args[0] if args else "/usr/share/dbench/client.txt"
    ops = collections.Counter()
    readx = collections.Counter()
    writex = collections.Counter()
    find = collections.Counter()
    lines = 0
    with open(path, errors="replace") as f:
        for line in f:
            lines += 1
            p = line.split()
            if not p:
                continue
            ops[p[0]] += 1
            if p[0] == "ReadX":
                readx[int(p[4], 0)] += 1
            elif p[0] == "WriteX":
                writex[int(p[3], 0)] += 1
            elif p[0] == "FIND_FIRST":
                find[int(p[-2], 0)] += 1
    payload = sum(k * v for k, v in readx.items()) + sum(k * v for k, v in writex.items())

    def table(name, c):
        items = sorted(c.items())
        if cxx:
            body = ", ".join(f"{{{k}, {v}}}" for k, v in items)
            print(f"// {name}: {len(items)} values, {sum(c.values())} lines")
            print(body)
        else:
            mean = sum(k * v for k, v in items) / sum(c.values())
            print(f"{name}: {sum(c.values())} lines, {len(items)} values, mean {mean:.1f}")
            for k, v in sorted(items, key=lambda kv: -kv[1]):
                print(f"  {k:8} {v:7}")

    if not cxx:
        print(f"{path}: {lines} lines")
        for op, n in ops.most_common():
            print(f"  {op:24} {n:7} ({10000 * n / lines:.0f} per 10000)")
    table("ReadX ret_size", readx)
    table("WriteX size", writex)
    table("FIND_FIRST count", find)
    print(f"payload bytes per line: {payload / lines:.2f} ({payload} over {lines} lines)")


if __name__ == "__main__":
    main()
