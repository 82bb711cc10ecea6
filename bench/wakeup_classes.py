#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Waking->run delays per class of wakeup, from `schedlab latency --wakeups` output
(docs/replay.md, "schbench: where the real waking->run goes, by class of wakeup").

  schedlab latency --wakeups --quiet TRACE > ROWS
  wakeup_classes.py ROWS [--comm REGEX]

A class is the wakee's comm, the waker's comm (`<idle>` for a wakeup from an idle CPU's
interrupt, e.g. its own timer) and whether the waking ran on the CPU the wakee was placed on
(`same CPU`) or on another (`other CPU`). Per class: the count and p10/p50/p90/p99 of the
delay column (microseconds; a trace's delay is from sched_waking to the switch in, an
unrecorded switch in placed as `schedlab latency` says), and the share of the class at or
below the p50 of all rows. A wakee woken before its switch out completed (target `-`) counts
on its previous CPU. Wakees whose comm does not match REGEX, forks (`new:`) and wakeups that
never ran are left out.
"""
import argparse
import collections
import re

ROW = re.compile(r'^\s+[\d.]+\s+\[(\d+)\]\s+(.*?)\s+awakened: (\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([\d.]+)')


def comm(field):
    return field.rsplit('[', 1)[0]


def pct(v, p):
    v = sorted(v)
    if not v:
        return float('nan')
    k = (len(v) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('rows')
    ap.add_argument('--comm', default='.')
    o = ap.parse_args()
    cre = re.compile(o.comm)
    classes = collections.defaultdict(list)
    with open(o.rows) as f:
        for ln in f:
            m = ROW.match(ln)
            if not m:
                continue
            cpu, waker, wakee, prev, target, _ran, delay = m.groups()
            if not cre.search(comm(wakee)):
                continue
            # target '-': woken before its switch out had completed (not placed): it stays
            # on its previous CPU
            place = prev if target == '-' else target
            if place == '-':
                continue
            where = 'same CPU' if int(cpu) == int(place) else 'other CPU'
            classes[(comm(wakee), comm(waker), where)].append(float(delay) * 1000)
    every = [d for v in classes.values() for d in v]
    p50 = pct(every, 50)
    print(f'{o.rows}: {len(every)} wakeups, waking->run p50 {p50:.1f} us, p99 {pct(every, 99):.1f} us')
    print('| wakee | waker | waking on | n | p10 / p50 / p90 / p99 (us) | at or below the p50 of all |')
    print('|---|---|---|---:|---|---:|')
    for (wakee, waker, where), v in sorted(classes.items(), key=lambda kv: -len(kv[1])):
        print(f'| {wakee} | {waker} | {where} | {len(v)} | {pct(v,10):.1f} / {pct(v,50):.1f} / '
              f'{pct(v,90):.1f} / {pct(v,99):.1f} | {sum(d <= p50 for d in v) / len(v):.2f} |')


if __name__ == '__main__':
    main()
