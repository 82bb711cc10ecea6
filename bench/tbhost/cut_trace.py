#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Cut a time window out of a tracefs text trace (`/sys/kernel/tracing/trace`), for the tree.

Keeps the header's comment lines (the `entries-in-buffer` line rewritten to the lines kept, so
the `#P:N` stays) and every event line whose timestamp t satisfies FROM <= t - T0 < FROM + LEN,
T0 being the trace's first event. Nothing else is changed: the window starts with tasks that
already exist and CPUs mid-run, which `schedlab replay` reports (docs/replay.md, "What real
traces need"). Prints the window's absolute bounds and the counts on stderr.

usage: cut_trace.py TRACE(.xz) FROM_S LEN_S > OUT.txt      (then xz -9 OUT.txt)
"""
import re
import subprocess
import sys

TS = re.compile(r"^\s*.+?-\d+\s+\[\d+\]\s+\S+\s+(\d+)\.(\d+):")


def usec(m):
    return int(m.group(1)) * 1000000 + int(m.group(2).ljust(6, "0")[:6])


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, start, length = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    src = subprocess.Popen(["xz", "-dc", path], stdout=subprocess.PIPE, text=True).stdout \
        if path.endswith(".xz") else open(path)
    header, kept, t0, seen = [], [], None, 0
    for line in src:
        if line.startswith("#"):
            if not kept and t0 is None:
                header.append(line)
            continue
        m = TS.match(line)
        if not m:
            sys.exit(f"{path}: not an event line: {line.rstrip()}")
        t = usec(m)
        seen += 1
        if t0 is None:
            t0 = t
            lo, hi = t0 + round(start * 1e6), t0 + round((start + length) * 1e6)
        if lo <= t < hi:
            kept.append(line)
    for h in header:
        if h.startswith("# entries-in-buffer"):
            h = re.sub(r"\d+/\d+", f"{len(kept)}/{len(kept)}", h, count=1)
        sys.stdout.write(h)
    sys.stdout.writelines(kept)
    print(f"{path}: first event {t0 / 1e6:.6f}; kept [{lo / 1e6:.6f}, {hi / 1e6:.6f}): "
          f"{len(kept)} of {seen} events", file=sys.stderr)


if __name__ == "__main__":
    main()
