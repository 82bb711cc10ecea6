#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The fidelity tables of docs/replay.md: every trace in data/traces replayed on one machine.

    python3 bench/replay_fidelity.py --schedlab build/src/cli/schedlab \
        --machine data/machines/host-calibrated.json [--baseline host] [--out DIR]

For each trace it runs `schedlab replay` with the default options and with `--deps count`,
`--deps edge`, `--deps keep` and `--bursts gross` on --machine, and once with the defaults
on --baseline (a reference column: the uncalibrated `host`), then prints one markdown table
per trace (each replay cell: the figure and its ratio to the trace's, as the replay's own
table prints it) and a summary of which rows are within issue 17's aim (counts within 10%,
latency percentiles within 25%, CPUs busy and the span taken as counts, the wakeup-target
shares within 10 percentage points of the trace's). With --out, each replay's output is kept
there. Replays run one at a time; the figures are simulated (the machine's load does not move
them).

    python3 bench/replay_fidelity.py ... --spread data/traces/spread/draws.csv
    python3 bench/replay_fidelity.py ... --record-spread DIR --spread CSV

The real runs' spread (docs/replay.md, "The real runs' own spread"): with --spread, after each
trace's table, its draws (the shared trace and the recordings of its command in the CSV) beside
its default replay, and per column the rows within the stated tolerance: the aim, or the real
draws' [min, max] (the wakeup targets: each class's share within the draws' range). With
--record-spread, each recording DIR/NAME.rK.trace.txt.xz (and the shared trace) is replayed
once with the default options and the trace column of its table is written to the CSV, which
then holds the figures the script scores, from the same code path (data/traces/spread/README.md).

    python3 bench/replay_fidelity.py ... --set tbench

The tbench traces (docs/replay.md, "The tbench traces"): windows of the lead's recordings of
`tbench -t 3 N` on the 2-vCPU AMD guest, scored with the same rows and aim but reported after
the shared traces, with their own counts (issue 17's 40 rows stay the five shared traces').
Each of their replays, in every column, adds the trace's own options (`--softirq-wakes`: their
wakes are loopback sends, run in the sender's softirq). No real-run spread exists for them.
--set shared (or tbench) runs one set only; the default, all, runs both.
"""
import argparse
import csv
import glob
import os
import re
import statistics
import subprocess
import sys

TRACES = [
    ("perf_messaging_g1_l200", "perf_messaging_g1_l200.trace.txt.xz", "^sched-messaging$"),
    ("perf_messaging_g4_pipe_l100", "perf_messaging_g4_pipe_l100.trace.txt.xz", "^sched-messaging$"),
    ("perf_pipe_l50000", "perf_pipe_l50000.trace.txt.xz", "^sched-pipe$"),
    ("schbench_m1_t2_r3", "schbench_m1_t2_r3.trace.txt.xz", "^schbench"),
    ("tracecmd_perf_messaging_g2_l100", "tracecmd_perf_messaging_g2_l100.dat", "^sched-messaging$"),
]

# The tbench windows (data/traces/README.md): (name, file, comm, the trace's own options, added
# to every column). Not in issue 17's 40 rows; no real-run spread.
TBENCH_TRACES = [
    ("tbench_n1_t3_w1", "tbench_n1_t3_w1.trace.txt.xz", "^tbench", ["--softirq-wakes"]),
    ("tbench_n4_t3_w05", "tbench_n4_t3_w05.trace.txt.xz", "^tbench", ["--softirq-wakes"]),
]

# (column title, extra options, machine: "m" for --machine, "b" for --baseline)
COLUMNS = [
    ("flow (default)", [], "m"),
    ("`--deps count`", ["--deps", "count"], "m"),
    ("`--deps edge`", ["--deps", "edge"], "m"),
    ("`--deps keep`", ["--deps", "keep"], "m"),
    ("`--bursts gross`", ["--bursts", "gross"], "m"),
    ("uncalibrated `host`, flow", [], "b"),
]

ROWS = [  # (row title, the replay table's row name, number format)
    ("span (s)", "span (s)", "{:.6f}"),
    ("voluntary switches", "context switches, voluntary", "{:.0f}"),
    ("involuntary switches", "context switches, involuntary", "{:.0f}"),
    ("waking->run p50 (us)", "wakeup-to-run p50 (us)", "{:.1f}"),
    ("waking->run p99 (us)", "wakeup-to-run p99 (us)", "{:.1f}"),
    ("waking->run max (us)", "wakeup-to-run max (us)", "{:.1f}"),
    ("migrations", "migrations", "{:.0f}"),
    ("CPUs busy", "CPUs busy (sum of utilisation)", "{:.2f}"),
]
# The recordings of a shared trace's command are named after the trace, except the trace-cmd
# one's, which were recorded with tracefs (data/traces/spread/README.md).
RECORDED_AS = {"tracecmd_perf_messaging_g2_l100": "perf_messaging_g2_l100"}
TARGETS = ["wakeup target: waker's CPU", "wakeup target: previous CPU",
           "wakeup target: prev = waker's", "wakeup target: other CPU"]
ROW_RE = re.compile(r"^# (\S.*?)\s{2,}(\S+(?: \(\d+%\))?)\s+(\S+(?: \(\d+%\))?)\s+(\S+)$")


def parse(text):
    """The replay's table rows (name -> (trace, replay, ratio)) and its dependency lines."""
    rows, dep = {}, {}
    for line in text.splitlines():
        m = ROW_RE.match(line)
        if m:
            rows[m.group(1).strip()] = (m.group(2), m.group(3), m.group(4))
        m = re.match(r"# dependency waits: (\d+) slept until their wake, (\d+) found it", line)
        if m:
            dep["slept"], dep["first"] = int(m.group(1)), int(m.group(2))
        m = re.search(r"; (\d+) found more wakes than that one", line)
        if m:
            dep["piled"] = int(m.group(1))
        m = re.match(r"# flow control \(--deps (?:flow|reply)\): (\d+) dependency wakes", line)
        if m:
            dep["held"] = int(m.group(1))
    return rows, dep


