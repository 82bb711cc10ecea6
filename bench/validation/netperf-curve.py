#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""netperf's per-instance rate against load, each run against its arm's 1-client mean and
against the published curve (data/reference/shared-runq-v3-bergamo-2s/netperf.csv), with the
run's counters that say which regime it is in.

    schedlab compare --machine bergamo-2s --kernel tip-2023-08 --runs 2 --seed 1 \\
        --json R.json -- netperf --instances 1,2,4,8,16,32,64,128,256,512 -t TCP_RR -l 1 -- -r 100
    bench/validation/netperf-curve.py R.json [MORE.json ...] [--csv PUBLISHED.csv]

Inputs are schedlab-results-v1 files of `compare` (or of `run --json`, one run each, whose
load is read from `--instances`); several may be given (e.g. other seeds or a longer -l).
Per run: trans/s per instance; its ratio to the mean of the same arm's 1-client runs among
the inputs (else to tip-2023-08's, marked "t"; "-" when neither ran); the published tip_norm for the same arm column
(tip, v3, v3_tgfix, v3_tgfix_noopt, by the kernel spec) at that load; the share of CPU time
idle (from the per-CPU busy and idle times, so including the kernel work idle CPUs do, such
as a wakeup's enqueue and its lock waits: spin-idle below); migrations per simulated second; where the
wakeups were placed (the summary's wakeup_targets: on the waker's CPU that was not prev,
on prev, on prev which was the waker's CPU, elsewhere); and, read from the run's summary
text, the CPU time spinning on locks in idle context and with a task current, and the
tg->load_avg line's waits, each as a share of all CPU time.
"""
import argparse
import csv
import json
import os
import re
import sys

ARM_COLUMN = [
    ("+shared_runq_v3_noopt+tg_ratelimit", "v3_tgfix_noopt"),
    ("+shared_runq_v3+tg_ratelimit", "v3_tgfix"),
    ("+shared_runq_v3", "v3"),
]


def arm_column(spec):
    for suffix, col in ARM_COLUMN:
        if spec.endswith(suffix):
            return col
    return "tip" if spec == "tip-2023-08" else None


def load_published(path):
    pub = {}
    if not path or not os.path.exists(path):
        return pub
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            n = int(row["clients"].split("-")[0])
            for col in ("tip", "v3", "v3_tgfix", "v3_tgfix_noopt"):
                pub[(col, n)] = float(row[col + "_norm"])
    return pub


def runs_of(path):
    with open(path) as f:
        d = json.load(f)
    if "runs" in d:
        return d["runs"]
    # `schedlab run --json`: one run; its load is --instances.
    argv = d.get("provenance", {}).get("argv", [])
    load = None
    for i, a in enumerate(argv):
        if a == "--instances" and i + 1 < len(argv):
            load = argv[i + 1]
    d["load"] = d.get("load") or load
    d["arm"] = d.get("arm") or d.get("provenance", {}).get("kernel_spec", "?")
    d.setdefault("run_index", 0)
    return [d]


def ms_field(text, pattern):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else 0.0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--csv", default=os.path.join(
        here, "..", "..", "data", "reference", "shared-runq-v3-bergamo-2s", "netperf.csv"))
    args = ap.parse_args()
    pub = load_published(args.csv)

    rows = []
    for path in args.results:
        for r in runs_of(path):
            m = {x["name"]: x["value"] for x in r.get("metrics", [])}
            if "trans/s/instance" not in m:
                print(f"{path}: a run without trans/s/instance (not netperf?)", file=sys.stderr)
                return 2
            seed = r.get("provenance", {}).get("seed", r.get("run_index"))
            length = ""
            argv = r.get("provenance", {}).get("argv", [])
            if "-l" in argv and argv.index("-l") + 1 < len(argv):
                length = argv[argv.index("-l") + 1]
            rows.append((r["arm"], int(r["load"]), f"{seed} -l {length}", m["trans/s/instance"],
                         r["sched_summary"], r.get("summary_text", ""),
                         r.get("schedule_digest", "")))

    base = {}
    for arm, load, _, v, *_ in rows:
        if load == 1:
            base.setdefault(arm, []).append(v)

    print("arm load seed trans/s/inst ratio published idle% migr/s "
          "wk:waker/prev/prev=waker/other% spin-idle% spin-task% tgline% digest")
    for arm, load, seed, v, s, text, digest in sorted(rows, key=lambda x: (x[0], x[1], x[2])):
        b, mark = (base[arm], "") if arm in base else (base.get("tip-2023-08"), "t")
        b = sum(b) / len(b) if b else None
        ratio = f"{v / b:.3f}{mark}" if b else "-"
        col = arm_column(arm)
        p = pub.get((col, load))
        busy, idle = sum(s["busy_ns"]), sum(s["idle_ns"])
        total_ms = (busy + idle) / 1e6
        sim = s["simulated_ns"] / 1e9
        w = s["wakeup_targets"]
        keys = ("waker_cpu", "prev_cpu", "prev_is_waker_cpu", "other_cpu")
        n = sum(w[k] for k in keys) or 1
        wk = "/".join(f"{100 * w[k] / n:.1f}" for k in keys)
        spin_task = ms_field(text, r"with a task current:.*?lock spinning ([0-9.]+)")
        spin_idle = ms_field(text, r"of the idle time, kernel work:.*?lock spinning ([0-9.]+)")
        line = ms_field(text, r"task group load_avg:.*?\(([0-9.]+) ms waited\);") + \
            ms_field(text, r"task group load_avg:.*;.*\(([0-9.]+) ms waited\)")
        print(f"{arm} {load} {seed} {v:.1f} {ratio} {p if p is not None else '-'} "
              f"{100 * idle / (busy + idle):.1f} {s['migrations'] / sim:.0f} {wk} "
              f"{100 * spin_idle / total_ms:.1f} {100 * spin_task / total_ms:.1f} "
              f"{100 * line / total_ms:.1f} {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
