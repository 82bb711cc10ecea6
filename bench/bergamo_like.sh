# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Sourced by bench/scale.sh and bench/scale_counts.sh (not run on its own):
#   bergamo_like_machine_file CPUS DIR PROG
# writes DIR/bergamo-like-CPUS.json, a machine file of Bergamo-like 8-core CCXs with SMT2
# (16 CPUs per LLC, up to 128 cores per socket, one NUMA node per socket, SLIT 10/32), and
# prints its path; a size that is not whole LLCs or whole sockets is an error naming PROG.
bergamo_like_machine_file() {
    local cpus="$1" dir="$2" prog="$3" cores sockets per_socket
    cores=$((cpus / 2))
    if ((cpus % 16 != 0 || cpus < 16)); then
        echo "$prog: $cpus CPUs is not a whole number of 16-CPU LLCs" >&2
        exit 2
    fi
    if ((cores <= 128)); then sockets=1; per_socket=$cores; else sockets=$((cores / 128)); per_socket=128; fi
    if ((sockets * per_socket != cores)); then
        echo "$prog: $cpus CPUs does not fill whole 128-core sockets" >&2
        exit 2
    fi
    local f="$dir/bergamo-like-$cpus.json"
    cat >"$f" <<EOF
{
  "format": "schedlab-machine-v1",
  "name": "bergamo-like-$cpus",
  "description": "$cpus CPUs: $sockets socket(s) of $per_socket Bergamo-like cores, 8-core CCXs, SMT2",
  "vendor": "amd",
  "generate": {
    "sockets": $sockets,
    "cores_per_socket": $per_socket,
    "threads_per_core": 2,
    "cores_per_llc": 8,
    "nodes_per_socket": 1,
    "numbering": "first_threads_then_siblings",
    "remote_distance": 32
  }
}
EOF
    echo "$f"
}