def count_of(cell):
    return float(cell.split(" ")[0]) if cell not in ("-", "") else None


def run(schedlab, traces_dir, machine, trace, comm, extra, out_path):
    cmd = [schedlab, "replay", os.path.join(traces_dir, trace), "--comm", comm,
           "--machine", machine, "--quiet"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"replay_fidelity: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    if out_path:
        with open(out_path, "w") as f:
            f.write("$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr)
    return parse(p.stdout)


def shares(rows, side):
    counts = [count_of(rows[t][side]) for t in TARGETS]
    total = sum(counts)
    return [round(100 * c / total) if total else 0 for c in counts], total


def within_aim(rows):
    """Row names within the aim, for the summary."""
    ok = []
    for title, name, kind in [("voluntary", "context switches, voluntary", 0.10),
                              ("involuntary", "context switches, involuntary", 0.10),
                              ("p50", "wakeup-to-run p50 (us)", 0.25),
                              ("p99", "wakeup-to-run p99 (us)", 0.25),
                              ("migrations", "migrations", 0.10),
                              ("CPUs busy", "CPUs busy (sum of utilisation)", 0.10),
                              ("span", "span (s)", 0.10)]:
        t, r = count_of(rows[name][0]), count_of(rows[name][1])
        # A count of 0 in the trace is within the aim only at 0 (the tbench windows'
        # migrations; no shared trace has a 0 row, so their 40 rows do not move).
        if t is not None and r is not None and abs(r - t) <= kind * t:
            ok.append(title)
    (ts, _), (rs, _) = shares(rows, 0), shares(rows, 1)
    if all(abs(a - b) <= 10 for a, b in zip(ts, rs)):
        ok.append("wakeup-target shares")
    return ok


SPREAD_ROWS = [  # (CSV column, the replay table's row, within_aim()'s title, None: not scored)
    ("span_s", "span (s)", "span"),
    ("voluntary", "context switches, voluntary", "voluntary"),
    ("involuntary", "context switches, involuntary", "involuntary"),
    ("p50_us", "wakeup-to-run p50 (us)", "p50"),
    ("p99_us", "wakeup-to-run p99 (us)", "p99"),
    ("max_us", "wakeup-to-run max (us)", None),
    ("migrations", "migrations", "migrations"),
    ("cpus_busy", "CPUs busy (sum of utilisation)", "CPUs busy"),
]
TARGET_COLUMNS = ["tgt_waker", "tgt_prev", "tgt_both", "tgt_other"]


def meta_of(path):
    meta = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, _, value = line.partition(":")
                meta[key.strip()] = value.strip()
    return meta


def record_spread(a, recdir, out):
    """Each draw's trace-side figures: the trace column of its replay's table, as scored."""
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["trace", "draw", "file", "date_utc", "kernel"] +
                   [c for c, _, _ in SPREAD_ROWS] + TARGET_COLUMNS)
        for name, trace, comm in TRACES:
            rec = RECORDED_AS.get(name, name)
            draws = [("shared", a.traces, trace, os.path.join(a.traces, name + ".meta.txt"))]
            paths = glob.glob(os.path.join(recdir, rec + ".r*.trace.txt.xz"))
            for path in sorted(paths, key=lambda p: int(re.search(r"\.r(\d+)\.trace", p)[1])):
                k = re.search(r"\.r(\d+)\.trace", path)[1]
                draws.append((f"r{k}", recdir, os.path.basename(path),
                              path.replace(".trace.txt.xz", ".meta.txt")))
            for draw, d, file, meta_path in draws:
                rows, _ = run(a.schedlab, d, a.machine, file, comm, [], None)
                meta = meta_of(meta_path)
                w.writerow([name, draw, file, meta.get("date_utc", ""), meta.get("kernel", "")] +
                           [rows[row][0].split(" ")[0] for _, row, _ in SPREAD_ROWS] +
                           [rows[t][0].split(" ")[0] for t in TARGETS])


def read_spread(path):
    draws = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            draws.setdefault(r["trace"], []).append(r)
    return draws


def draw_shares(d):
    counts = [float(d[c]) for c in TARGET_COLUMNS]
    total = sum(counts)
    return [round(100 * c / total) if total else 0 for c in counts]


def within_spread(rows, draws):
    """Row titles within the stated tolerance: the aim, or the real draws' [min, max]."""
    ok = []
    aim = within_aim(rows)
    for col, row, title in SPREAD_ROWS:
        if title is None:
            continue
        vals = [float(d[col]) for d in draws]
        r = count_of(rows[row][1])
        if title in aim or (r is not None and min(vals) <= r <= max(vals)):
            ok.append(title)
    rs, _ = shares(rows, 1)
    per_class = list(zip(*[draw_shares(d) for d in draws]))
    if "wakeup-target shares" in aim or all(min(c) <= x <= max(c) for x, c in zip(rs, per_class)):
        ok.append("wakeup-target shares")
    return ok


def ratio_to_others(vals, i):
    others = statistics.median(vals[:i] + vals[i + 1:])
    return vals[i] / others if others else float("inf")


def print_spread(name, rows, draws):
    """One trace's real draws beside its default replay; the first draw is the shared trace."""
    fmt = {r: f for _, r, f in ROWS}
    aim, spread = within_aim(rows), within_spread(rows, draws)
    print(f"#### {name}: the real runs' spread ({len(draws)} draws: the shared trace, "
          f"{draws[0]['date_utc'][:10]}, and {len(draws) - 1} recordings)\n")
    print(f"| | shared trace | recordings: min / median / max | {len(draws)} draws: max / min | "
          "draw / median of the others: recordings (shared) | replay (ratio) | "
          "replay vs the draws | within |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for col, row, title in SPREAD_ROWS:
        f = fmt[row]
        vals = [float(d[col]) for d in draws]
        rec = vals[1:]
        q = [ratio_to_others(vals, i) for i in range(len(vals))]
        r = count_of(rows[row][1])
        where = ("below every draw" if r < min(vals) else
                 "above every draw" if r > max(vals) else
                 "within the recordings' [min, max]" if min(rec) <= r <= max(rec) else
                 "between the shared trace and the recordings")
        spread_of = f"{max(vals) / min(vals):.2f}" if min(vals) > 0 else "-"
        marks = [w for w, s in [("aim", aim), ("spread", spread)] if title in s]
        print(f"| {title or 'max (not scored)'} | {f.format(vals[0])} | "
              f"{f.format(min(rec))} / {f.format(statistics.median(rec))} / "
              f"{f.format(max(rec))} | {spread_of} | {min(q[1:]):.2f}-{max(q[1:]):.2f} "
              f"({q[0]:.2f}) | {f.format(r)} ({rows[row][2]}) | {where} | "
              f"{', '.join(marks) if title else ''} |")
    ds = [draw_shares(d) for d in draws]
    rs, _ = shares(rows, 1)
    lo = " / ".join(str(min(c)) for c in zip(*ds[1:]))
    hi = " / ".join(str(max(c)) for c in zip(*ds[1:]))
    inside = all(min(c) <= x <= max(c) for x, c in zip(rs, zip(*ds)))
    marks = [w for w, s in [("aim", aim), ("spread", spread)] if "wakeup-target shares" in s]
    print(f"| wakeup targets, % waker's / prev / both / other | "
          f"{' / '.join(str(x) for x in ds[0])} | {lo} (min) - {hi} (max) | - | - | "
          f"{' / '.join(str(x) for x in rs)} | "
          f"{'each within [min, max]' if inside else 'not each within [min, max]'} | "
          f"{', '.join(marks)} |")
    print(f"\nwithin the aim: {len(aim)} of 8; within the aim or the draws' [min, max]: "
          f"{len(spread)} of 8\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedlab", default="build/src/cli/schedlab")
    ap.add_argument("--machine", required=True)
    ap.add_argument("--baseline", default="host")
    ap.add_argument("--traces", default="data/traces")
    ap.add_argument("--out", help="a directory for each replay's output")
    ap.add_argument("--kernel", help="a kernel spec passed to every replay on --machine "
                    "(e.g. 6.18+preempt=none; default: replay's own, the traces' 6.18)")
    ap.add_argument("--options", default="",
                    help="more replay options for every replay on --machine, one string "
                    "(e.g. '--deps reply'); the columns' own come first")
    ap.add_argument("--default-only", action="store_true",
                    help="only the default column on --machine (to compare calibrations)")
    ap.add_argument("--record-spread", metavar="DIR",
                    help="replay each recording DIR/NAME.rK.trace.txt.xz and the shared trace, "
                    "write their trace-side figures to --spread's CSV, and stop")
    ap.add_argument("--set", choices=["all", "shared", "tbench"], default="all",
                    help="the shared traces (issue 17's 40 rows), the tbench windows, or both")
    ap.add_argument("--spread", metavar="CSV",
                    help="the real draws' figures (data/traces/spread/draws.csv): print their "
                    "spread per trace and count the default replay's rows within it")
    a = ap.parse_args()
    if a.record_spread:
        if not a.spread:
            sys.exit("replay_fidelity: --record-spread needs --spread CSV")
        record_spread(a, a.record_spread, a.spread)
        return
    global COLUMNS
    if a.default_only:
        COLUMNS = COLUMNS[:1]
    if a.options:  # the titles say what ran
        COLUMNS = [(t + f" + `{a.options}`" if w == "m" else t, e, w) for t, e, w in COLUMNS]
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    spread = read_spread(a.spread) if a.spread else None
    sets = {"shared": [(n, t, c, []) for n, t, c in TRACES], "tbench": TBENCH_TRACES}
    for which_set in (["shared", "tbench"] if a.set == "all" else [a.set]):
        if which_set == "tbench":
            print("## The tbench traces (not in issue 17's 40 rows; no real-run spread; every "
                  "replay with the trace's own options: `--softirq-wakes`)\n")
        score(a, sets[which_set], spread if which_set == "shared" else None)


def score(a, traces, spread):
    """One set of traces: a table per trace, then the summary and the counts per column."""
    summary = []
    for name, trace, comm, own in traces:
        results = []
        for i, (title, extra, which) in enumerate(COLUMNS):
            machine = a.machine if which == "m" else a.baseline
            out = os.path.join(a.out, f"{name}.{i}.txt") if a.out else None
            if a.kernel and which == "m":
                extra = extra + ["--kernel", a.kernel]
            if a.options and which == "m":
                extra = extra + a.options.split()
            results.append(run(a.schedlab, a.traces, machine, trace, comm, extra + own, out))
        print(f"### {name}\n")
        print("| | trace | " + " | ".join(c[0] for c in COLUMNS) + " |")
        print("|---|---:|" + "---:|" * len(COLUMNS))
        first = results[0][0]
        for title, row, fmt in ROWS:
            cells = [fmt.format(count_of(first[row][0]))]
            for rows, _ in results:
                t, r, ratio = rows[row]
                cells.append(f"{fmt.format(count_of(r))} ({ratio})")
            print(f"| {title} | " + " | ".join(cells) + " |")
        cells = []
        for side, rows in [(0, first)] + [(1, r) for r, _ in results]:
            s, _ = shares(rows, side)
            cells.append(" / ".join(str(x) for x in s))
        print("| wakeup targets, % waker's / prev / both / other | " + " | ".join(cells) + " |")
        cells = []
        for side, rows in [(0, first)] + [(1, r) for r, _ in results]:
            _, total = shares(rows, side)
            irq = count_of(rows["placed by irq/untraced waker"][side])
            cells.append(f"{total:.0f} ({irq:.0f})")
        print("| wakeups placed (of them by irq/untraced) | " + " | ".join(cells) + " |")
        cells = ["-"]
        for (title, _, _), (_, dep) in zip(COLUMNS, results):
            held = f" / {dep['held']}" if "held" in dep else ""
            piled = f" ({dep['piled']})" if "piled" in dep else ""
            cells.append(f"{dep.get('slept', '-')} / {dep.get('first', '-')}{piled}{held}")
        print("| dependency waits: slept / wake first (of them with more wakes there) "
              "(/ wakes held) | " + " | ".join(cells) + " |")
        print()
        if spread:
            draws = spread[name]
            for col, row, _ in SPREAD_ROWS:
                if draws[0]["draw"] != "shared" or draws[0][col] != first[row][0].split(" ")[0]:
                    sys.exit(f"replay_fidelity: {a.spread}: {name}'s first draw is not this "
                             f"trace ({col}: {draws[0][col]}, the trace's {first[row][0]})")
            print_spread(name, first, draws)
        for (title, _, _), (rows, _) in zip(COLUMNS, results):
            summary.append((name, title, rows))
    print("| trace | column | switches vol. / invol. | waking->run p50 / p99 | migrations | "
          "CPUs busy | span | wakeup targets: waker's / prev / both (trace -> replay) | "
          "within the aim |" +
          (" within the aim or the real draws' [min, max] |" if spread else ""))
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if spread else ""))
    totals = {}
    for name, title, rows in summary:
        r = lambda row: rows[row][2]
        (ts, _), (rs, _) = shares(rows, 0), shares(rows, 1)
        aim = within_aim(rows)
        print(f"| {name} | {title} | {r('context switches, voluntary')} / "
              f"{r('context switches, involuntary')} | {r('wakeup-to-run p50 (us)')} / "
              f"{r('wakeup-to-run p99 (us)')} | {r('migrations')} | "
              f"{r('CPUs busy (sum of utilisation)')} | {r('span (s)')} | "
              f"{ts[0]} / {ts[1]} / {ts[2]} -> {rs[0]} / {rs[1]} / {rs[2]} | "
              f"{', '.join(aim) if aim else 'none'} ({len(aim)} of 8) |" +
              (f" {len(within_spread(rows, spread[name]))} of 8 |" if spread else ""))
        t = totals.setdefault(title, [0, 0, 0])
        t[0] += len(aim)
        t[1] += len(within_spread(rows, spread[name])) if spread else 0
        t[2] += 8
    print()
    for title, (n_aim, n_spread, n) in totals.items():
        print(f"{title}: {n_aim} of {n} rows within the aim" +
              (f", {n_spread} within the aim or the real draws' [min, max]" if spread else ""))




if __name__ == "__main__":
    main()
