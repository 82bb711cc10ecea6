// SPDX-License-Identifier: GPL-2.0-only
/*
 * The machine's topology masks and its validation.
 *
 * The masks are the arch callbacks the kernel's sched_domain_topology_level
 * table points at (cpu_smt_mask, cpu_clustergroup_mask, cpu_coregroup_mask,
 * cpumask_of_node, topology_core_cpumask). They are computed from the ids in
 * cpu_desc on every call: machines are small and domains are built once.
 */
#include "machine/machine.h"

#include "sim/config_error.h"

#include <algorithm>
#include <map>
#include <set>

namespace schedlab {

namespace {

template <typename F> cpumask mask_where(const machine& m, F&& same)
{
    cpumask mask(m.nr_cpus());
    for (int cpu = 0; cpu < m.nr_cpus(); ++cpu)
        if (same(m.cpus[cpu]))
            mask.set(cpu);
    return mask;
}

template <typename F> int count_distinct(const machine& m, F&& key)
{
    std::set<int> ids;
    for (const cpu_desc& c : m.cpus)
        ids.insert(key(c));
    return static_cast<int>(ids.size());
}

} // namespace

const char* to_string(cpu_distance d)
{
    switch (d) {
    case cpu_distance::same:
        return "same cpu";
    case cpu_distance::smt:
        return "smt sibling";
    case cpu_distance::llc:
        return "same llc";
    case cpu_distance::package:
        return "same package";
    case cpu_distance::remote:
        return "other package";
    }
    return "?";
}

// kernel: include/linux/topology.h cpu_smt_mask() (x86: topology_sibling_cpumask)
cpumask machine::smt_mask(int cpu) const
{
    const int core = cpus[cpu].core;
    return mask_where(*this, [&](const cpu_desc& c) { return c.core == core; });
}

// kernel: arch/x86/kernel/smpboot.c cpu_clustergroup_mask() (the L2-sharing mask)
cpumask machine::cluster_mask(int cpu) const
{
    const int cluster = cpus[cpu].cluster;
    return mask_where(*this, [&](const cpu_desc& c) { return c.cluster == cluster; });
}

// kernel: arch/x86/kernel/smpboot.c cpu_coregroup_mask() (the LLC-sharing mask)
cpumask machine::llc_mask(int cpu) const
{
    const int llc = cpus[cpu].llc;
    return mask_where(*this, [&](const cpu_desc& c) { return c.llc == llc; });
}

// kernel: include/asm-generic/topology.h cpumask_of_node()
cpumask machine::node_mask(int node) const
{
    return mask_where(*this, [&](const cpu_desc& c) { return c.node == node; });
}

// kernel: include/linux/topology.h topology_core_cpumask() (CPUs of one package)
cpumask machine::pkg_mask(int cpu) const
{
    const int package = cpus[cpu].package;
    return mask_where(*this, [&](const cpu_desc& c) { return c.package == package; });
}

cpumask machine::all() const
{
    cpumask mask(nr_cpus());
    mask.set_all();
    return mask;
}

int machine::nr_cores() const
{
    return count_distinct(*this, [](const cpu_desc& c) { return c.core; });
}

int machine::nr_llcs() const
{
    return count_distinct(*this, [](const cpu_desc& c) { return c.llc; });
}

int machine::nr_packages() const
{
    return count_distinct(*this, [](const cpu_desc& c) { return c.package; });
}

int machine::smt_width() const
{
    std::map<int, int> threads;
    int width = 0;
    for (const cpu_desc& c : cpus)
        width = std::max(width, ++threads[c.core]);
    return width;
}

/*
 * Every container must nest in the next one up: thread < core < cluster < LLC
 * < (node, package). The kernel warns ("BUG: arch topology borken") and
 * papers over such machines; for us they are input errors.
 */
void machine::validate(const std::string& where) const
{
    std::vector<std::string> errs;
    auto fail = [&](std::string what) { errs.push_back(std::move(what)); };

    if (cpus.empty())
        throw config_error(where, "machine has no CPUs");
    if (nr_cpus() > max_nr_cpus)
        throw config_error(where,
                           fmt::format("{} CPUs, more than the {} a kernel supports (NR_CPUS "
                                       "on x86_64)",
                                       nr_cpus(), max_nr_cpus));
    if (vendor != "amd" && vendor != "intel" && vendor != "other")
        fail(fmt::format("vendor '{}' is not one of amd, intel, other", vendor));

    const int nodes = nr_nodes();
    if (nodes == 0)
        fail("numa_distance is empty (a machine has at least one node: [[10]])");
    for (int i = 0; i < nodes; ++i) {
        if (static_cast<int>(numa_distance[i].size()) != nodes) {
            fail(fmt::format("numa_distance is not square: row {} has {} entries, expected {}", i,
                             numa_distance[i].size(), nodes));
            continue;
        }
        if (numa_distance[i][i] != 10)
            fail(fmt::format("numa_distance[{}][{}] is {}, the local distance must be 10", i, i,
                             numa_distance[i][i]));
    }
    if (errs.empty()) {
        for (int i = 0; i < nodes; ++i)
            for (int j = 0; j < nodes; ++j) {
                if (i == j)
                    continue;
                if (numa_distance[i][j] != numa_distance[j][i] && i < j)
                    fail(fmt::format("numa_distance is asymmetric: [{}][{}] = {} but [{}][{}] = {}",
                                     i, j, numa_distance[i][j], j, i, numa_distance[j][i]));
                if (numa_distance[i][j] <= 10)
                    fail(fmt::format("numa_distance[{}][{}] = {}: a remote distance must be "
                                     "greater than the local distance 10",
                                     i, j, numa_distance[i][j]));
            }
    }
    if (node_reclaim_distance < 10)
        fail(fmt::format("node_reclaim_distance {} is below the local distance 10",
                         node_reclaim_distance));

    std::vector<bool> node_used(std::max(nodes, 0), false);
    for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
        const cpu_desc& c = cpus[cpu];
        if (c.core < 0 || c.cluster < 0 || c.llc < 0 || c.package < 0)
            fail(fmt::format("cpu {}: negative core/cluster/llc/package id", cpu));
        if (c.node < 0 || c.node >= nodes)
            fail(fmt::format("cpu {}: node {} is out of range (numa_distance has {} node{})", cpu,
                             c.node, nodes, nodes == 1 ? "" : "s"));
        else
            node_used[c.node] = true;
        if (c.capacity == 0 || c.capacity > 1024)
            fail(fmt::format("cpu {}: capacity {} is not in 1..1024", cpu, c.capacity));
    }
    for (int node = 0; node < nodes; ++node)
        if (!node_used[node])
            fail(fmt::format("node {} has no CPUs (memory-only nodes are not modelled)", node));

