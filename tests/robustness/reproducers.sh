#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Issue 16's bad and extreme inputs, re-tried against a schedlab binary: every one must end
# with exit 0 (accepted), 2 (refused with a message naming the input) or 3 (did not finish),
# within its time bound and without a crash. Prints one line per input and a summary;
# exits 1 if any input crashed, ran away or was killed.
#   tests/robustness/reproducers.sh [SCHEDLAB] (default build/src/cli/schedlab)
set -uo pipefail
bin=${1:-build/src/cli/schedlab}
bin=$(realpath "$bin")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
export SCHEDLAB_STORE="$dir/store.sqlite" # compare's default results store, not the user's
pass=0
fail=0

# try LIMIT_S EXPECT_RC DESCRIPTION -- ARGS...   (EXPECT_RC: one code, or "any" for 0/2/3)
try() {
  local limit=$1 expect=$2 what=$3
  shift 4
  local out rc
  out=$(timeout -s KILL "$limit" "$bin" "$@" 2>&1 </dev/null)
  rc=$?
  local first
  first=$(printf '%s\n' "$out" | grep -m1 -E 'error|warning|Throughput|Total time|usecs|nan' | cut -c1-150)
  local verdict=ok
  if [ $rc -eq 137 ]; then
    verdict="RUNAWAY (killed after ${limit}s)"
  elif [ $rc -ge 128 ] || printf '%s' "$out" | grep -q -E 'terminate called|SIM_BUG|Sanitizer|runtime error'; then
    verdict="CRASH"
  elif [ "$expect" = any ]; then
    [[ $rc =~ ^(0|2|3)$ ]] || verdict="unexpected rc"
  elif [ "$rc" != "$expect" ]; then
    verdict="unexpected rc (expected $expect)"
  fi
  if [ "$verdict" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  printf '%-4s rc=%-3s %-58s %s\n' "$([ "$verdict" = ok ] && echo ok || echo FAIL)" "$rc" "$what" \
    "$([ "$verdict" = ok ] && echo "$first" || echo "$verdict: $first")"
}

M=(--machine ryzen-7950x)
printf '2E482' > overflow.json
python3 - <<'PY'
import json
open("deep.json", "w").write('{"tasks":' + '[' * 50000 + ']' * 50000 + '}')
open("null.json", "w").write("null")
open("nul.json", "wb").write(b"\0{}")
open("big-cores.json", "w").write(json.dumps({"format": "schedlab-machine-v1",
    "generate": {"sockets": 1, "cores_per_socket": 4096, "threads_per_core": 1}}))
open("1x2048.json", "w").write(json.dumps({"format": "schedlab-machine-v1",
    "generate": {"sockets": 1, "cores_per_socket": 2048, "threads_per_core": 1,
                 "cores_per_llc": 2048}}))
cpus = lambda n: {"format": "schedlab-machine-v1", "cpus": [
    {"cpu": i, "core": i, "llc": 0, "package": 0} for i in range(n)]}
open("4000.json", "w").write(json.dumps(cpus(4000)))
open("100k.json", "w").write(json.dumps(cpus(100000)))
open("badkey.json", "w").write('{"tasks": {"t1": {"bogus": 1000}}}')
open("lscpu-l9", "w").write("# CPU,Core,Socket,Node,,L9999999999\n0,0,0,0,,0\n")
open("lscpu-empty-l3", "w").write("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,\n1,1,0,0,,1,1,1,\n")
open("one.json", "w").write('{"tasks": {"t": {"loop": 20, "run": 1000, "sleep": 1000}}}')
PY

echo "# 1: JSON number overflow"
try 20 2 "topology 2E482" -- topology overflow.json
try 20 2 "costs 2E482" -- costs overflow.json
try 120 0 "run --json (for the result-file inputs)" -- run "${M[@]}" --json res.json -- perf bench sched pipe -l 1000
sed 's/"events_fired": [0-9]*/"events_fired": 1e400/' res.json > res-1e400.json
sed 's/"events_fired": [0-9]*/"events_fired": 1e300/' res.json > res-1e300.json
try 20 2 "report events_fired 1e400" -- report res-1e400.json
try 20 2 "report events_fired 1e300" -- report res-1e300.json
echo "# 2: deep rt-app JSON"
try 20 2 "rt-app 50000-deep" -- run "${M[@]}" -- rt-app deep.json
echo "# 3: huge --cost"
try 60 2 "--cost cstate_deep_exit=2^63-1" -- run "${M[@]}" --cost cstate_deep_exit=9223372036854775807 -- perf bench sched pipe -l 100
try 60 2 "--cost wakeup=2^62" -- run "${M[@]}" --cost wakeup=4611686018427387904 -- perf bench sched pipe -l 100
echo "# 4: benchmark sizes"
try 20 2 "messaging -g 1000000" -- run "${M[@]}" -- perf bench sched messaging -g 1000000
# tbench's largest NPROCS (100000) fits in about 1 GB since its tasks are coroutines (5 KB
# per task, docs/testing.md): one more is refused by the range.
try 20 2 "tbench 100001" -- run "${M[@]}" -- tbench 100001
try 20 2 "schbench -m 1000 -t 1000" -- run "${M[@]}" -- schbench -m 1000 -t 1000
# 2 x 3000000 tasks: more than PID_MAX_LIMIT (a million instances, 8 GB, may fit).
try 20 2 "netperf --instances 3000000" -- run "${M[@]}" -- netperf -t TCP_RR --instances 3000000
try 20 2 "compare --runs 1000000" -- compare "${M[@]}" --kernel 6.6 --runs 1000000 -- perf bench sched pipe -l 10
try 20 2 "schbench -m 2e9 -t 2e9" -- run "${M[@]}" -- schbench -m 2000000000 -t 2000000000
echo "# 5: machine size"
try 60 any "topology 1x2048 single LLC" -- topology 1x2048.json
try 60 any "cores_per_socket 4096" -- topology big-cores.json
try 60 any "4000 CPUs (cpus form)" -- topology 4000.json
try 20 2 "100k CPUs" -- topology 100k.json
echo "# 6: --explain write errors"
try 60 2 "--explain /dev/full" -- run "${M[@]}" --explain /dev/full -- perf bench sched pipe -l 100
try 60 2 "fidelity --json /dev/full" -- fidelity --json /dev/full res.json
echo "# 7: --time-limit"
for t in 1e10 1e300 nan inf -1 0; do try 20 2 "--time-limit $t" -- run "${M[@]}" --time-limit "$t" -- perf bench sched pipe -l 10; done
echo "# 8: --seed"
try 20 2 "--seed -1" -- run "${M[@]}" --seed -1 -- perf bench sched pipe -l 10
try 20 2 "--seed 2^64" -- run "${M[@]}" --seed 18446744073709551616 -- perf bench sched pipe -l 10
echo "# 9: output paths before running"
try 20 2 "compare --json ." -- compare "${M[@]}" --kernel 6.6 --runs 1 --json . -- perf bench sched pipe -l 10
try 20 2 "calibrate -o /nonexistent/x.json" -- calibrate --quick -o /proc/nonexistent/x.json
try 20 2 "run --trace into a missing directory" -- run "${M[@]}" --trace /nonexistent/t.txt -- perf bench sched pipe -l 10
echo "# 10: report of the same file twice, bad metadata"
try 60 0 "compare --json cmp.json" -- compare "${M[@]}" --kernel 6.6 --kernel 6.5 --runs 2 --json cmp.json -- perf bench sched pipe -l 200
try 20 2 "report cmp.json cmp.json" -- report cmp.json cmp.json
python3 -c "
import json; j = json.load(open('cmp.json')); j['experiment']['runs'] = -5; json.dump(j, open('runs-5.json', 'w'))
j = json.load(open('cmp.json')); j['experiment']['arms'] = []; json.dump(j, open('arms0.json', 'w'))"
try 20 2 "report runs: -5" -- report runs-5.json
try 20 2 "report arms: []" -- report arms0.json
echo "# 11: unclear messages"
try 20 2 "--time-limit 0" -- run --time-limit 0 -- perf bench sched pipe -l 10
try 20 2 "--runs 0" -- compare --kernel 6.6 --runs 0 -- perf bench sched pipe -l 10
try 20 2 "--jobs 0" -- compare --kernel 6.6 --jobs 0 -- perf bench sched pipe -l 10
try 20 2 "fidelity --threshold -5" -- fidelity --threshold -5 res.json
try 20 2 "schedlab bogus" -- bogus
try 20 2 "rt-app . (a directory)" -- run "${M[@]}" -- rt-app .
try 20 2 "rt-app unknown key" -- run "${M[@]}" -- rt-app badkey.json
try 20 2 "machine file starting with NUL" -- topology nul.json
try 20 2 "null machine file" -- topology null.json
echo "# 12: spec parsing"
try 20 2 "--kernel 6.6+" -- run "${M[@]}" --kernel 6.6+ -- perf bench sched pipe -l 10
try 20 2 "--kernel 6.6++X" -- run "${M[@]}" --kernel 6.6++X -- perf bench sched pipe -l 10
try 20 2 "--features ,," -- run "${M[@]}" --features ,, -- perf bench sched pipe -l 10
try 20 0 "--features ' NO_PLACE_LAG'" -- run "${M[@]}" --features ' NO_PLACE_LAG' -- perf bench sched pipe -l 10
try 20 0 "--kernel ' 6.6'" -- run "${M[@]}" --kernel ' 6.6' -- perf bench sched pipe -l 10
try 60 0 "--kernel 5.15+shared_runq_v3 (warns)" -- run "${M[@]}" --kernel 5.15+shared_runq_v3 -- perf bench sched pipe -l 10
echo "# 13: lscpu cache level overflow"
try 20 any "lscpu L9999999999" -- topology lscpu-l9
echo "# 14: input size caps"
try 20 2 "--machine /dev/zero" -- topology /dev/zero
try 20 2 "rt-app /dev/zero" -- run "${M[@]}" -- rt-app /dev/zero
echo "# 15: zero and negative sizes"
try 20 2 "messaging -g 0" -- run "${M[@]}" -- perf bench sched messaging -g 0
try 20 2 "messaging -l 0" -- run "${M[@]}" -- perf bench sched messaging -l 0
try 20 2 "hackbench -g 0" -- run "${M[@]}" -- hackbench -g 0
try 20 2 "pipe -l 0" -- run "${M[@]}" -- perf bench sched pipe -l 0
try 60 0 "schbench -t 0 (v1: one worker per CPU, as schbench)" -- run "${M[@]}" -- schbench -m 1 -t 0 -r 1
try 60 any "netperf -l -1 (a transaction count)" -- run "${M[@]}" -- netperf -t TCP_RR -l -1
try 20 2 "stream --threads 0" -- run "${M[@]}" -- stream --threads 0
try 20 2 "lscpu empty L3 field" -- topology lscpu-empty-l3
echo "# 16: a benchmark that measured nothing"
try 60 2 "tbench 4 -t 1" -- run "${M[@]}" -- tbench 4 -t 1
try 120 2 "compare tbench 1,8 -t 0.5" -- compare "${M[@]}" --kernel 6.6 --kernel 6.5 --runs 2 -- tbench 1,8 -t 0.5
echo "# 17: fractions of seconds"
try 60 0 "netperf -l 0.2" -- run "${M[@]}" -- netperf -t TCP_RR -l 0.2
try 60 0 "schbench -r 0.5" -- run "${M[@]}" -- schbench -m 1 -t 2 -r 0.5
echo "# 18: --html without node_modules (from another directory)"
try 60 0 "report --html" -- report cmp.json --html r.html
echo "# 19: report formats"
try 20 0 "report --format amd" -- report cmp.json --format amd
try 20 0 "report --format lkp" -- report cmp.json --format lkp
echo "# 20: --trace t.gz / t.xz"
try 60 0 "--trace t.gz" -- run "${M[@]}" --trace t.gz -- perf bench sched pipe -l 100
if [ -f t.gz ] && ! gzip -t t.gz 2>/dev/null; then echo "FAIL t.gz is not gzip"; fail=$((fail + 1)); fi
try 20 2 "--trace t.xz" -- run "${M[@]}" --trace t.xz -- perf bench sched pipe -l 100
echo "# 21: compare without a load list"
try 120 0 "compare -- rt-app FILE" -- compare "${M[@]}" --kernel 6.6 --kernel 6.5 --runs 2 -- rt-app one.json
echo "# 22: re-check of 2026-12-05 (lane rob2, docs/testing.md)"
try 20 2 "--kernel 6.12+ext:/tmp (a directory)" -- run "${M[@]}" --kernel 6.12+ext:/tmp -- perf bench sched pipe -l 10
try 20 2 "--kernel 6.12+ext:/dev/zero" -- run "${M[@]}" --kernel 6.12+ext:/dev/zero -- perf bench sched pipe -l 10
try 60 0 "run --trace t.dat (for the trace inputs)" -- run "${M[@]}" --trace t.dat -- perf bench sched messaging -g 1 -l 5
head -c $(($(stat -c %s t.dat) / 2)) t.dat > half.dat
try 20 2 "replay of a .dat cut in half" -- replay --quiet half.dat
try 20 2 "latency of a .dat cut in half" -- latency --quiet half.dat
try 20 2 "latency --explain /tmp (a directory)" -- latency --quiet --wakeups --explain /tmp t.dat
try 20 2 "latency --explain /dev/zero" -- latency --quiet --wakeups --explain /dev/zero t.dat
try 20 2 "hackbench -l 10^18 (past OPT_UINTEGER)" -- run "${M[@]}" -- hackbench -l 1000000000000000000
printf 'machines = ["ryzen-7950x"]\nkernels = ["6.6"]\ntime_limit = 1e9\n[[benchmarks]]\ncommand = "perf bench sched pipe -l 10"\n' > tl.toml
try 20 2 "sweep time_limit = 1e9" -- sweep --dry-run --store sw.sqlite tl.toml
echo "# 23: .dat input in a child process (lane datiso, docs/testing.md)"
# One byte of sched_switch's print format: libtraceevent 1.7.1 crashes parsing it (SIGSEGV,
# exit 139 before libtracecmd ran in a child process).
python3 -c 'b = open("t.dat", "rb").read(); open("fmt.dat", "wb").write(b.replace(b"REC->prev_state, {", b"REC->prev_s>ate, {", 1))'
try 20 2 "replay of a .dat libtraceevent crashes on" -- replay --quiet fmt.dat
try 20 2 "latency of a .dat libtraceevent crashes on" -- latency --quiet fmt.dat
printf 'machines = ["ryzen-7950x"]\nkernels = ["6.6"]\ncosts = ["line_llc=5", "line_llc=7"]\n[[benchmarks]]\ncommand = "perf bench sched pipe -l 10"\n' > cost2.toml
try 20 2 "sweep costs: one cost given twice" -- sweep --dry-run --store sw.sqlite cost2.toml

echo "reproducers: $pass passed, $fail failed"
[ $fail -eq 0 ]
