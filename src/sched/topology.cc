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

#include "sim/bug.h"
#include "sim/file_io.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

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
 */
struct sched_domain_topology_level {
    const char* name;
    std::function<cpumask(int)> mask;
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
    tl.push_back(
        {"SMT", [&m](int cpu) { return m.smt_mask(cpu); }, SD_SHARE_CPUCAPACITY | SD_SHARE_LLC});
    tl.push_back({"CLS", [&m](int cpu) { return m.cluster_mask(cpu); }, SD_CLUSTER | SD_SHARE_LLC});
    tl.push_back({"MC", [&m](int cpu) { return m.llc_mask(cpu); }, SD_SHARE_LLC});

    bool numa_in_package = false;
    std::map<int, int> node_of_package;
    for (const cpu_desc& c : m.cpus) {
        auto [it, fresh] = node_of_package.try_emplace(c.package, c.node);
        if (!fresh && it->second != c.node)
            numa_in_package = true;
    }
    if (!numa_in_package)
        tl.push_back({tp.pkg_name ? "PKG" : "DIE",
                      [&m](int cpu) { return m.node_mask(m.cpus[cpu].node); }, 0});

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
        if (j == 0)
            tl.push_back({"NODE", mask, 0, 0, dist, false});
        else
            tl.push_back({"NUMA", mask, SD_NUMA, j, dist, true});
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
 * last_balance / last_decay_max_lb_cost start at 0 ns (jiffies at boot);
 * SD_OVERLAP is set here rather than by the caller from SDTL_OVERLAP.
 */
std::unique_ptr<sched_domain> sd_init(const sched_domain_topology_level& tl, const machine& m,
                                      const topology_params& tp, sched_domain* child, int cpu,
                                      const std::set<u32>& all_capacities)
{
    auto sd = std::make_unique<sched_domain>();
    sd->span = tl.mask(cpu);
    const int sd_weight = sd->span.weight();

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

    sd->flags |= asym_cpu_capacity_classify(sd->span, m, all_capacities);

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

void init_group(sched_group& sg, const machine& m, const cpumask& span, const cpumask& balance_mask,
                u32 flags)
{
    sg.span = span;
    sg.balance_mask = balance_mask;
    sg.group_weight = span.weight();
    sg.balance_cpu = balance_mask.first();
    sg.flags = flags;
    sg.capacity = 0;
    std::set<int> cores;
    for_each_cpu(cpu, span)
    {
        sg.capacity += m.cpus[cpu].capacity;
        cores.insert(m.cpus[cpu].core);
    }
    sg.cores = static_cast<int>(cores.size());
}

/*
 * kernel: kernel/sched/topology.c build_sched_groups() + get_group() (v6.6)
 * Each group is the child domain of the first uncovered CPU met walking the
 * span from `cpu` with wrap-around, or that single CPU at the bottom level.
 */
void build_sched_groups(sched_domain& sd, const sd_data& sdd, int tl, int cpu, const machine& m)
{
    cpumask covered(m.nr_cpus());
    for_each_cpu_wrap(sd.span, cpu, [&](int i) {
        if (covered.test(i))
            return true;
        const sched_domain* sibling = sd_at(sdd, i, tl);
        SIM_BUG_ON(!sibling, "cpu{} has no level-{} domain", i, tl);
        cpumask span(m.nr_cpus());
        u32 flags = 0;
        if (sibling->child) {
            span = sibling->child->span;
            flags = sibling->child->flags;
        } else {
            span.set(i);
        }
        sched_group sg;
        init_group(sg, m, span, span, flags);
        sd.groups.push_back(std::move(sg));
        covered |= span;
        return true;
    });
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

/*
 * kernel: kernel/sched/topology.c build_overlap_sched_groups(),
 * build_group_from_child_sched_domain(), build_balance_mask() (v6.6)
 * NUMA groups may overlap; each is the child span of the sibling domain of
 * the first uncovered CPU; its balance mask holds the CPUs that would reach
 * this group from their own child domain.
 */
void build_overlap_sched_groups(sched_domain& sd, const sd_data& sdd, int tl, int cpu,
                                const machine& m)
{
    cpumask covered(m.nr_cpus());
    for_each_cpu_wrap(sd.span, cpu, [&](int i) {
        if (covered.test(i))
            return true;
        const sched_domain* sibling = sd_at(sdd, i, tl);
        if (!sibling || !sibling->span.test(i))
            return true;
        if (sibling->child && !sibling->child->span.is_subset_of(sd.span))
            sibling = find_descended_sibling(sd, sibling);

        const cpumask span = sibling->child ? sibling->child->span : sibling->span;
        const u32 flags = sibling->child ? sibling->child->flags : 0;

        const int sib_tl = level_of(sdd, i, sibling);
        cpumask balance_mask(m.nr_cpus());
        for_each_cpu(j, span)
        {
            const sched_domain* s = sd_at(sdd, j, sib_tl);
            if (!s || !s->child || !(s->child->span == span))
                continue;
            balance_mask.set(j);
        }
        if (balance_mask.empty()) // kernel: WARN_ON_ONCE(cpumask_empty(mask))
            balance_mask = span;

        sched_group sg;
        init_group(sg, m, span, balance_mask, flags);
        sd.groups.push_back(std::move(sg));
        covered |= span;
        return true;
    });
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
 * Differences: the surviving groups' flags are refreshed from their final
 * child domain rather than only the first group's (symmetric machines: same).
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
    for (sched_domain* s = sd; s; s = s->parent)
        for (sched_group& sg : s->groups)
            sg.flags = s->child ? s->child->flags : 0;
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

/*
 * kernel: kernel/sched/topology.c build_sched_domains(), build_sched_domain(),
 *         cpu_attach_domain(), update_top_cache_domain() (v6.6)
 * Differences: the cpu_map is always every CPU of the machine (no cpusets,
 * no hotplug); one sched_domain_shared per LLC is attached to the sd_llc
 * domain only (the kernel attaches one to every SD_SHARE_LLC level, but only
 * sd_llc's is ever read through sd_llc_shared).
 */
sched_topology build_sched_domains(const machine& m, const topology_params& tp)
{
    check_memory_estimate(
        sched_domains_bytes_estimate(m),
        fmt::format("the sched domains of machine {} ({} CPUs)", m.name, m.nr_cpus()), m.name);
    const int nr = m.nr_cpus();
    const auto tls = sched_topology_levels(m, tp);
    const cpumask cpu_map = m.all();
    std::set<u32> all_capacities;
    for (const cpu_desc& c : m.cpus)
        all_capacities.insert(c.capacity);

    /* Set up domains for CPUs specified by the cpu_map: */
    sd_data sdd(nr);
    for (int cpu = 0; cpu < nr; ++cpu) {
        sched_domain* child = nullptr;
        for (int tl = 0; tl < static_cast<int>(tls.size()); ++tl) {
            auto sd = sd_init(tls[tl], m, tp, child, cpu, all_capacities);
            if (child) {
                // kernel: build_sched_domain() "BUG: arch topology borken"
                SIM_BUG_ON(!child->span.is_subset_of(sd->span),
                           "cpu{}: level {} span {} is not a superset of its child {} span {}", cpu,
                           sd->name, sd->span.to_cpulist(), child->name, child->span.to_cpulist());
                sd->level = child->level + 1;
                child->parent = sd.get();
            }
            child = sd.get();
            const bool spans_all = sd->span == cpu_map;
            sdd[cpu].push_back(std::move(sd));
            if (spans_all)
                break;
        }
    }

    /* Build the groups for the domains */
    for (int cpu = 0; cpu < nr; ++cpu)
        for (int tl = 0; tl < static_cast<int>(sdd[cpu].size()); ++tl) {
            sched_domain& sd = *sdd[cpu][tl];
            if (sd.has(SD_OVERLAP))
                build_overlap_sched_groups(sd, sdd, tl, cpu, m);
            else
                build_sched_groups(sd, sdd, tl, cpu, m);
        }

    /* Calculate an allowed NUMA imbalance such that LLCs do not get imbalanced. */
    if (tp.numa_imb_6x)
        for (int cpu = 0; cpu < nr; ++cpu)
            set_imb_numa_nr(sdd[cpu].front().get());

    /* Attach the domains */
    sched_topology t;
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
        c.sd_numa = lowest_flag_domain(c, SD_NUMA);
        c.sd_asym_cpucapacity = lowest_flag_domain(c, SD_ASYM_CPUCAPACITY_FULL);
    }

    for (int cpu = 0; cpu < nr; ++cpu) {
        const auto errs = sched_domain_check(t, cpu);
        SIM_BUG_ON(!errs.empty(), "sched domains of cpu{} on machine '{}':\n  {}", cpu, m.name,
                   fmt::join(errs, "\n  "));
    }
    return t;
}

/*
 * kernel: kernel/sched/topology.c sched_domain_debug_one() checks, plus the
 * structural invariants of Documentation/scheduler/sched-domains.rst.
 */
std::vector<std::string> sched_domain_check(const sched_topology& t, int cpu)
{
    std::vector<std::string> errs;
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
        if (sd.child && !(sd.child->span == sd.groups.front().span))
            err("domain->groups does not match domain->child");
        if (!(groupmask == sd.span))
            err("groups don't span domain->span");
        if (sd.parent && !groupmask.is_subset_of(sd.parent->span))
            err("parent span is not a superset of domain->span");
    }
    if (c.sd_llc) {
        if (c.sd_llc_size != c.sd_llc->span_weight || c.sd_llc_id != c.sd_llc->span.first())
            errs.push_back("sd_llc_size/sd_llc_id do not match the sd_llc span");
        if (!c.sd_llc_shared || c.sd_llc->shared != c.sd_llc_shared)
            errs.push_back("sd_llc has no sched_domain_shared");
    } else if (c.sd_llc_size != 1 || c.sd_llc_id != cpu) {
        errs.push_back("no sd_llc but sd_llc_size/sd_llc_id are not the CPU's own");
    }
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
    for (int cpu = 0; cpu < static_cast<int>(t.cpus.size()); ++cpu) {
        const cpu_sched_domains& c = t.cpu(cpu);
        if (c.domains.empty()) {
            out += fmt::format("CPU{} attaching NULL sched-domain.\n", cpu);
            continue;
        }
        out += fmt::format("CPU{} attaching sched-domain(s):\n", cpu);
        for (const auto& sdp : c.domains) {
            const sched_domain& sd = *sdp;
            const int level = sd.level;
            out += fmt::format("{:{}} domain-{}: span={} level={}\n", "", level, level,
                               sd.span.to_cpulist(), sd.name);
            out += fmt::format("{:{}} groups:", "", level + 1);
            for (std::size_t g = 0; g < sd.groups.size(); ++g) {
                const sched_group& sg = sd.groups[g];
                out += fmt::format(" {}:{{ span={}", sg.balance_cpu, sg.span.to_cpulist());
                if (sd.has(SD_OVERLAP) && !(sg.balance_mask == sg.span))
                    out += fmt::format(" mask={}", sg.balance_mask.to_cpulist());
                if (sg.capacity != 1024)
                    out += fmt::format(" cap={}", sg.capacity);
                out += " }";
                if (g + 1 < sd.groups.size())
                    out += ",";
            }
            out += "\n";
            if (verbose) {
                out +=
                    fmt::format("{:{}} flags: {}\n", "", level + 1, sd_flags_to_string(sd.flags));
                out += fmt::format(
                    "{:{}} min_interval={} max_interval={} balance_interval={} "
                    "busy_factor={} imbalance_pct={} cache_nice_tries={} "
                    "imb_numa_nr={}{}\n",
                    "", level + 1, sd.min_interval, sd.max_interval, sd.balance_interval,
                    sd.busy_factor, sd.imbalance_pct, sd.cache_nice_tries, sd.imb_numa_nr,
                    sd.numa_distance ? fmt::format(" distance={}", sd.numa_distance) : "");
            }
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
    // Units per container, counted once: threads per core, cores per cluster, ...
    std::map<int, std::set<int>> threads, cores, clusters, llcs;
    std::set<int> nodes;
    for (int cpu = 0; cpu < m.nr_cpus(); ++cpu) {
        const cpu_desc& d = m.cpus[cpu];
        threads[d.core].insert(cpu);
        cores[d.cluster].insert(d.core);
        clusters[d.llc].insert(d.cluster);
        llcs[d.package].insert(d.llc);
        nodes.insert(d.node);
    }
    double bytes = 0;
    for (const cpu_desc& d : m.cpus) {
        // MC's groups are the LLC's clusters (its cores where clusters are cores).
        const double mc_groups = static_cast<double>(clusters[d.llc].size());
        const double groups = static_cast<double>(threads[d.core].size()) +
                              static_cast<double>(cores[d.cluster].size()) + mc_groups +
                              static_cast<double>(llcs[d.package].size()) +
                              static_cast<double>(nodes.size());
        bytes += 5 * domain + groups * group;
    }
    return bytes;
}

} // namespace schedlab
