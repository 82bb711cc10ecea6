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
"""
import argparse
import os
import re
import subprocess
import sys

TRACES = [
    ("perf_messaging_g1_l200", "perf_messaging_g1_l200.trace.txt.xz", "^sched-messaging$"),
    ("perf_messaging_g4_pipe_l100", "perf_messaging_g4_pipe_l100.trace.txt.xz", "^sched-messaging$"),
    ("perf_pipe_l50000", "perf_pipe_l50000.trace.txt.xz", "^sched-pipe$"),
    ("schbench_m1_t2_r3", "schbench_m1_t2_r3.trace.txt.xz", "^schbench"),
    ("tracecmd_perf_messaging_g2_l100", "tracecmd_perf_messaging_g2_l100.dat", "^sched-messaging$"),
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
        m = re.match(r"# flow control \(--deps flow\): (\d+) dependency wakes", line)
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
        if t is not None and r is not None and t > 0 and abs(r / t - 1) <= kind:
            ok.append(title)
    (ts, _), (rs, _) = shares(rows, 0), shares(rows, 1)
    if all(abs(a - b) <= 10 for a, b in zip(ts, rs)):
        ok.append("wakeup-target shares")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedlab", default="build/src/cli/schedlab")
    ap.add_argument("--machine", required=True)
    ap.add_argument("--baseline", default="host")
    ap.add_argument("--traces", default="data/traces")
    ap.add_argument("--out", help="a directory for each replay's output")
    ap.add_argument("--kernel", help="a kernel spec passed to every replay on --machine "
                    "(e.g. 6.18+preempt=none; default: replay's own, the traces' 6.18)")
    ap.add_argument("--default-only", action="store_true",
                    help="only the default column on --machine (to compare calibrations)")
    a = ap.parse_args()
    global COLUMNS
    if a.default_only:
        COLUMNS = COLUMNS[:1]
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    summary = []
    for name, trace, comm in TRACES:
        results = []
        for i, (title, extra, which) in enumerate(COLUMNS):
            machine = a.machine if which == "m" else a.baseline
            out = os.path.join(a.out, f"{name}.{i}.txt") if a.out else None
            if a.kernel and which == "m":
                extra = extra + ["--kernel", a.kernel]
            results.append(run(a.schedlab, a.traces, machine, trace, comm, extra, out))
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
        for (title, _, _), (rows, _) in zip(COLUMNS, results):
            summary.append((name, title, rows))
    print("| trace | column | switches vol. / invol. | waking->run p50 / p99 | migrations | "
          "CPUs busy | span | wakeup targets: waker's / prev / both (trace -> replay) | "
          "within the aim |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, title, rows in summary:
        r = lambda row: rows[row][2]
        (ts, _), (rs, _) = shares(rows, 0), shares(rows, 1)
        aim = within_aim(rows)
        print(f"| {name} | {title} | {r('context switches, voluntary')} / "
              f"{r('context switches, involuntary')} | {r('wakeup-to-run p50 (us)')} / "
              f"{r('wakeup-to-run p99 (us)')} | {r('migrations')} | "
              f"{r('CPUs busy (sum of utilisation)')} | {r('span (s)')} | "
              f"{ts[0]} / {ts[1]} / {ts[2]} -> {rs[0]} / {rs[1]} / {rs[2]} | "
              f"{', '.join(aim) if aim else 'none'} ({len(aim)} of 8) |")


if __name__ == "__main__":
    main()
