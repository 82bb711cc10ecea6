// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The hardware description: pure data, descriptive only. What CPUs share
 * (SMT core, L2 cluster, LLC, package, NUMA node), their capacity and the
 * NUMA distance table. Behaviour (sched domains, balancing parameters) is
 * derived from it in sched/topology.cc, the way the kernel's sd_init()
 * derives behaviour from descriptive topology flags.
 *
 * CPU numbers are the machine's real logical numbering: on AMD bare metal the
 * first threads of every core come first and the SMT sibling of CPU n is
 * n + nr_cores; other boards interleave differently. Presets record it.
 */
#include "machine/costs.h"
#include "machine/cpumask.h"
#include "sim/time.h"

#include <string>
#include <vector>

namespace schedlab {

struct cpu_desc {
    int core = 0;      ///< machine-wide physical core id (SMT siblings share it)
    int cluster = 0;   ///< machine-wide L2-sharing cluster id (== core where L2 is per core)
    int llc = 0;       ///< machine-wide last-level-cache id
    int package = 0;   ///< socket
    int node = 0;      ///< NUMA node
    u32 capacity = 1024; ///< arch_scale_cpu_capacity(); 1024 on symmetric servers

    friend bool operator==(const cpu_desc&, const cpu_desc&) = default;
};

/// How far apart two CPUs are, for the costs that depend on it (cache lines, refills).
enum class cpu_distance : u8 { same = 0, smt, llc, package, remote };
const char* to_string(cpu_distance d);

/// The most CPUs a machine may have: the kernel's own maximum NR_CPUS on x86_64
/// (arch/x86/Kconfig NR_CPUS_RANGE_END: 8192). Memory sets a tighter bound on big machines:
/// sched_domains_bytes_estimate() (sched/topology.h) is checked before they are built.
inline constexpr int max_nr_cpus = 8192;

struct machine {
    std::string name;        ///< preset or file name
    std::string description; ///< one line for `schedlab machines`
    std::string vendor;      ///< "amd", "intel" or "other": selects vendor quirks below
    std::string numbering;   ///< how CPU numbers map to threads, as documented for the preset
    std::vector<cpu_desc> cpus;                   ///< indexed by logical CPU number
    std::vector<std::vector<int>> numa_distance;  ///< SLIT, node x node; diagonal 10
    int node_reclaim_distance = 30; ///< 30 by default, 32 on AMD Zen (init_amd_zn)
    cost_params costs;              ///< this machine's costs (costs.def defaults unless overridden)
    cost_sources costs_source;      ///< why a cost differs from its costs.def default

    int nr_cpus() const { return static_cast<int>(cpus.size()); }
    int nr_nodes() const { return static_cast<int>(numa_distance.size()); }

    cpumask smt_mask(int cpu) const;     ///< cpu_smt_mask(): threads of cpu's core
    cpumask cluster_mask(int cpu) const; ///< cpu_clustergroup_mask()
    cpumask llc_mask(int cpu) const;     ///< cpu_coregroup_mask(): CPUs sharing the LLC
    cpumask node_mask(int node) const;   ///< cpumask_of_node()
    cpumask pkg_mask(int cpu) const;     ///< CPUs of cpu's package
    cpumask all() const;

    /// How far apart two CPUs are (inline: the cost model asks at every cache-line transfer).
    cpu_distance distance(int a, int b) const
    {
        if (a == b)
            return cpu_distance::same;
        const cpu_desc& x = cpus[static_cast<std::size_t>(a)];
        const cpu_desc& y = cpus[static_cast<std::size_t>(b)];
        if (x.core == y.core)
            return cpu_distance::smt;
        if (x.llc == y.llc)
            return cpu_distance::llc;
        if (x.package == y.package && x.node == y.node)
            return cpu_distance::package;
        return cpu_distance::remote;
    }

    int nr_cores() const;
    int nr_llcs() const;
    int nr_packages() const;
    int smt_width() const; ///< threads per core (max over cores)

    /// Throws config_error (naming `where`) if the description is not a
    /// possible machine: empty, ids out of range, an LLC spanning packages,
    /// a core spanning LLCs, an asymmetric or malformed distance table...
    void validate(const std::string& where) const;

    /// Every field equal (name and description included); used by round-trip tests.
    friend bool operator==(const machine&, const machine&) = default;
};

} // namespace schedlab
