#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A trace's wakeups beside the same wakeups in its replay, one by one (docs/replay.md).

    schedlab run --machine M --kernel 6.18 --explain log.txt --trace replay.txt \
        -- replay TRACE --comm REGEX
    python3 bench/replay_wakeups.py TRACE replay.txt --explain log.txt --comm REGEX \
        [--rows FILE]

Both files are ftrace text (the real trace may be xz-compressed). For every `sched_waking`
of a selected task it takes the waker (the TASK-PID column: the task current on the waking's
CPU, whatever the context), the waker's CPU, the wakee's previous CPU (the waking's
target_cpu), what that CPU ran at the waking (idle, the wakee itself still in
`__schedule()`, or another task; not idle with a woken task queued there, as `idle_cpu()`
says, which also covers the switch-ins some CPUs do not record), the CPU chosen (the next
`sched_wakeup`'s target_cpu), and the waker's and the wakee's wakee_flips as
`record_wakee()` counts them from the file's own wakings (each waking charged to the task
the line names, interrupts included; per-CPU kthreads, by their comm, left out as wakees,
since `select_task_rq()` is not called for a task allowed on one CPU; a waking of a task
still queued counts too, which the kernel's does not; flips of tasks alive before the file
starts count from 0), hence `wake_wide()` on an LLC of --llc CPUs. The replay's side adds
the branch the decision log gives for the placement (matched by pid, at or up to 50 us
after the waking).

