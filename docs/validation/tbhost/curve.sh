#!/bin/bash
# untraced tbench curve on this host, with /proc/stat idle share and context switches
for rep in 1 2; do
for n in 1 2 4 8 16; do
  s0=$(grep '^cpu ' /proc/stat); c0=$(grep ^ctxt /proc/stat | cut -d' ' -f2)
  tbench -t 10 $n 127.0.0.1 > curve-n$n-r$rep.txt 2>&1
  s1=$(grep '^cpu ' /proc/stat); c1=$(grep ^ctxt /proc/stat | cut -d' ' -f2)
  echo "n=$n rep=$rep $(grep Throughput curve-n$n-r$rep.txt) | stat0: $s0 | stat1: $s1 | ctxt $((c1-c0))"
done; done
