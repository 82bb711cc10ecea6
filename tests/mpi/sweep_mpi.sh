#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# CI check of distributed sweeps (issue 19): a 3-rank sweep on this one machine
# (mpirun --oversubscribe) and the same sweep in one process with --jobs 1 must
# give equal stores (compared as `schedlab export --format json`), with every
# run stored exactly once; a second MPI invocation finds everything stored.
#
#   tests/mpi/sweep_mpi.sh SCHEDLAB MPIEXEC SPEC WORKDIR
set -euo pipefail
schedlab=$1 mpiexec=$2 spec=$3 dir=$4
rm -rf "$dir"
mkdir -p "$dir"
# CI runs as root; Open MPI refuses that unless told so.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$mpiexec" -np 3 --oversubscribe "$schedlab" sweep "$spec" --store "$dir/mpi.sqlite" \
    2> "$dir/mpi.stderr"
grep -q "18 to run on 3 MPI ranks" "$dir/mpi.stderr" || { cat "$dir/mpi.stderr"; exit 1; }
"$schedlab" sweep "$spec" --store "$dir/one.sqlite" --jobs 1 2> /dev/null
"$schedlab" export --format json "$dir/mpi.sqlite" > "$dir/mpi.json"
"$schedlab" export --format json "$dir/one.sqlite" > "$dir/one.json"
cmp "$dir/mpi.json" "$dir/one.json"
"$schedlab" store list "$dir/mpi.sqlite" > "$dir/list.txt"
grep -q ": 18 runs, 2 experiments" "$dir/list.txt" || { cat "$dir/list.txt"; exit 1; }

"$mpiexec" -np 3 --oversubscribe "$schedlab" sweep "$spec" --store "$dir/mpi.sqlite" \
    2> "$dir/again.stderr"
grep -q "18 already in $dir/mpi.sqlite, 0 to run" "$dir/again.stderr" || { cat "$dir/again.stderr"; exit 1; }
echo "sweep_mpi: 3 ranks and --jobs 1 stored the same 18 runs"