The output: per (wakee, waker kind) group, the state at the wakeups and where they went, on
each side; then, for wakings of a wakee whose prev is another, busy CPU, the delays from the
waking to the sched_wakeup, to the wakee's switch in and to the waker's own switch out (the
race that decides whether the waker's next dependency block survives a replay); then the
paired wakeups. Wakeups are paired by (wakee, waker): the n-th waking of a task by the same
waker (or by an interrupt / the idle task) in the trace against the n-th in the replay;
tasks by their last comm and, within one comm, by pid (the fork order). A replay that loses
blocks (its waker ran ahead) has fewer wakings, so late pairs drift; the summaries count
each side on its own. With --rows, one line per pair.
"""
import argparse
import collections
import lzma
import re
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S{4,5})\s+(\d+)\.(\d+):\s+(\w+):\s+(.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")
PERCPU_KTHREAD = re.compile(r"^(kworker/\d+:|ksoftirqd/|migration/|cpuhp/|idle_inject/|rcuc/)")
HZ = 250


def read_lines(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        for line in f:
            if not line.startswith("#"):
                yield line


def parse(path):
    for line in read_lines(path):
        m = LINE.match(line)
        if not m:
            continue
        frac = m.group(6)
        ns = int(m.group(5)) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])
        fields = dict(FIELD.findall(m.group(8)))
        # comm= values may hold spaces: the regex keeps the first word, enough here.
        yield dict(comm=m.group(1).strip(), pid=int(m.group(2)), cpu=int(m.group(3)),
                   flags=m.group(4), ns=ns, event=m.group(7), f=fields)


def context(flags):
    c = flags[2] if len(flags) > 2 else "."
    return {"h": "hardirq", "H": "hardirq", "s": "softirq", "z": "nmi", "Z": "nmi"}.get(c, "task")


def wakeups(path, selected):
    """Every sched_waking of a selected task, with the state around it."""
    curr = {}            # cpu -> pid current (TASK-PID of its latest event; switches)
    last_cpu = {}        # pid -> cpu it last ran on
    comms = {}
    flips = collections.defaultdict(int)
    decay = collections.defaultdict(int)
    last_wakee = {}
    pending = {}         # wakee pid -> its row, until its sched_wakeup
    to_run = {}          # wakee pid -> its row, until its switch in
    to_out = {}          # waker pid -> its rows, until its switch out
    rows = []
    queued = collections.defaultdict(set)  # cpu -> pids woken onto it, not yet seen running
    for e in parse(path):
        cpu, f, ev = e["cpu"], e["f"], e["event"]
        curr[cpu] = e["pid"]
        if e["pid"]:
            comms[e["pid"]] = e["comm"]
            last_cpu[e["pid"]] = cpu
            queued[cpu].discard(e["pid"])
        if ev == "sched_switch":
            nxt = int(f["next_pid"])
            if nxt in to_run:
                to_run.pop(nxt)["run_ns"] = e["ns"]
            for r in to_out.pop(int(f["prev_pid"]), []):
                r["waker_out_ns"] = e["ns"]
                r["waker_out_state"] = f["prev_state"]
            curr[cpu] = nxt
            queued[cpu].discard(nxt)
            if int(f["prev_pid"]) and f["prev_state"].startswith("R"):
                queued[cpu].add(int(f["prev_pid"]))
            if nxt:
                last_cpu[nxt] = cpu
                comms[nxt] = f["next_comm"]
            continue
        if ev == "sched_migrate_task":
            pid = int(f["pid"])
            if pid in queued[int(f["orig_cpu"])]:
                queued[int(f["orig_cpu"])].discard(pid)
                queued[int(f["dest_cpu"])].add(pid)
            continue
        if ev == "sched_waking":
            wakee = int(f["pid"])
            comms[wakee] = f.get("comm", "?")
            waker = e["pid"] if e["pid"] else ("idle", cpu)
            j = e["ns"] // (1_000_000_000 // HZ)
            if not PERCPU_KTHREAD.match(f.get("comm", "")):
                # kernel: record_wakee(), charged to current, whatever the context.
                if j > decay[waker] + HZ:
                    flips[waker] >>= 1
                    decay[waker] = j
                if last_wakee.get(waker) != wakee:
                    last_wakee[waker] = wakee
                    flips[waker] += 1
            if wakee not in selected(comms.get(wakee, ""), wakee):
                continue
            prev = int(f["target_cpu"])
            on_prev = curr.get(prev, 0)
            if on_prev == 0 and queued[prev]:
                # kernel: idle_cpu() is false with a task queued (the woken task's switch
                # in is not recorded on some CPUs: data/traces/README.md).
                on_prev = min(queued[prev])
            row = dict(ns=e["ns"], wakee=wakee, waker=e["pid"], waker_comm=e["comm"],
                       ctx=context(e["flags"]), waker_cpu=cpu, prev=prev,
                       prev_state="idle" if on_prev == 0 else
                       ("wakee" if on_prev == wakee else "busy"),
                       prev_task=on_prev,
                       waker_flips=flips[waker] if e["pid"] else None,
                       wakee_flips=flips[wakee], target=None, branch="")
            pending[wakee] = row
            to_run[wakee] = row
            if e["pid"] and row["ctx"] == "task":
                to_out.setdefault(e["pid"], []).append(row)
            rows.append(row)
        elif ev == "sched_wakeup":
            row = pending.pop(int(f["pid"]), None)
            if row is not None:
                row["target"] = int(f["target_cpu"])
                row["wakeup_ns"] = e["ns"]
            if int(f["pid"]) != curr.get(int(f["target_cpu"])):
                queued[int(f["target_cpu"])].add(int(f["pid"]))
    return rows, comms


def explain_log(path):
    """pid -> [(microseconds, branch)], from a decision log's select_task_rq lines."""
    out = collections.defaultdict(list)
    rx = re.compile(r"^\s*(\d+)\.(\d+)\s+cpu\d+\s+select_task_rq\s+pid (\d+) \(.*?\) "
                    r"prev cpu\d+ -> cpu\d+: (.*)$")
    with open(path) as f:
        for line in f:
            m = rx.match(line)
            if m:
                us = int(m.group(1)) * 1_000_000 + int(m.group(2).ljust(6, "0")[:6])
                out[int(m.group(3))].append((us, m.group(4).strip()))
    return out


def klass(r):
    if r["target"] is None:
        return "not placed"
    if r["target"] == r["prev"]:
        return "both" if r["waker_cpu"] == r["prev"] else "prev"
    return "waker's" if r["target"] == r["waker_cpu"] else "other"


def wide(r, llc):
    if r["waker_flips"] is None:
        return None
    hi, lo = max(r["waker_flips"], r["wakee_flips"]), min(r["waker_flips"], r["wakee_flips"])
    return not (lo < llc or hi < lo * llc)


def role(r, names):
    if r["ctx"] != "task" or r["waker"] == 0:
        return "irq/idle"
    return names.get(r["waker"], "other task")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("replay")
    ap.add_argument("--explain", help="the replay run's --explain log")
    ap.add_argument("--comm", default=".", help="the replay's --comm (ECMAScript ~ Python re)")
    ap.add_argument("--llc", type=int, default=2, help="sd_llc_size of the traced machine")
    ap.add_argument("--rows", help="write one line per paired wakeup here")
    a = ap.parse_args()
    rx = re.compile(a.comm)

    def selected_in(path):
        seen = {}

        def sel(comm, pid):
            if pid in seen:
                return seen
            if pid and rx.search(comm):
                seen[pid] = len(seen)
            return seen
        return sel, seen

    sel_t, order_t = selected_in(a.trace)
    rows_t, comms_t = wakeups(a.trace, sel_t)
    sel_r, order_r = selected_in(a.replay)
    rows_r, comms_r = wakeups(a.replay, sel_r)
    branches = explain_log(a.explain) if a.explain else {}
    for r in rows_r:
        # The placement is logged when select_task_rq() runs: at the waking, or at the
        # wake-list IPI's handler on the target CPU a little later.
        us = r["ns"] // 1000
        near = [b for t, b in branches.get(r["wakee"], []) if 0 <= t - us <= 50]
        r["branch"] = near[0] if near else "?"

    # Tasks paired by their last comm and, among those of one comm, by pid (fork order).
    def names(order, comms):
        seq, out = collections.Counter(), {}
        for pid in sorted(order):
            c = comms.get(pid, "?")
            out[pid] = f"{c}#{seq[c]}"
            seq[c] += 1
        return out
    names_t, names_r = names(order_t, comms_t), names(order_r, comms_r)

    def groups(rows, nm):
        g = collections.defaultdict(list)
        for r in rows:
            if r["wakee"] in nm:
                g[(nm[r["wakee"]], role(r, nm))].append(r)
        return g
    gt, gr = groups(rows_t, names_t), groups(rows_r, names_r)

    print(f"# trace {a.trace}: {len(rows_t)} wakings of selected tasks; "
          f"replay {a.replay}: {len(rows_r)}")
    print("# per group (wakee <- waker): count; where the waker ran (on the wakee's prev or "
          "another CPU); prev's state at the waking; class of the CPU chosen; "
          f"wake_wide() from the file's own flips (llc {a.llc}); the replay's branches")
    for key in sorted(set(gt) | set(gr)):
        for side, g in (("trace", gt), ("replay", gr)):
            rs = g.get(key, [])
            if not rs:
                print(f"{key[0]} <- {key[1]} [{side}]: none")
                continue
            n = len(rs)
            remote = [r for r in rs if r["waker_cpu"] != r["prev"]]
            st = collections.Counter((r["prev_state"], klass(r)) for r in remote)
            loc = collections.Counter(klass(r) for r in rs if r["waker_cpu"] == r["prev"])
            ww = collections.Counter(wide(r, a.llc) for r in remote)
            print(f"{key[0]} <- {key[1]} [{side}]: {n} wakings; waker on prev {n - len(remote)} "
                  f"({dict(loc)}); on another CPU {len(remote)}: prev state -> class "
                  f"{dict(sorted(st.items()))}; wake_wide {dict(ww)}")
            if side == "replay" and branches:
                br = collections.Counter(
                    (r["prev_state"], r["branch"].split(";")[0]) for r in remote)
                print(f"    replay branches (waker on another CPU; prev state, first branch): "
                      f"{dict(sorted(br.items()))}")
    # The race that decides whether a dependency block survives: a task wakes its partner on
    # another (busy) CPU and blocks a little later; if the partner runs and wakes it back
    # before it has switched out, the replay's block is lost (its waker ran ahead).
    def pct(v, q):
        return v[min(len(v) - 1, int(q * len(v)))]
    print("# wakings by a task of a wakee whose prev is another CPU, busy: microseconds from "
          "the waking to the sched_wakeup, to the wakee's switch in, to the waker's own switch "
          "out (p10 / p50 / p90); how often the waker switched out before the wakee ran")
    for side, rows, nm in (("trace", rows_t, names_t), ("replay", rows_r, names_r)):
        for key in sorted({(nm[r["wakee"]], role(r, nm)) for r in rows if r["wakee"] in nm}):
            rs = [r for r in rows if r["wakee"] in nm and (nm[r["wakee"]], role(r, nm)) == key
                  and r["ctx"] == "task" and r["waker_cpu"] != r["prev"]
                  and r["prev_state"] == "busy" and "run_ns" in r and "waker_out_ns" in r
                  and "wakeup_ns" in r]
            if len(rs) < 10:
                continue
            cols = []
            for k in ("wakeup_ns", "run_ns", "waker_out_ns"):
                v = sorted((r[k] - r["ns"]) / 1000 for r in rs)
                cols.append(f"{pct(v, .1):.0f} / {pct(v, .5):.0f} / {pct(v, .9):.0f}")
            first = sum(1 for r in rs if r["waker_out_ns"] <= r["run_ns"])
            print(f"    {key[0]} <- {key[1]} [{side}]: {len(rs)}: wakeup {cols[0]}; wakee runs "
                  f"{cols[1]}; waker switches out {cols[2]}; waker out first {first}")

    # The state the wakee's prev CPU was in, in both, for the paired wakeups whose waker ran
    # on another CPU than prev in the trace.
    pairs = []
    for key in sorted(set(gt) & set(gr)):
        for t, r in zip(gt[key], gr[key]):
            pairs.append((key, t, r))
    cross = collections.Counter(
        (f"{t['prev_state']}/{klass(t)}", f"{r['prev_state']}/{klass(r)}")
        for key, t, r in pairs if t["waker_cpu"] != t["prev"])
    print("# paired wakeups whose trace waker ran on another CPU than prev: "
          "(trace prev state/class, replay prev state/class) -> count")
    for (tk, rk), c in sorted(cross.items(), key=lambda kv: -kv[1]):
        print(f"    {tk:14s} {rk:14s} {c}")
    if a.rows:
        with open(a.rows, "w") as f:
            f.write("# group | trace: us waker_cpu prev prev_state(task) target class flips "
                    "waker/wakee wide | replay: the same, branch\n")
            for key, t, r in pairs:
                def cell(x):
                    return (f"{x['ns'] / 1000:.1f} w{x['waker_cpu']} p{x['prev']} "
                            f"{x['prev_state']}({x['prev_task']}) -> {x['target']} {klass(x)} "
                            f"{x['waker_flips']}/{x['wakee_flips']} "
                            f"{'wide' if wide(x, a.llc) else '-'}")
                f.write(f"{key[0]}<-{key[1]} | {cell(t)} | {cell(r)} {r['branch']}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
