#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per domain level: the newly-idle passes' domain_cost and the max_newidle_lb_cost at the end.

Reads a decision log (schedlab run --explain) on stdin, its lines
`newidle_balance  LEVEL domain_cost=N (balancing B, waits W) max_newidle_lb_cost=M`:

  schedlab run --machine M --kernel K --no-summary --explain /dev/stdout -- tbench -t 1 128 \
      | grep -F domain_cost | python3 bench/validation/newidle-cost.py
"""
import collections
import re
import sys

PAT = re.compile(r'^\s*\S+\s+cpu(\d+)\s+newidle_balance\s+(\S+) domain_cost=(\d+) '
                 r'\(balancing \d+, waits (\d+)\) max_newidle_lb_cost=(\d+)')


def quantile(v, p):
    return v[min(len(v) - 1, int(p * len(v)))]


def main():
    costs = collections.defaultdict(list)
    waits = collections.defaultdict(int)
    last = {}
    for line in sys.stdin:
        m = PAT.match(line)
        if not m:
            continue
        cpu, level, cost, wait, maxcost = m.groups()
        costs[level].append(int(cost))
        waits[level] += int(wait)
        last[(int(cpu), level)] = int(maxcost)
    for level, v in costs.items():
        v.sort()
        mx = sorted(x for (_, lvl), x in last.items() if lvl == level)
        print(f"{level:5s} passes {len(v):9d}  domain_cost ns p10 {quantile(v, .1)} "
              f"p50 {quantile(v, .5)} p90 {quantile(v, .9)} p99 {quantile(v, .99)} max {v[-1]}  "
              f"waits {100 * waits[level] / max(1, sum(v)):.1f}%  | end max_newidle_lb_cost "
              f"over {len(mx)} CPUs: min {mx[0]} p50 {quantile(mx, .5)} max {mx[-1]}")


if __name__ == "__main__":
    main()
