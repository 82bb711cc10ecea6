#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The model's tbench curves on this host's calibrated machine file, as the real ones were run
# (docs/validation.md, "tbench on this host: real against the model"): two CPUs at
# N = 1, 2, 4, 8, 16 and one CPU (the file cut to CPU 0, as `taskset -c 1` pins the real run
# to one vCPU) at N = 1, 2, 4, 8; `tbench -t 2 N`, kernel 6.18, seed 1. Prints each run's
# Throughput line and its cache-refill share.
#
# usage: bench/tbhost/model_curve.sh SCHEDLAB [MACHINE_JSON]
set -euo pipefail
bin=${1:?usage: model_curve.sh SCHEDLAB [MACHINE_JSON]}
json=${2:-data/machines/host-amd-calibrated.json}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$json" "$tmp/one-cpu.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["cpus"] = m["cpus"][:1]
m["name"] = m["name"] + "-cpu0"
json.dump(m, open(sys.argv[2], "w"), indent=1)
PY
echo "# $("$bin" --version); machine $json"
run() { # MACHINE N LABEL
    out=$(nice -n 10 "$bin" run --machine "$1" --kernel 6.18 --seed 1 -- tbench -t 2 "$2")
    tp=$(grep '^Throughput' <<<"$out" | awk '{print $2}')
    refill=$(grep -o 'cache refill [0-9.]* ([0-9.]*%)' <<<"$out" | grep -o '([0-9.]*%)')
    printf '%-8s N=%-3s %9s MB/s  cache refill %s of the time\n' "$3" "$2" "$tp" "${refill:-(none)}"
}
for n in 1 2 4 8 16; do run "$json" "$n" "two-cpu"; done
for n in 1 2 4 8; do run "$tmp/one-cpu.json" "$n" "one-cpu"; done
