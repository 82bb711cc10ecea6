// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Named machines and the generator for symmetric ones.
 *
 * A preset is a symmetric machine (every socket alike, every LLC alike)
 * described by a handful of counts plus the BIOS/firmware CPU numbering.
 * The shapes and their sources are listed in docs/machine-format.md.
 * `load_machine()` is the one entry point the CLI uses: a preset name, a
 * JSON machine file or `lscpu -p` output.
 */
#include "machine/machine.h"

#include <string>
#include <vector>

namespace schedlab {

/*
 * How logical CPU numbers map to (socket, core, thread). With C = total
 * cores, S = sockets, c = core index inside its socket, s = socket,
 * g = s * cores_per_socket + c (machine-wide core index), t = thread:
 *
 * first_threads_then_siblings
 *     cpu = t * C + g. CPU n is thread 0 of core n for n < C, socket 0's
 *     cores first; the sibling of CPU n is n + C. AMD EPYC/Ryzen bare metal
 *     and most Intel servers (Linux enumerates the MADT in this order).
 * siblings_adjacent
 *     cpu = g * T + t. CPUs 2k and 2k+1 are SMT siblings (many VMs, some
 *     desktop boards, most non-x86 SMT machines).
 * sockets_interleaved
 *     cpu = t * C + c * S + s. First threads alternate between sockets (even
 *     CPUs on socket 0, odd on socket 1 with two sockets), siblings follow
 *     all first threads in the same pattern. Seen on some Ice Lake boards.
 */
enum class cpu_numbering { first_threads_then_siblings, siblings_adjacent, sockets_interleaved };

const char* to_string(cpu_numbering n);
/// All scheme names, in declaration order (for did-you-mean hints and docs).
std::vector<std::string> cpu_numbering_names();
/// Throws config_error(where, ...) with a did-you-mean hint for an unknown name.
cpu_numbering parse_cpu_numbering(const std::string& name, const std::string& where);

/// The parameters of the symmetric-machine generator (also the JSON "generate" object).
struct symmetric_machine_spec {
    std::string name;
    std::string description;
    std::string vendor = "other"; ///< amd, intel or other
    int sockets = 1;
    int cores_per_socket = 1;
    int threads_per_core = 1;
    int cores_per_llc = 0;     ///< cores sharing one LLC; 0 = the whole socket
    int nodes_per_socket = 1;  ///< NUMA nodes per socket (AMD NPS2/NPS4, Intel SNC)
    int cores_per_cluster = 1; ///< cores sharing one L2; 1 = per-core L2
    cpu_numbering numbering = cpu_numbering::first_threads_then_siblings;
    int remote_distance = 20;      ///< SLIT distance between nodes of different sockets
    int near_distance = 12;        ///< SLIT distance between nodes of one socket
    int node_reclaim_distance = 0; ///< 0 = vendor default: 32 on amd (init_amd_zn), else 30
};

/// Builds and validates the machine; a spec that does not divide evenly is a config_error.
machine make_symmetric_machine(const symmetric_machine_spec& spec, const std::string& where);

struct machine_preset_info {
    std::string name;
    std::string description;
};

/// Every preset, in a fixed order, "host" last.
std::vector<machine_preset_info> machine_presets();

/// A preset by name; an unknown name is a config_error with a did-you-mean hint.
machine make_machine_preset(const std::string& name);

/*
 * The `host` preset: the calibrated machine file (`schedlab calibrate`) when
 * there is one, else make_sysfs_host_machine(). The file is
 * $SCHEDLAB_HOST_MACHINE if set (then it must exist), else
 * $XDG_CONFIG_HOME/schedlab/host.json, else ~/.config/schedlab/host.json.
 * A file whose CPU count differs from this machine's is a config_error.
 */
machine make_host_machine();

/// The machine this process runs on, from sysfs (plus /proc/cpuinfo for the vendor and
/// the sysfs cache sizes and cpuidle states as costs); never the calibrated file.
machine make_sysfs_host_machine();

/// The calibrated host file the `host` preset would read, or "" if there is none.
std::string host_machine_file();

/// Where `schedlab calibrate` writes by default (the first of the paths above), or "".
std::string default_host_machine_path();

/// A preset name, a path to a JSON machine file, or a path to `lscpu -p` output.
machine load_machine(const std::string& spec);

} // namespace schedlab
