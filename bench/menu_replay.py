#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Which idle state the menu governor would pick for a run's idle periods: an offline
estimate (`git show 9376ffa:docs/validation.md`, "schbench at 1-8 workers: v3 against tip is
where the tick lands (lane schb7)"), not a model of the governor. Since 89f07ac the model runs
menu itself (src/sched/cpuidle_menu.cc; `git show 9376ffa:docs/validation.md`, "The menu governor in
the model (lane menu1, 2026-12-04)"); this replay stays as an offline cross-check of a trace
against the same rules.

    schedlab run --machine bergamo-2s --kernel K --trace T.dat -- schbench -m 2 -t 1 -r 3 -z 2
    trace-cmd report -t T.dat > T.rep
    python3 bench/menu_replay.py T.rep [--from 2.0] [--to 3.0] [--cpus 24,32]

T.rep is `trace-cmd report -t` of schedlab's .dat trace (nanosecond timestamps). Each CPU's
idle periods (a switch to swapper to the next switch from it) are replayed, in order, through
a re-implementation of drivers/cpuidle/governors/menu.c's menu_select() and menu_update(),
written from a reading of the source (torvalds/linux 010e85f9e47c for the algorithm), in the
form of 6.5 and tip-2023-08 (--form 6.5, the default: the next timer is always read and the
prediction is min(next timer x correction factor, typical interval)) or the one since 6.6
(--form 6.6: the typical interval first, the next timer read only above
RESIDENCY_THRESHOLD_NS, 15 us; 5484e31bbbff, pushed to linux-pm's pm-cpuidle-gov on
2023-08-17, after tip-2023-08's base): 12 buckets without iowait (6 used), the
correction factor (RESOLUTION 1024, DECAY 8), the last 8 intervals and
get_typical_interval()'s outlier passes, menu_update()'s 45 ms for a tick wakeup with no timer
within a tick and its exit-latency deduction, the stop_tick rule and the state's bound by the
next tick. The idle states are bergamo-2s's: POLL, C1 (1 us exit, 2 us residency), C2 (400 us
declared exit, 800 us residency). Simplifications, each an estimate:

- the idle periods are the model's own: the replay's choices do not feed back into when the
  CPU is woken (a C2 exit is added to the measured residency only: 10 us, cstate_deep_wake);
- the CPU's next timer is the timer that ended the period if one did (an `<idle>` waking on
  the CPU), else the soft-lockup watchdog's hrtimer on a 4 s grid from time 0;
- ticks come every 4 ms on a grid from time 0 while the replayed governor keeps the tick
  (the model's own kept ticks are not read);
- no PM QoS latency limit; the performance multiplier is 1 (no iowait).

It prints, for the periods that begin in [--from, --to), how many the replay puts in each
state, by the comm of the task whose sleep began the period and by whether a timer ended it.
"""
import argparse
import collections
import re
import sys

TICK = 4_000_000
RESIDENCY_THRESHOLD = 15_000
MAX_INTERESTING = 50_000_000
RESOLUTION, DECAY, INTERVALS = 1024, 8, 8
# (declared exit latency, target residency, polling), ns: POLL, C1, C2 of bergamo-2s
STATES = [(0, 0, True), (1000, 2000, False), (400_000, 800_000, False)]
WAKE = [0, 1000, 10_000]  # what leaving each state takes in the model (C2: cstate_deep_wake)
NAMES = ['POLL', 'C1', 'C2']
NO_TIMER = 2**63 - 1
UINT_MAX = 2**32 - 1


def which_bucket(ns):
    for i, lim in enumerate([10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]):
        if ns < lim:
            return i
    return 5


class Menu:
    def __init__(self, form):
        self.form = form
        self.factor = [RESOLUTION * DECAY] * 6
        self.intervals = [0] * INTERVALS
        self.ptr = 0
        self.next_timer = 0
        self.bucket = 0

    def typical(self):
        thresh = 2**31 - 1
        while True:
            vals = [v for v in self.intervals if v <= thresh]
            if not vals or max(vals) == 0:
                return UINT_MAX
            n = len(vals)
            avg = sum(vals) // n
            var = sum((v - avg) ** 2 for v in vals) // n
            if (avg * avg > var * 36 and n * 4 >= INTERVALS * 3) or var <= 400:
                return avg
            if n * 4 <= INTERVALS * 3:
                return UINT_MAX
            thresh = max(vals) - 1

    def select(self, now, timer_at):
        """menu_select(): (state index, stop_tick)."""
        predicted = self.typical() * 1000
        if self.form == '6.5' or predicted > RESIDENCY_THRESHOLD:
            delta = timer_at - now if timer_at is not None else 4_000_000_000 - now % 4_000_000_000
            delta_tick = min((now // TICK + 1) * TICK - now, delta)
            self.next_timer = delta
            self.bucket = which_bucket(delta)
            timer_us = (RESOLUTION * DECAY * 1000 // 2 + delta * self.factor[self.bucket]) // \
                (RESOLUTION * DECAY * 1000)
            predicted = min(timer_us * 1000, predicted)
        else:
            self.next_timer = NO_TIMER
            delta_tick = TICK // 2
            self.bucket = which_bucket(NO_TIMER)
        if self.next_timer < STATES[1][1]:
            return 0, False
        latency_req = predicted  # interactivity_req with a performance multiplier of 1
        idx = -1
        for i, (exit_ns, residency, _) in enumerate(STATES):
            if idx == -1:
                idx = i
            if residency > predicted:
                if STATES[idx][2] and exit_ns <= latency_req and residency <= self.next_timer:
                    idx = i
                    predicted = residency
                    break
                if predicted < TICK:
                    break
                return idx, True
            if exit_ns > latency_req:
                break
            idx = i
        stop_tick = True
        if STATES[idx][2] or predicted < TICK:
            stop_tick = False
            if idx > 0 and STATES[idx][1] > delta_tick:
                for i in range(idx - 1, -1, -1):
                    idx = i
                    if STATES[i][1] <= delta_tick:
                        break
        return idx, stop_tick

    def update(self, state, residency, tick_wakeup):
        """menu_update() after an idle period of `residency` ns in `state`."""
        if tick_wakeup and self.next_timer > TICK:
            measured = 9 * MAX_INTERESTING // 10
        else:
            exit_ns = STATES[state][0]
            measured = residency - exit_ns if residency > 2 * exit_ns else residency // 2
        measured = min(measured, self.next_timer)
        f = self.factor[self.bucket]
        f -= f // DECAY
        if self.next_timer > 0 and measured < MAX_INTERESTING:
            f += RESOLUTION * measured // self.next_timer
        else:
            f += RESOLUTION
        self.factor[self.bucket] = f
        self.intervals[self.ptr] = measured // 1000
        self.ptr = (self.ptr + 1) % INTERVALS


LINE = re.compile(r'^\s*(\S.*?)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+): (\w+):\s+(.*)$')


def idle_periods(path, cpus):
    """Per CPU: (start, end, the timer's time if a timer ended it, comm of the sleeper)."""
    periods = collections.defaultdict(list)
    start, timer, sleeper = {}, {}, {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            task, cpu, ev, rest = m.group(1), int(m.group(3)), m.group(6), m.group(7)
            if cpus and cpu not in cpus:
                continue
            t = int(m.group(4)) * 1_000_000_000 + int(m.group(5).ljust(9, '0'))
            if ev == 'sched_switch':
                if '==> swapper' in rest:
                    start[cpu], timer[cpu], sleeper[cpu] = t, None, rest.split(':')[0]
                elif rest.startswith('swapper') and cpu in start:
                    periods[cpu].append((start.pop(cpu), t, timer.get(cpu), sleeper.get(cpu)))
            elif ev == 'sched_waking' and task == '<idle>' and cpu in start:
                timer[cpu] = t
    return periods


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('report')
    ap.add_argument('--from', dest='t_from', type=float, default=2.0)
    ap.add_argument('--to', dest='t_to', type=float, default=3.0)
    ap.add_argument('--cpus', default='', help='comma list (default: every CPU)')
    ap.add_argument('--form', choices=['6.5', '6.6'], default='6.5',
                    help='6.5: the next timer is always read (the form of tip-2023-08 and 6.5); '
                         '6.6: only above RESIDENCY_THRESHOLD_NS (5484e31bbbff, merged for 6.6)')
    a = ap.parse_args()
    cpus = {int(c) for c in a.cpus.split(',') if c}
    lo, hi = int(a.t_from * 1e9), int(a.t_to * 1e9)
    counts = collections.Counter()
    for _, periods in sorted(idle_periods(a.report, cpus).items()):
        menu = Menu(a.form)
        for begin, end, timer_at, sleeper in periods:
            now = begin
            state, stop_tick = menu.select(now, timer_at)
            while not stop_tick:  # the kept tick fires inside the period: select again
                tick = (now // TICK + 1) * TICK
                if tick >= end:
                    break
                menu.update(state, tick - now, True)
                now = tick
                state, stop_tick = menu.select(now, timer_at)
            # the model's own wake (C1's 1 us, mostly) replaced by the replayed state's
            menu.update(state, max(0, end - now - WAKE[1] + WAKE[state]), False)
            if lo <= begin < hi and sleeper:
                counts[(sleeper, 'timer' if timer_at is not None else 'woken', NAMES[state])] += 1
    if not counts:
        sys.exit('menu_replay.py: no idle periods in the window')
    for (sleeper, how, state), n in sorted(counts.items()):
        print(f'{n:8d}  after {sleeper}, {how}: {state}')


if __name__ == '__main__':
    main()
