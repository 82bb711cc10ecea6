// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sched-domain construction, after kernel/sched/topology.c (v6.6, with the
 * v6.10 SD_SHARE_LLC name) and the x86 topology table of
 * arch/x86/kernel/smpboot.c.
 *
 * The order of work is the kernel's: build every level for every CPU
 * (build_sched_domain + sd_init), build the groups of every domain
 * (build_sched_groups / build_overlap_sched_groups), compute imb_numa_nr,
 * then per CPU drop the degenerate domains (cpu_attach_domain) and set the
 * sd_llc shortcuts (update_top_cache_domain). Groups and imb_numa_nr are
 * computed before degenerate removal, as in the kernel.
 *
 * Not modelled: hotplug and rebuilds, cpusets and partial cpu_maps,
 * relax_domain_level, ITMT/SD_ASYM_PACKING, the x86 "SMT only on cores with
 * siblings" quirks, perf domains.
 */
#include "sched/topology.h"

#include "sched/profiles.h"

#include "sim/bug.h"
#include "sim/file_io.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace schedlab {

namespace {

/* include/linux/sched/sd_flags.h meta flags. */
constexpr u32 SDF_SHARED_CHILD = 1u << 0;
constexpr u32 SDF_SHARED_PARENT = 1u << 1;
constexpr u32 SDF_NEEDS_GROUPS = 1u << 2;

struct sd_flag_debug {
    const char* name;
    u32 meta_flags;
};

// kernel: include/linux/sched/sd_flags.h (v6.6 meta flags; SD_SHARE_LLC named as in v6.10)
constexpr sd_flag_debug sd_flag_table[SD_FLAG_CNT] = {
    {"SD_BALANCE_NEWIDLE", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS},
    {"SD_BALANCE_EXEC", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS},
    {"SD_BALANCE_FORK", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS},
    {"SD_BALANCE_WAKE", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS},
    {"SD_WAKE_AFFINE", SDF_SHARED_CHILD},
    {"SD_ASYM_CPUCAPACITY", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS},
    {"SD_ASYM_CPUCAPACITY_FULL", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS},
    {"SD_SHARE_CPUCAPACITY", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS},
    {"SD_CLUSTER", SDF_NEEDS_GROUPS},
    {"SD_SHARE_LLC", SDF_SHARED_CHILD | SDF_NEEDS_GROUPS},
    {"SD_SERIALIZE", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS},
    {"SD_ASYM_PACKING", SDF_NEEDS_GROUPS},
    {"SD_PREFER_SIBLING", SDF_NEEDS_GROUPS},
    {"SD_OVERLAP", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS},
    {"SD_NUMA", SDF_SHARED_PARENT | SDF_NEEDS_GROUPS},
};

constexpr u32 flags_with_meta(u32 meta)
{
    u32 mask = 0;
    for (int idx = 0; idx < SD_FLAG_CNT; ++idx)
        if (sd_flag_table[idx].meta_flags & meta)
            mask |= 1u << idx;
    return mask;
}

// kernel: topology.c SD_DEGENERATE_GROUPS_MASK
constexpr u32 SD_DEGENERATE_GROUPS_MASK = flags_with_meta(SDF_NEEDS_GROUPS);
constexpr u32 SD_SHARED_CHILD_MASK = flags_with_meta(SDF_SHARED_CHILD);

/*
 * kernel: struct sched_domain_topology_level. mask() is the arch callback
 * (cpu_smt_mask, ...); sd_flags the descriptive flags only. numa_level is -1
 * for the package-internal levels, 0 for NODE, j >= 1 for NUMA level j.
 * key() names the span mask() gives a CPU (its core, cluster, LLC or node):
 * CPUs with one key have one span, computed once. A partition level's span
 * is exactly the CPUs with the CPU's key (no mask() call needed).
 */
struct sched_domain_topology_level {
    const char* name;
    std::function<cpumask(int)> mask;
    std::function<int(int)> key;
    bool partition = false;
    u32 sd_flags = 0;
    int numa_level = -1;
    int numa_distance = 0;
    bool overlap = false; ///< SDTL_OVERLAP
};

/*
 * kernel: default_topology[] / x86_topology[] plus sched_init_numa().
 * x86 drops the package level when a package holds several nodes
 * (x86_has_numa_in_package: AMD NPS2/NPS4, Intel SNC); NODE then takes its
 * place. NUMA levels: one per distinct remote distance in the SLIT; level j
 * spans the nodes within sched_domains_numa_distance[j] of the CPU's node.
 */
std::vector<sched_domain_topology_level> sched_topology_levels(const machine& m,
                                                               const topology_params& tp)
{
    std::vector<sched_domain_topology_level> tl;
    tl.push_back({"SMT", [&m](int cpu) { return m.smt_mask(cpu); },
                  [&m](int cpu) { return m.cpus[cpu].core; }, true,
                  SD_SHARE_CPUCAPACITY | SD_SHARE_LLC});
    tl.push_back({"CLS", [&m](int cpu) { return m.cluster_mask(cpu); },
                  [&m](int cpu) { return m.cpus[cpu].cluster; }, true, SD_CLUSTER | SD_SHARE_LLC});
    tl.push_back({"MC", [&m](int cpu) { return m.llc_mask(cpu); },
                  [&m](int cpu) { return m.cpus[cpu].llc; }, true, SD_SHARE_LLC});

    bool numa_in_package = false;
    std::map<int, int> node_of_package;
    for (const cpu_desc& c : m.cpus) {
        auto [it, fresh] = node_of_package.try_emplace(c.package, c.node);
        if (!fresh && it->second != c.node)
            numa_in_package = true;
    }
    if (!numa_in_package)
        tl.push_back({tp.pkg_name ? "PKG" : "DIE",
                      [&m](int cpu) { return m.node_mask(m.cpus[cpu].node); },
                      [&m](int cpu) { return m.cpus[cpu].node; }, true, 0});

    std::set<int> distances;
    for (const auto& row : m.numa_distance)
        for (int d : row)
            distances.insert(d);
    const std::vector<int> levels(distances.begin(), distances.end()); // levels[0] == 10
    for (int j = 0; j < static_cast<int>(levels.size()); ++j) {
        const int dist = levels[j];
        auto mask = [&m, dist](int cpu) {
            const int node = m.cpus[cpu].node;
            cpumask span(m.nr_cpus());
            for (int other = 0; other < m.nr_nodes(); ++other)
                if (m.numa_distance[node][other] <= dist)
                    span |= m.node_mask(other);
            return span;
        };
        auto node = [&m](int cpu) { return m.cpus[cpu].node; };
        if (j == 0)
            tl.push_back({"NODE", mask, node, false, 0, 0, dist, false});
        else
            tl.push_back({"NUMA", mask, node, false, SD_NUMA, j, dist, true});
    }
    return tl;
}

/*
 * kernel: asym_cpu_capacity_classify(). Capacity asymmetry of a span:
 * none if it sees one capacity value, SD_ASYM_CPUCAPACITY if it sees some,
 * plus _FULL if it sees every capacity value of the machine.
 */
u32 asym_cpu_capacity_classify(const cpumask& span, const machine& m,
                               const std::set<u32>& all_capacities)
{
    std::set<u32> seen;
    for_each_cpu(cpu, span) seen.insert(m.cpus[cpu].capacity);
    if (seen.size() < 2)
        return 0;
    if (seen.size() < all_capacities.size())
        return SD_ASYM_CPUCAPACITY;
    return SD_ASYM_CPUCAPACITY | SD_ASYM_CPUCAPACITY_FULL;
}

/*
 * kernel: kernel/sched/topology.c sd_init() (v6.6)
 * Differences: imbalance_pct and busy_factor come from topology_params;
 * last_balance / last_decay_max_lb_cost start at 0, jiffies at boot (fair_select.cc
 * jiffies(): the run starts SCHED_CLOCK_AT_START after boot, so they are overdue);
 * SD_OVERLAP is set here rather than by the caller from SDTL_OVERLAP.
 */
std::unique_ptr<sched_domain> sd_init(const sched_domain_topology_level& tl, const machine& m,
                                      const topology_params& tp, sched_domain* child,
                                      const cpumask& span, int sd_weight, u32 asym_flags)
{
    auto sd = std::make_unique<sched_domain>();
    sd->span = span;

    sd->name = tl.name;
    sd->span_weight = sd_weight;
    sd->min_interval = sd_weight;
    sd->max_interval = 2 * sd_weight;
    sd->busy_factor = tp.busy_factor;
    sd->imbalance_pct = tp.imbalance_pct;
    sd->cache_nice_tries = 0;
    sd->flags = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE |
                SD_PREFER_SIBLING | tl.sd_flags;
    sd->balance_interval = sd_weight;
    sd->child = child;
    sd->numa_distance = tl.numa_level > 0 ? tl.numa_distance : 0;

    sd->flags |= asym_flags; // asym_cpu_capacity_classify(span), once per span

    /* Don't attempt to spread across CPUs of different capacities. */
    if (sd->has(SD_ASYM_CPUCAPACITY) && child)
        child->flags &= ~SD_PREFER_SIBLING;

    if (sd->has(SD_SHARE_CPUCAPACITY)) {
        sd->imbalance_pct = tp.smt_imbalance_pct; // kernel: 110
    } else if (sd->has(SD_SHARE_LLC)) {
        sd->imbalance_pct = tp.imbalance_pct; // kernel: 117
        sd->cache_nice_tries = 1;
    } else if (sd->has(SD_NUMA)) {
        sd->cache_nice_tries = 2;
        sd->flags &= ~SD_PREFER_SIBLING;
        sd->flags |= SD_SERIALIZE;
        if (tl.numa_distance > m.node_reclaim_distance)
            sd->flags &= ~(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
    } else {
        sd->cache_nice_tries = 1;
    }
    if (tl.overlap)
        sd->flags |= SD_OVERLAP;
    return sd;
}

/* Per CPU, per topology level, before degenerate removal: the kernel's sdd->sd. */
using sd_data = std::vector<std::vector<std::unique_ptr<sched_domain>>>;

sched_domain* sd_at(const sd_data& sdd, int cpu, int tl)
{
    const auto& v = sdd[cpu];
    return tl < static_cast<int>(v.size()) ? v[tl].get() : nullptr;
}

/*
 * The distinct spans of one topology level, each computed once: CPUs whose
 * key() is equal have the same span (mask() is called once per key), and
 * what sd_init() derives from a span alone (weight, capacity asymmetry,
 * whether it is the whole machine) is derived once too.
 */
struct level_spans {
    std::vector<int> of_cpu;            ///< per CPU: the index of its span
    std::vector<cpumask> span;          ///< per span
    std::vector<std::vector<int>> cpus; ///< per span: its CPUs, ascending
    std::vector<u32> asym;              ///< asym_cpu_capacity_classify(span)
    std::vector<char> spans_all;        ///< span == every CPU
};

level_spans compute_level_spans(const sched_domain_topology_level& tl, const machine& m,
                                const std::set<u32>& all_capacities)
{
    const int nr = m.nr_cpus();
    level_spans l;
    l.of_cpu.resize(static_cast<std::size_t>(nr));
    std::map<int, int> index_of_key;
    for (int cpu = 0; cpu < nr; ++cpu) {
        const auto [it, fresh] =
            index_of_key.try_emplace(tl.key(cpu), static_cast<int>(l.span.size()));
        l.of_cpu[static_cast<std::size_t>(cpu)] = it->second;
        if (!fresh) {
            if (tl.partition)
                l.cpus[static_cast<std::size_t>(it->second)].push_back(cpu);
            continue;
        }
        if (tl.partition) {
            l.span.emplace_back(nr);
            l.cpus.push_back({cpu});
        } else {
            l.span.push_back(tl.mask(cpu));
            l.cpus.push_back(l.span.back().to_vector());
        }
    }
    for (std::size_t i = 0; i < l.span.size(); ++i) {
        if (tl.partition)
            for (const int cpu : l.cpus[i])
                l.span[i].set(cpu);
        l.asym.push_back(asym_cpu_capacity_classify(l.span[i], m, all_capacities));
        l.spans_all.push_back(static_cast<int>(l.cpus[i].size()) == nr);
    }
    return l;
}

void init_group(sched_group& sg, const machine& m, const cpumask& span,
                const std::vector<int>& span_cpus, const cpumask& balance_mask, u32 flags)
{
    sg.span = span;
    sg.balance_mask = balance_mask;
    sg.group_weight = static_cast<int>(span_cpus.size());
    sg.balance_cpu = balance_mask.first();
    sg.flags = flags;
    sg.capacity = 0;
    std::set<int> cores;
    for (const int cpu : span_cpus) {
        sg.capacity += m.cpus[cpu].capacity;
        cores.insert(m.cpus[cpu].core);
    }
    sg.cores = static_cast<int>(cores.size());
}

/// Scratch state of the group builders, sized for the machine once.
struct group_scratch {
    std::vector<int> pos;     ///< CPU -> position in the span being walked (else -1)
    std::vector<u32> covered; ///< CPU -> stamp of the walk that covered it
    u32 stamp = 0;
};

/*
 * kernel: kernel/sched/topology.c build_sched_groups() + get_group() (v6.6)
 * Each group is the child domain of the first uncovered CPU met walking the
 * span from a CPU with wrap-around, or that single CPU at the bottom level.
 * The groups of one span are built once and shared by its CPUs, which enter
 * the ring of groups (walked from the span's first CPU) at their own group.
 * Where a CPU's own walk would meet the groups in another order than the
 * ring's (possible with unusual CPU numbering), it gets its own order.
 */
void build_sched_groups(sched_topology& t, const sd_data& sdd, const std::vector<level_spans>& lv,
                        int tl, int s, const machine& m, group_scratch& scr)
{
    const std::vector<int>& cpus = lv[tl].cpus[s];
    const auto n = cpus.size();
    for (std::size_t k = 0; k < n; ++k)
        scr.pos[cpus[k]] = static_cast<int>(k);
    std::vector<u32> group_of(n, ~0u);
    auto ring = std::make_unique<std::vector<sched_group>>();
    for (std::size_t k = 0; k < n; ++k) {
        const int i = cpus[k];
        if (group_of[k] != ~0u)
            continue;
        const sched_domain* sibling = sd_at(sdd, i, tl);
        SIM_BUG_ON(!sibling, "cpu{} has no level-{} domain", i, tl);
        const u32 g = static_cast<u32>(ring->size());
        sched_group& sg = ring->emplace_back();
        if (sibling->child) {
            const int cs = lv[tl - 1].of_cpu[i];
            init_group(sg, m, sibling->child->span, lv[tl - 1].cpus[cs], sibling->child->span,
                       sibling->child->flags);
            for (const int j : lv[tl - 1].cpus[cs])
                if (scr.pos[j] >= 0)
                    group_of[static_cast<std::size_t>(scr.pos[j])] = g;
        } else {
            cpumask one(m.nr_cpus());
            one.set(i);
            init_group(sg, m, one, {i}, one, 0);
            group_of[k] = g;
        }
    }
    for (const int cpu : cpus)
        scr.pos[cpu] = -1;
    const auto nr_groups = static_cast<u32>(ring->size());

    // Does every walk meet the groups in the ring's order? Yes when the groups met
    // walking the span, with repeats of one group collapsed (cyclically), are the
    // ring over and over: from any CPU, the next groups are then the ring's.
    std::vector<u32> runs;
    for (const u32 g : group_of)
        if (runs.empty() || runs.back() != g)
            runs.push_back(g);
    if (runs.size() > 1 && runs.front() == runs.back())
        runs.pop_back();
    bool rotation = runs.size() % nr_groups == 0;
    for (std::size_t k = 0; rotation && k < runs.size(); ++k)
        rotation = runs[k] == k % nr_groups;

    const sched_group* base = ring->data();
    t.group_rings.push_back(std::move(ring));
    for (std::size_t k = 0; k < n; ++k) {
        sched_domain& sd = *sdd[cpus[k]][tl];
        if (rotation) {
            sd.groups = sched_group_list(base, nr_groups, group_of[k]);
            continue;
        }
        // for_each_cpu_wrap(i, span, cpu): the first time each group is met.
        auto order = std::make_unique<std::vector<u32>>();
        std::vector<char> met(nr_groups, 0);
        for (std::size_t step = 0; step < n && order->size() < nr_groups; ++step) {
            const u32 g = group_of[(k + step) % n];
            if (!met[g]) {
                met[g] = 1;
                order->push_back(g);
            }
        }
        sd.groups = sched_group_list(base, nr_groups, 0, order->data());
        t.group_orders.push_back(std::move(order));
    }
}

// kernel: kernel/sched/topology.c find_descended_sibling() (v6.6)
const sched_domain* find_descended_sibling(const sched_domain& sd, const sched_domain* sibling)
{
    while (sibling->child && !sibling->child->span.is_subset_of(sd.span))
        sibling = sibling->child;
    while (sibling->child && sibling->child->span == sibling->span)
        sibling = sibling->child;
    return sibling;
}

/* Which of sibling's level each CPU of a domain sits at (for build_balance_mask). */
int level_of(const sd_data& sdd, int cpu, const sched_domain* sd)
{
    for (int tl = 0; tl < static_cast<int>(sdd[cpu].size()); ++tl)
        if (sdd[cpu][tl].get() == sd)
            return tl;
    return -1;
}

/// One overlap group as the walk finds it: the level and span index its span comes
/// from, and the level of the sibling domain that reached it (for its balance mask).
using overlap_group_key = std::array<int, 3>;
using overlap_rings = std::map<std::vector<overlap_group_key>, const sched_group*>;

/*
 * kernel: kernel/sched/topology.c build_overlap_sched_groups(),
 * build_group_from_child_sched_domain(), build_balance_mask() (v6.6)
 * NUMA groups may overlap; each is the child span of the sibling domain of
 * the first uncovered CPU; its balance mask holds the CPUs that would reach
 * this group from their own child domain. Each CPU walks its span; CPUs whose
 * walks find the same groups in the same order share them.
 */
void build_overlap_sched_groups(sched_topology& t, sched_domain& sd, const sd_data& sdd,
                                const std::vector<level_spans>& lv, int tl, int cpu,
                                const machine& m, group_scratch& scr, overlap_rings& rings)
{
    const std::vector<int>& cpus = lv[tl].cpus[lv[tl].of_cpu[cpu]];
    const auto n = cpus.size();
    const auto start =
        static_cast<std::size_t>(std::lower_bound(cpus.begin(), cpus.end(), cpu) - cpus.begin());
    const u32 stamp = ++scr.stamp;
    std::vector<overlap_group_key> keys;
    std::vector<u32> flags;
    for (std::size_t step = 0; step < n; ++step) {
        const int i = cpus[(start + step) % n];
        if (scr.covered[i] == stamp)
            continue;
        const sched_domain* sibling = sd_at(sdd, i, tl);
        if (!sibling || !sibling->span.test(i))
            continue;
        if (sibling->child && !sibling->child->span.is_subset_of(sd.span))
            sibling = find_descended_sibling(sd, sibling);
        const sched_domain* from = sibling->child ? sibling->child : sibling;
        const int from_tl = level_of(sdd, i, from);
        const int span_idx = lv[from_tl].of_cpu[i];
        keys.push_back({from_tl, span_idx, level_of(sdd, i, sibling)});
        flags.push_back(sibling->child ? sibling->child->flags : 0);
        for (const int j : lv[from_tl].cpus[span_idx])
            scr.covered[j] = stamp;
    }
    auto [it, fresh] = rings.try_emplace(keys, nullptr);
    if (fresh) {
        auto ring = std::make_unique<std::vector<sched_group>>(keys.size());
        for (std::size_t g = 0; g < keys.size(); ++g) {
            const auto [from_tl, span_idx, sib_tl] = keys[g];
            const cpumask& span = lv[from_tl].span[span_idx];
            cpumask balance_mask(m.nr_cpus());
            for (const int j : lv[from_tl].cpus[span_idx]) {
                const sched_domain* s = sd_at(sdd, j, sib_tl);
                if (!s || !s->child || !(s->child->span == span))
                    continue;
                balance_mask.set(j);
            }
            if (balance_mask.empty()) // kernel: WARN_ON_ONCE(cpumask_empty(mask))
                balance_mask = span;
            init_group((*ring)[g], m, span, lv[from_tl].cpus[span_idx], balance_mask, flags[g]);
        }
        it->second = ring->data();
        t.group_rings.push_back(std::move(ring));
    }
    sd.groups = sched_group_list(it->second, static_cast<u32>(keys.size()), 0);
}

/*
 * kernel: kernel/sched/topology.c build_sched_domains(), the imb_numa_nr loop (v6.x)
 * At the first domain above the LLC: imb = number of LLCs it spans, or
 * span/8 when it spans one LLC (min 1). Above it, imb scaled by how many
 * first-NUMA-level spans the domain covers.
 */
void set_imb_numa_nr(sched_domain* bottom)
{
    u32 imb = 0, imb_span = 1;
    for (sched_domain* sd = bottom; sd; sd = sd->parent) {
        const sched_domain* child = sd->child;
        if (!sd->has(SD_SHARE_LLC) && child && child->has(SD_SHARE_LLC)) {
            const u32 nr_llcs = sd->span_weight / child->span_weight;
            imb = nr_llcs == 1 ? static_cast<u32>(sd->span_weight) >> 3 : nr_llcs;
            imb = std::max(1u, imb);
            sd->imb_numa_nr = imb;
            const sched_domain* top_p = sd->parent;
            while (top_p && !top_p->has(SD_NUMA))
                top_p = top_p->parent;
            imb_span = top_p ? top_p->span_weight : sd->span_weight;
        } else {
            const u32 factor = std::max(1u, static_cast<u32>(sd->span_weight) / imb_span);
            sd->imb_numa_nr = imb * factor;
        }
    }
}

// kernel: kernel/sched/topology.c sd_degenerate() (v6.6)
bool sd_degenerate(const sched_domain& sd)
{
    if (sd.span_weight == 1)
        return true;
    /* Following flags need at least 2 groups */
    if ((sd.flags & SD_DEGENERATE_GROUPS_MASK) && sd.groups.size() > 1)
        return false;
    /* Following flags don't use groups */
    if (sd.flags & SD_WAKE_AFFINE)
        return false;
    return true;
}

// kernel: kernel/sched/topology.c sd_parent_degenerate() (v6.6)
bool sd_parent_degenerate(const sched_domain& sd, const sched_domain& parent)
{
    if (sd_degenerate(parent))
        return true;
    if (!(sd.span == parent.span))
        return false;
    u32 pflags = parent.flags;
    /* Flags needing groups don't count if only 1 group in parent */
    if (parent.groups.size() == 1)
        pflags &= ~SD_DEGENERATE_GROUPS_MASK;
    return (~sd.flags & pflags) == 0;
}

/*
 * kernel: kernel/sched/topology.c cpu_attach_domain(), the degenerate-removal part (v6.10+)
 * Drops parents that add nothing over their child (transferring
 * SD_PREFER_SIBLING down), then a degenerate bottom domain.
 * Differences: the surviving groups' flags are then refreshed from their final
 * child domain (attach_group_flags()) rather than only the first group's
 * (symmetric machines: same).
 */
sched_domain* cpu_attach_domain(sched_domain* sd, std::vector<sched_domain*>& destroyed)
{
    for (sched_domain* tmp = sd; tmp;) {
        sched_domain* parent = tmp->parent;
        if (!parent)
            break;
        if (sd_parent_degenerate(*tmp, *parent)) {
            tmp->parent = parent->parent;
            if (parent->parent)
                parent->parent->child = tmp;
            /* The spans match, so the preference transfers. */
            if (parent->flags & SD_PREFER_SIBLING)
                tmp->flags |= SD_PREFER_SIBLING;
            destroyed.push_back(parent);
        } else {
            tmp = tmp->parent;
        }
    }
    if (sd && sd_degenerate(*sd)) {
        sched_domain* tmp = sd;
        sd = sd->parent;
        destroyed.push_back(tmp);
        if (sd)
            sd->child = nullptr;
    }
    return sd;
}

sched_domain* highest_flag_domain(const cpu_sched_domains& c, u32 flag)
{
    sched_domain* hsd = nullptr;
    for (const auto& sd : c.domains) {
        if (sd->has(flag)) {
            hsd = sd.get();
            continue;
        }
        if (flag & SD_SHARED_CHILD_MASK)
            break;
    }
    return hsd;
}

sched_domain* lowest_flag_domain(const cpu_sched_domains& c, u32 flag)
{
    for (const auto& sd : c.domains)
        if (sd->has(flag))
            return sd.get();
    return nullptr;
}

} // namespace

const char* sd_flag_name(u32 flag)
{
    for (int idx = 0; idx < SD_FLAG_CNT; ++idx)
        if (flag == (1u << idx))
            return sd_flag_table[idx].name;
    return "";
}

std::string sd_flags_to_string(u32 flags)
{
    std::string s;
    for (int idx = 0; idx < SD_FLAG_CNT; ++idx)
        if (flags & (1u << idx)) {
            if (!s.empty())
                s += ' ';
            s += sd_flag_table[idx].name;
        }
    return s;
}

namespace {
void check_cpu_domains(const sched_topology& t, int cpu, std::vector<std::string>& errs,
                       std::unordered_set<const sched_group*>* checked);

/*
 * The last part of cpu_attach_domain() (model: see there): every surviving
 * domain's groups carry the flags of its final child domain, 0 at the bottom.
 * Domains sharing a ring that would give it different flags (CPUs of one
 * span with different child domains) get copies of it; rings that only
 * degenerate domains listed are freed. Then the groups are numbered.
 */
void attach_group_flags(sched_topology& t)
{
    std::unordered_map<const sched_group*, std::size_t> ring_of;
    for (std::size_t r = 0; r < t.group_rings.size(); ++r)
        ring_of.emplace(t.group_rings[r]->data(), r);
    std::vector<std::vector<std::pair<sched_domain*, u32>>> users(t.group_rings.size());
    for (auto& c : t.cpus)
        for (auto& sd : c.domains)
            users[ring_of.at(sd->groups.base())].emplace_back(sd.get(),
                                                              sd->child ? sd->child->flags : 0);
    std::vector<std::unique_ptr<std::vector<sched_group>>> rings;
    for (std::size_t r = 0; r < t.group_rings.size(); ++r) {
        if (users[r].empty())
            continue;
        std::vector<std::pair<u32, std::vector<sched_group>*>> variants;
        for (const auto& [sd, f] : users[r]) {
            std::vector<sched_group>* ring = nullptr;
            for (const auto& v : variants)
                if (v.first == f)
                    ring = v.second;
            if (!ring) {
                if (variants.empty())
                    rings.push_back(std::move(t.group_rings[r]));
                else
                    rings.push_back(
                        std::make_unique<std::vector<sched_group>>(*variants[0].second));
                ring = rings.back().get();
                for (sched_group& sg : *ring)
                    sg.flags = f;
                variants.emplace_back(f, ring);
            }
            const sched_group_list& old = sd->groups;
            sd->groups = sched_group_list(ring->data(), static_cast<u32>(old.size()), old.start(),
                                          old.order());
        }
    }
    t.group_rings = std::move(rings);
    std::vector<const sched_group*> all;
    for (auto& ring : t.group_rings)
        for (sched_group& sg : *ring) {
            sg.id = static_cast<int>(all.size());
            all.push_back(&sg);
        }
    t.set_groups(std::move(all));
}
} // namespace

/*
 * kernel: kernel/sched/topology.c build_sched_domains(), build_sched_domain(),
 *         cpu_attach_domain(), update_top_cache_domain() (v6.6)
 * Differences: the cpu_map is always every CPU of the machine (no cpusets,
 * no hotplug); one sched_domain_shared per LLC is attached to the sd_llc
 * domain only (the kernel attaches one to every SD_SHARE_LLC level, but only
 * sd_llc's is ever read through sd_llc_shared).
 */
topology_params topology_params_of(const kernel_config& kc)
{
    topology_params tp;
    tp.pkg_name = kc.behaviour.pkg_domain_name;
    // imb_numa_nr is computed by build_sched_domains() from v5.18 (e496132ebedd); 5.15 has none.
    tp.numa_imb_6x = kc.behaviour.numa_imb_nr;
    return tp;
}

sched_topology build_sched_domains(const machine& m, const topology_params& tp)
{
    check_memory_estimate(
        sched_domains_bytes_estimate(m),
        fmt::format("the sched domains of machine {} ({} CPUs)", m.name, m.nr_cpus()), m.name);
    const int nr = m.nr_cpus();
    const auto tls = sched_topology_levels(m, tp);
    std::set<u32> all_capacities;
    for (const cpu_desc& c : m.cpus)
        all_capacities.insert(c.capacity);
    std::vector<level_spans> lv;
    for (const auto& tl : tls)
        lv.push_back(compute_level_spans(tl, m, all_capacities));

    /* Set up domains for CPUs specified by the cpu_map: */
    sd_data sdd(nr);
    for (int cpu = 0; cpu < nr; ++cpu) {
        sched_domain* child = nullptr;
        for (int tl = 0; tl < static_cast<int>(tls.size()); ++tl) {
            const level_spans& l = lv[static_cast<std::size_t>(tl)];
            const int s = l.of_cpu[static_cast<std::size_t>(cpu)];
            auto sd = sd_init(tls[tl], m, tp, child, l.span[s], static_cast<int>(l.cpus[s].size()),
                              l.asym[s]);
            if (child) {
                // kernel: build_sched_domain() "BUG: arch topology borken"
                SIM_BUG_ON(!child->span.is_subset_of(sd->span),
                           "cpu{}: level {} span {} is not a superset of its child {} span {}", cpu,
                           sd->name, sd->span.to_cpulist(), child->name, child->span.to_cpulist());
                sd->level = child->level + 1;
                child->parent = sd.get();
            }
            child = sd.get();
            sdd[cpu].push_back(std::move(sd));
            if (l.spans_all[s])
                break;
        }
    }

    /* Build the groups for the domains: once per span, shared by its CPUs */
    sched_topology t;
    group_scratch scr;
    scr.pos.assign(static_cast<std::size_t>(nr), -1);
    scr.covered.assign(static_cast<std::size_t>(nr), 0);
    for (int tl = 0; tl < static_cast<int>(tls.size()); ++tl) {
        const level_spans& l = lv[static_cast<std::size_t>(tl)];
        if (tls[tl].overlap) {
            overlap_rings rings;
            for (int cpu = 0; cpu < nr; ++cpu)
                if (sched_domain* sd = sd_at(sdd, cpu, tl))
                    build_overlap_sched_groups(t, *sd, sdd, lv, tl, cpu, m, scr, rings);
            continue;
        }
        for (int s = 0; s < static_cast<int>(l.span.size()); ++s)
            if (std::any_of(l.cpus[s].begin(), l.cpus[s].end(),
                            [&](int cpu) { return sd_at(sdd, cpu, tl) != nullptr; }))
                build_sched_groups(t, sdd, lv, tl, s, m, scr);
    }

    /* Calculate an allowed NUMA imbalance such that LLCs do not get imbalanced. */
    if (tp.numa_imb_6x)
        for (int cpu = 0; cpu < nr; ++cpu)
            set_imb_numa_nr(sdd[cpu].front().get());

    /* Attach the domains */
    t.cpus.resize(nr);
    std::map<int, sched_domain_shared*> shared_of_llc;
    for (int cpu = 0; cpu < nr; ++cpu) {
        std::vector<sched_domain*> destroyed;
        sched_domain* sd = cpu_attach_domain(sdd[cpu].front().get(), destroyed);

        cpu_sched_domains& c = t.cpus[cpu];
        for (sched_domain* s = sd; s; s = s->parent)
            for (auto& owned : sdd[cpu])
                if (owned.get() == s) {
                    s->level = static_cast<int>(c.domains.size());
                    c.domains.push_back(std::move(owned));
                    break;
                }
        sdd[cpu].clear(); // frees the degenerate domains

        // kernel: update_top_cache_domain()
        c.sd_llc = highest_flag_domain(c, SD_SHARE_LLC);
        c.sd_llc_size = c.sd_llc ? c.sd_llc->span_weight : 1;
        c.sd_llc_id = c.sd_llc ? c.sd_llc->span.first() : cpu;
        if (c.sd_llc) {
            auto [it, fresh] = shared_of_llc.try_emplace(c.sd_llc_id, nullptr);
            if (fresh) {
                t.llc_shared.push_back(std::make_unique<sched_domain_shared>());
                it->second = t.llc_shared.back().get();
                it->second->nr_busy_cpus = c.sd_llc_size;
            }
            c.sd_llc->shared = it->second;
            c.sd_llc_shared = it->second;
        }
        // v6.8+ (b95303e0aeaf): the cluster's id on a cluster machine, else the LLC's.
        const sched_domain* cls = lowest_flag_domain(c, SD_CLUSTER);
        c.sd_share_id = cls ? cls->span.first() : c.sd_llc_id;
        // build_sched_domains(): has_cluster enables sched_cluster_active (v6.8+).
        if (cls)
            t.sched_cluster_active = true;
        c.sd_numa = lowest_flag_domain(c, SD_NUMA);
        c.sd_asym_cpucapacity = lowest_flag_domain(c, SD_ASYM_CPUCAPACITY_FULL);
    }
    attach_group_flags(t);

    std::unordered_set<const sched_group*> checked;
    for (int cpu = 0; cpu < nr; ++cpu) {
        std::vector<std::string> errs;
        check_cpu_domains(t, cpu, errs, &checked);
        SIM_BUG_ON(!errs.empty(), "sched domains of cpu{} on machine '{}':\n  {}", cpu, m.name,
                   fmt::join(errs, "\n  "));
    }
    return t;
}

namespace {

/*
 * The checks of one CPU's domains. A ring of groups is checked against the
 * domain's span once per `checked` set (every domain listing it has that
 * span: the groups cover it), not once per CPU.
 */
void check_cpu_domains(const sched_topology& t, int cpu, std::vector<std::string>& errs,
                       std::unordered_set<const sched_group*>* checked)
{
    const cpu_sched_domains& c = t.cpu(cpu);
    const int n = static_cast<int>(c.domains.size());
    for (int i = 0; i < n; ++i) {
        const sched_domain& sd = *c.domains[i];
        auto err = [&](const std::string& what) {
            errs.push_back(fmt::format("domain-{} {}: {}", i, sd.name, what));
        };
        if (sd.level != i)
            err(fmt::format("level is {}, expected {}", sd.level, i));
        if (sd.child != (i > 0 ? c.domains[i - 1].get() : nullptr))
            err("child pointer does not point at the domain below");
        if (sd.parent != (i + 1 < n ? c.domains[i + 1].get() : nullptr))
            err("parent pointer does not point at the domain above");
        if (sd.span_weight != sd.span.weight())
            err(fmt::format("span_weight {} but the span has {} CPUs", sd.span_weight,
                            sd.span.weight()));
        if (!sd.span.test(cpu))
            err(fmt::format("domain->span does not contain CPU{}", cpu));
        if (sd.groups.empty()) {
            err("group is NULL");
            continue;
        }
        if (!sd.groups.front().span.test(cpu))
            err(fmt::format("domain->groups does not contain CPU{}", cpu));

        for (int idx = 0; idx < SD_FLAG_CNT; ++idx) {
            const u32 flag = 1u << idx;
            if (!(sd.flags & flag))
                continue;
            const u32 meta = sd_flag_table[idx].meta_flags;
            if ((meta & SDF_SHARED_CHILD) && sd.child && !(sd.child->flags & flag))
                err(fmt::format("flag {} set here but not in child", sd_flag_table[idx].name));
            if ((meta & SDF_SHARED_PARENT) && sd.parent && !(sd.parent->flags & flag))
                err(fmt::format("flag {} set here but not in parent", sd_flag_table[idx].name));
        }
        if (sd.child && !(sd.child->span == sd.groups.front().span))
            err("domain->groups does not match domain->child");
        if (sd.parent && !sd.span.is_subset_of(sd.parent->span))
            err("parent span is not a superset of domain->span");

        if (checked && !checked->insert(sd.groups.base()).second)
            continue;
        cpumask groupmask(sd.span.nr_cpu_ids());
        for (std::size_t g = 0; g < sd.groups.size(); ++g) {
            const sched_group& sg = sd.groups[g];
            if (sg.span.empty()) {
                err("empty group");
                break;
            }
            if (!sd.has(SD_OVERLAP) && groupmask.intersects(sg.span)) {
                err("repeated CPUs");
                break;
            }
            groupmask |= sg.span;
            if (sg.group_weight != sg.span.weight())
                err(fmt::format("group {} has group_weight {} but {} CPUs", g, sg.group_weight,
                                sg.span.weight()));
            if (sg.capacity == 0)
                err(fmt::format("group {} has zero capacity", g));
            if (!sg.balance_mask.is_subset_of(sg.span) || !sg.span.test(sg.balance_cpu) ||
                sg.balance_cpu != sg.balance_mask.first())
                err(fmt::format("group {} balance mask/cpu is not inside its span", g));
        }
        if (!(groupmask == sd.span))
            err("groups don't span domain->span");
    }
    if (c.sd_llc) {
        if (c.sd_llc_size != c.sd_llc->span_weight || c.sd_llc_id != c.sd_llc->span.first())
            errs.push_back("sd_llc_size/sd_llc_id do not match the sd_llc span");
        if (!c.sd_llc_shared || c.sd_llc->shared != c.sd_llc_shared)
            errs.push_back("sd_llc has no sched_domain_shared");
    } else if (c.sd_llc_size != 1 || c.sd_llc_id != cpu) {
        errs.push_back("no sd_llc but sd_llc_size/sd_llc_id are not the CPU's own");
    }
}

} // namespace

std::vector<std::string> sched_domain_check(const sched_topology& t, int cpu)
{
    std::vector<std::string> errs;
    check_cpu_domains(t, cpu, errs, nullptr);
    return errs;
}

/*
 * kernel: kernel/sched/topology.c sched_domain_debug() / sched_domain_debug_one() (v6.6)
 * Same text as the boot log with sched_verbose; verbose mode adds a flags
 * line and a parameters line per domain (the debugfs domain files).
 */
std::string sched_domain_debug(const sched_topology& t, const machine& m, bool verbose)
{
    std::string out;
    (void)m;
    for (int cpu = 0; cpu < static_cast<int>(t.cpus.size()); ++cpu)
        out += sched_domain_debug_cpu(t, cpu, verbose);
    return out;
}

std::string sched_domain_debug_cpu(const sched_topology& t, int cpu, bool verbose)
{
    const cpu_sched_domains& c = t.cpu(cpu);
    if (c.domains.empty())
        return fmt::format("CPU{} attaching NULL sched-domain.\n", cpu);
    std::string out;
    auto o = std::back_inserter(out);
    fmt::format_to(o, "CPU{} attaching sched-domain(s):\n", cpu);
    for (const auto& sdp : c.domains) {
        const sched_domain& sd = *sdp;
        const int level = sd.level;
        fmt::format_to(o, "{:{}} domain-{}: span={} level={}\n", "", level, level,
                       sd.span.to_cpulist(), sd.name);
        fmt::format_to(o, "{:{}} groups:", "", level + 1);
        for (std::size_t g = 0; g < sd.groups.size(); ++g) {
            const sched_group& sg = sd.groups[g];
            fmt::format_to(o, " {}:{{ span={}", sg.balance_cpu, sg.span.to_cpulist());
            if (sd.has(SD_OVERLAP) && !(sg.balance_mask == sg.span))
                fmt::format_to(o, " mask={}", sg.balance_mask.to_cpulist());
            if (sg.capacity != 1024)
                fmt::format_to(o, " cap={}", sg.capacity);
            out += " }";
            if (g + 1 < sd.groups.size())
                out += ",";
        }
        out += "\n";
        if (verbose) {
            fmt::format_to(o, "{:{}} flags: {}\n", "", level + 1, sd_flags_to_string(sd.flags));
            fmt::format_to(o,
                           "{:{}} min_interval={} max_interval={} balance_interval={} "
                           "busy_factor={} imbalance_pct={} cache_nice_tries={} "
                           "imb_numa_nr={}{}\n",
                           "", level + 1, sd.min_interval, sd.max_interval, sd.balance_interval,
                           sd.busy_factor, sd.imbalance_pct, sd.cache_nice_tries, sd.imb_numa_nr,
                           sd.numa_distance ? fmt::format(" distance={}", sd.numa_distance) : "");
        }
    }
    return out;
}

double sched_domains_bytes_estimate(const machine& m)
{
    const double n = m.nr_cpus();
    const double mask = sizeof(cpumask) + 8.0 * std::ceil(n / 64);
    const double group = sizeof(sched_group) + 2 * mask;
    const double domain = sizeof(sched_domain) + sizeof(std::unique_ptr<sched_domain>) + mask;
    std::set<int> cores, clusters, llcs, nodes, distances;
    for (const auto& row : m.numa_distance)
        distances.insert(row.begin(), row.end());
    for (const cpu_desc& d : m.cpus) {
        cores.insert(d.core);
        clusters.insert(d.cluster);
        llcs.insert(d.llc);
        nodes.insert(d.node);
    }
    // Per CPU: up to five domains before degenerate removal (SMT, CLS, MC, DIE, and NODE or
    // NUMA), each with a span. Shared groups: SMT's are the threads, CLS's the cores, MC's the
    // clusters, DIE's the LLCs, NODE's the nodes' children; each NUMA level a ring of node
    // groups per node.
    const double nr_nodes = static_cast<double>(nodes.size());
    const double numa_levels = distances.size() > 1 ? static_cast<double>(distances.size() - 1) : 0;
    const double groups = n + static_cast<double>(cores.size()) +
                          static_cast<double>(clusters.size()) +
                          2 * static_cast<double>(llcs.size()) + numa_levels * nr_nodes * nr_nodes;
    return n * 5 * domain + groups * group;
}

} // namespace schedlab
