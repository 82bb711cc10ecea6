#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs every libFuzzer target of tests/fuzz for SECONDS each, JOBS at a time, from the
# seed corpora in tests/fuzz/corpus (copied: what the fuzzer adds stays in the build
# directory). Prints one line per target: executions, coverage, corpus size. Exits 1 if
# any target found a crash, leak, time-out or out-of-memory; the reproducer is in
# BUILD/fuzz-artifacts/TARGET/.
#   scripts/run-fuzz.sh BUILD SECONDS [JOBS] [TARGET...]
set -euo pipefail
build=${1:?usage: run-fuzz.sh BUILD SECONDS [JOBS] [TARGET...]}
seconds=${2:?usage: run-fuzz.sh BUILD SECONDS [JOBS] [TARGET...]}
jobs=${3:-1}
shift $(( $# < 3 ? $# : 3 ))
src=$(cd "$(dirname "$0")/.." && pwd)
# UBSan's reports with their stacks (the default prints the line only).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  # Every target tests/fuzz/CMakeLists.txt builds (its foreach list), so a new one is never
  # left out of CI.
  read -r -a targets <<<"$(sed -n 's/^foreach(t \(.*\))$/\1/p' "$src/tests/fuzz/CMakeLists.txt")"
  [ ${#targets[@]} -gt 0 ] || { echo "run-fuzz.sh: no targets found in tests/fuzz/CMakeLists.txt" >&2; exit 2; }
fi

run_one() {
  local t=$1
  local bin="$build/tests/fuzz/fuzz_$t"
  local corpus="$build/fuzz-corpus/$t" art="$build/fuzz-artifacts/$t/" log="$build/fuzz-logs/$t.log"
  mkdir -p "$corpus" "$art" "$(dirname "$log")"
  # -rss_limit_mb: a bounded input must stay bounded; -timeout: no input may take 10 s.
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$art" "$corpus" "$src/tests/fuzz/corpus/$t" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
  fi
  local execs cov ft units
  # A target that fails before its first status line has no cov/ft: "?" (grep's status would
  # end this function under set -e -o pipefail before anything is printed).
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  ft=$( (grep -o 'ft: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  units=$(find "$corpus" -type f | wc -l)
  printf 'fuzz %-14s %-6s %6s s  %10s execs  cov %6s  ft %6s  corpus %5s  (%s)\n' \
    "$t" "$status" "$seconds" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$units" "$log"
  if [ "$status" != ok ]; then
    # What was found and its input, printed here: a CI machine's build directory (the log and
    # the artifact) is gone after the run.
    grep -a -m 24 -E 'ERROR|runtime error|WARNING: .*Sanitizer|SUMMARY|Test unit written|deadly signal| #[0-5] 0x' \
      "$log" | sed "s/^/  $t: /" || true
    local a
    for a in "$art"*; do
      [ -f "$a" ] || continue
      echo "  $t: input $a ($(wc -c <"$a") bytes), as od -c (first 1 KiB):"
      head -c 1024 "$a" | od -c | sed "s/^/  $t:   /"
    done
  fi
  [ "$status" = ok ]
}

failed=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do
  wait "$p" || failed=1
done
if [ $failed -ne 0 ]; then
  echo "run-fuzz: a target failed; see its log and $build/fuzz-artifacts/" >&2
fi
exit $failed
