#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Page-level working set of tbench's client and server processes on this host (no hardware
counters in the guest): docs/validation.md, "tbench on this host: real against the model".

Starts `tbench_srv` and `tbench -t T N 127.0.0.1` (Debian 12's dbench 4.0 package), both pinned
to one CPU (taskset -c CPU), waits past the warm-up, then for each client and server process
(the tbench with the lowest pid is the parent, the tbench_srv with the lowest the daemon; both
skipped): writes 1 to /proc/PID/clear_refs (clears the pages' referenced bits), sleeps WINDOW
and reads Referenced and Rss from /proc/PID/smaps_rollup: the KiB of its pages touched in the
window (4 KiB pages: an upper bound on the bytes touched; kernel memory, the page cache and the
socket buffers are not in it). Each window is measured REPEAT times per process.

usage: wss.py [--cpu 1] [--clients 1] [--time 20] [--windows 0.001,0.01,0.1,1] [--repeat 3]
"""
import argparse
import os
import subprocess
import time


def rollup(pid):
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def pids(comm):
    res = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().strip() == comm:
                        res.append(int(d))
            except OSError:
                pass
    return sorted(res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu", default="1")
    ap.add_argument("--clients", type=int, default=1)
    ap.add_argument("--time", type=int, default=20)
    ap.add_argument("--windows", default="0.001,0.01,0.1,1")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    windows = [float(w) for w in a.windows.split(",")]
    if pids("tbench_srv") or pids("tbench"):
        raise SystemExit("wss.py: tbench or tbench_srv already running")
    srv = subprocess.Popen(["taskset", "-c", a.cpu, "tbench_srv"], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    cli = subprocess.Popen(["taskset", "-c", a.cpu, "tbench", "-t", str(a.time),
                            str(a.clients), "127.0.0.1"], stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(2.5)
        clients = pids("tbench")[1:]
        servers = pids("tbench_srv")[1:]
        print(f"# {a.clients} clients on CPU {a.cpu}: clients {clients}, servers {servers}")
        print(f"{'role':7} {'pid':>7} {'window_s':>8} {'referenced_kib':>14} {'rss_kib':>8}")
        for role, group in (("client", clients), ("server", servers)):
            for pid in group:
                for w in windows:
                    for _ in range(a.repeat):
                        with open(f"/proc/{pid}/clear_refs", "w") as f:
                            f.write("1")
                        time.sleep(w)
                        r = rollup(pid)
                        print(f"{role:7} {pid:7} {w:8.3f} {r['Referenced']:14} {r['Rss']:8}",
                              flush=True)
    finally:
        out, _ = cli.communicate()
        srv.terminate()
        srv.wait()
    for line in out.splitlines():
        if line.startswith("Throughput"):
            print("#", line)


if __name__ == "__main__":
    main()