    /* One owner per container: the first CPU seen fixes what the container belongs to. */
    auto check_nesting = [&](const char* inner, auto inner_id, const char* outer, auto outer_id) {
        std::map<int, std::pair<int, int>> owner; // inner id -> (outer id, first cpu)
        for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
            const int in = inner_id(cpus[cpu]), out = outer_id(cpus[cpu]);
            auto [it, fresh] = owner.try_emplace(in, out, cpu);
            if (!fresh && it->second.first != out) {
                fail(fmt::format("{} {} spans {}s: cpu {} is in {} {} but cpu {} is in {} {}",
                                 inner, in, outer, it->second.second, outer, it->second.first, cpu,
                                 outer, out));
                it->second.first = out; // report each container once per new outer id
            }
        }
    };
    auto core_of = [](const cpu_desc& c) { return c.core; };
    auto cluster_of = [](const cpu_desc& c) { return c.cluster; };
    auto llc_of = [](const cpu_desc& c) { return c.llc; };
    auto package_of = [](const cpu_desc& c) { return c.package; };
    auto node_of = [](const cpu_desc& c) { return c.node; };
    check_nesting("core", core_of, "package", package_of);
    check_nesting("core", core_of, "cluster", cluster_of); // SMT siblings share the L2
    check_nesting("core", core_of, "llc", llc_of);
    check_nesting("core", core_of, "node", node_of);
    check_nesting("cluster", cluster_of, "llc", llc_of);
    check_nesting("llc", llc_of, "package", package_of);
    check_nesting("llc", llc_of, "node", node_of);

    std::map<int, u32> core_capacity;
    for (int cpu = 0; cpu < nr_cpus(); ++cpu) {
        auto [it, fresh] = core_capacity.try_emplace(cpus[cpu].core, cpus[cpu].capacity);
        if (!fresh && it->second != cpus[cpu].capacity)
            fail(fmt::format("cpu {}: SMT siblings of core {} have different capacities ({} and "
                             "{}); the kernel does not support asymmetric SMT",
                             cpu, cpus[cpu].core, it->second, cpus[cpu].capacity));
    }

    if (errs.empty())
        return;
    std::string msg = errs.front();
    const std::size_t shown = std::min<std::size_t>(errs.size(), 8);
    for (std::size_t i = 1; i < shown; ++i)
        msg += "\n  " + errs[i];
    if (errs.size() > shown)
        msg += fmt::format("\n  ... and {} more problems", errs.size() - shown);
    throw config_error(where, msg);
}

} // namespace schedlab
