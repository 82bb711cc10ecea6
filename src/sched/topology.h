// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Scheduling domains and groups, as kernel/sched/topology.c builds them.
 *
 * The machine (machine/machine.h) says what CPUs share; build_sched_domains()
 * turns that into the per-CPU domain hierarchy, its groups, the sd_init()
 * balancing parameters and the per-CPU sd_llc shortcuts. The result is
 * immutable except for the runtime fields the balancer updates
 * (balance_interval, nr_balance_failed, last_balance, max_newidle_lb_cost,
 * last_decay_max_lb_cost, and the sched_domain_shared counters).
 *
 * Modelled on v6.6 (names of v6.10+: SD_SHARE_LLC). Not modelled: CPU
 * hotplug and domain rebuilds, cpusets / exclusive root domains, isolcpus,
 * relax_domain_level, SD_ASYM_PACKING (ITMT), energy-aware perf domains.
 */
#include "machine/cpumask.h"
#include "machine/machine.h"
#include "sim/time.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace schedlab {

/*
 * include/linux/sched/sd_flags.h, in the kernel's bit order (v6.x).
 * SD_SHARE_LLC was called SD_SHARE_PKG_RESOURCES before v6.10; same bit,
 * same meaning (the domain's CPUs share the last-level cache).
 */
enum : u32 {
    SD_BALANCE_NEWIDLE = 1u << 0,
    SD_BALANCE_EXEC = 1u << 1,
    SD_BALANCE_FORK = 1u << 2,
    SD_BALANCE_WAKE = 1u << 3,
    SD_WAKE_AFFINE = 1u << 4,
    SD_ASYM_CPUCAPACITY = 1u << 5,
    SD_ASYM_CPUCAPACITY_FULL = 1u << 6,
    SD_SHARE_CPUCAPACITY = 1u << 7,
    SD_CLUSTER = 1u << 8,
    SD_SHARE_LLC = 1u << 9,
    SD_SERIALIZE = 1u << 10,
    SD_ASYM_PACKING = 1u << 11,
    SD_PREFER_SIBLING = 1u << 12,
    SD_OVERLAP = 1u << 13,
    SD_NUMA = 1u << 14,
};
inline constexpr int SD_FLAG_CNT = 15; ///< __SD_FLAG_CNT

/// Kernel name of one SD_* bit ("SD_SHARE_LLC"), "" if not a flag.
const char* sd_flag_name(u32 flag);
/// "SD_BALANCE_NEWIDLE SD_BALANCE_EXEC ...": the set bits in bit order, as debugfs .../flags.
std::string sd_flags_to_string(u32 flags);

/// kernel: struct sched_domain_shared (one per LLC, shared by that LLC's CPUs)
struct sched_domain_shared {
    int nr_busy_cpus = 0; ///< initialised to the LLC's weight, as sd_init() does
    bool has_idle_cores = false;
    int nr_idle_scan = 0;
};

/*
 * kernel: struct sched_group + its sched_group_capacity. One object per group,
 * shared by every CPU whose domain lists it, as build_sched_groups() shares
 * the groups of a domain span between the CPUs of that span (get_group()).
 */
struct sched_group {
    cpumask span;         ///< sched_group_span()
    u32 capacity = 0;     ///< sgc->capacity: sum of the CPUs' capacities
    int group_weight = 0; ///< CPUs in span
    int balance_cpu = -1; ///< group_balance_cpu(): first CPU of balance_mask; also sgc->id
    cpumask balance_mask; ///< group_balance_mask(): == span except on some NUMA (overlap) groups
    int cores = 0;        ///< sg->cores: SMT cores in span
    u32 flags = 0;        ///< sg->flags: flags of the child domain the group was built from
    int id = -1;          ///< index in sched_topology::groups(), for state kept per group
};

/*
 * The groups of one domain in the order the domain visits them, its own group
 * first: the kernel's sd->groups entry into the sg->next cycle. CPUs of one
 * domain span share the cycle (a ring of groups) and enter it at their own
 * group; where a CPU's wrap-around walk does not meet the groups in the ring's
 * order, it has an order of its own.
 */
class sched_group_list {
public:
    sched_group_list() = default;
    /// The `n` groups at `base`, entered at `start`, or in `order` (indices) when given.
    sched_group_list(const sched_group* base, u32 n, u32 start, const u32* order = nullptr)
        : base_(base), n_(n), start_(start), order_(order)
    {
    }

    std::size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }
    const sched_group& operator[](std::size_t i) const
    {
        if (order_)
            return base_[order_[i]];
        const std::size_t k = start_ + i;
        return base_[k < n_ ? k : k - n_];
    }
    const sched_group& front() const { return (*this)[0]; }

    class iterator {
    public:
        using value_type = sched_group;
        using difference_type = std::ptrdiff_t;
        iterator(const sched_group_list* l, std::size_t i) : l_(l), i_(i) {}
        const sched_group& operator*() const { return (*l_)[i_]; }
        const sched_group* operator->() const { return &(*l_)[i_]; }
        iterator& operator++()
        {
            ++i_;
            return *this;
        }
        bool operator==(const iterator& o) const { return i_ == o.i_; }

    private:
        const sched_group_list* l_;
        std::size_t i_;
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, n_}; }

    const sched_group* base() const { return base_; }
    u32 start() const { return start_; }
    const u32* order() const { return order_; }

private:
    const sched_group* base_ = nullptr;
    u32 n_ = 0;
    u32 start_ = 0;
    const u32* order_ = nullptr;
};

/// enum cpu_idle_type (v6.6 order): the index of the per-idle-type load-balance counters.
enum cpu_idle_type : int { CPU_IDLE = 0, CPU_NOT_IDLE = 1, CPU_NEWLY_IDLE = 2, CPU_MAX_IDLE_TYPES = 3 };

/// The per-domain counters of /proc/schedstat version 15 (Documentation/scheduler/sched-stats.rst).
struct sd_schedstat {
    u64 lb_count[CPU_MAX_IDLE_TYPES] = {};
    u64 lb_balanced[CPU_MAX_IDLE_TYPES] = {};
    u64 lb_failed[CPU_MAX_IDLE_TYPES] = {};
    u64 lb_imbalance[CPU_MAX_IDLE_TYPES] = {};
    u64 lb_gained[CPU_MAX_IDLE_TYPES] = {};
    u64 lb_hot_gained[CPU_MAX_IDLE_TYPES] = {};
    u64 lb_nobusyq[CPU_MAX_IDLE_TYPES] = {};
    u64 lb_nobusyg[CPU_MAX_IDLE_TYPES] = {};
    u64 alb_count = 0, alb_failed = 0, alb_pushed = 0;
    u64 sbe_count = 0, sbe_balanced = 0, sbe_pushed = 0; ///< unused since 2.6: always 0
    u64 sbf_count = 0, sbf_balanced = 0, sbf_pushed = 0; ///< unused: always 0
    u64 ttwu_wake_remote = 0, ttwu_move_affine = 0, ttwu_move_balance = 0;
    /// Not in /proc/schedstat: find_busiest_group() calls per idle type (sched-scoreboard's view).
    u64 fbg_count[CPU_MAX_IDLE_TYPES] = {};
    /// Not in /proc/schedstat (model, lane nibirq): newidle_balance()'s loop ended after this
    /// domain's pass on a task (nr_running) or on a queued wakeup (ttwu_pending) found on the
    /// CPU, 6.6's break (not counted under the v6.10 break, newidle_break_on_swb).
    u64 newidle_stop_task = 0, newidle_stop_wakeup = 0;

    /// model: every counter added, for sums over CPUs (a level's, a node's); the kernel has
    /// none, its readers (show_schedstat()) print each domain's.
    sd_schedstat& operator+=(const sd_schedstat& o)
    {
        for (int i = 0; i < CPU_MAX_IDLE_TYPES; ++i) {
            lb_count[i] += o.lb_count[i];
            lb_balanced[i] += o.lb_balanced[i];
            lb_failed[i] += o.lb_failed[i];
            lb_imbalance[i] += o.lb_imbalance[i];
            lb_gained[i] += o.lb_gained[i];
            lb_hot_gained[i] += o.lb_hot_gained[i];
            lb_nobusyq[i] += o.lb_nobusyq[i];
            lb_nobusyg[i] += o.lb_nobusyg[i];
            fbg_count[i] += o.fbg_count[i];
        }
        alb_count += o.alb_count;
        alb_failed += o.alb_failed;
        alb_pushed += o.alb_pushed;
        sbe_count += o.sbe_count;
        sbe_balanced += o.sbe_balanced;
        sbe_pushed += o.sbe_pushed;
        sbf_count += o.sbf_count;
        sbf_balanced += o.sbf_balanced;
        sbf_pushed += o.sbf_pushed;
        ttwu_wake_remote += o.ttwu_wake_remote;
        ttwu_move_affine += o.ttwu_move_affine;
        ttwu_move_balance += o.ttwu_move_balance;
        newidle_stop_task += o.newidle_stop_task;
        newidle_stop_wakeup += o.newidle_stop_wakeup;
        return *this;
    }
};

/// kernel: struct sched_domain
struct sched_domain {
    sched_domain* parent = nullptr;
    sched_domain* child = nullptr;
    std::string name; ///< "SMT", "CLS", "MC", "DIE" or "PKG", "NODE", "NUMA"
    int level = 0;    ///< index after degenerate removal: domain-<level>
    cpumask span;
    int span_weight = 0;
    u32 flags = 0;
    sched_group_list groups; ///< groups[0] contains the owning CPU (kernel: sd->groups)
    u32 min_interval = 0, max_interval = 0, balance_interval = 0; ///< ms, as sd_init
    u32 busy_factor = 16, imbalance_pct = 117, cache_nice_tries = 0, imb_numa_nr = 0;
    u32 nr_balance_failed = 0;
    /*
     * model: per group, by position, what update_sd_lb_stats() reads of it when balancing
     * for lb_groups_cpu, read by lb_groups_reader (fair_balance.cc sd_lb_groups()): built on
     * first use, since the topology and the costs do not change, so the walk reads one short
     * array and not each group's struct and span.
     */
    struct lb_group {
        sim_dur scan_cost = 0; ///< reading the group's CPUs from lb_groups_reader
        int id = -1;           ///< sched_group::id
        u32 capacity = 0;      ///< sched_group::capacity
        int weight = 0;        ///< sched_group::group_weight
        u32 flags = 0;         ///< sched_group::flags
        bool local = false;    ///< the span holds lb_groups_cpu
    };
    std::vector<lb_group> lb_groups;
    int lb_groups_cpu = -1;
    /// the CPU reading the groups (smp_processor_id()): lb_groups_cpu, but the kicked CPU
    /// in a nohz idle balance
    int lb_groups_reader = -1;
    u64 last_balance = 0, max_newidle_lb_cost = 0, last_decay_max_lb_cost = 0; ///< ns
    /// NI_RANDOM (v6.19, 6.18.5+): newidle attempts and (weighted) successes, halved at
    /// 1024 attempts; newidle_ratio/1024 is the chance of the next attempt. sd_init: 50%.
    u32 newidle_call = 512, newidle_success = 256, newidle_ratio = 512;
    sched_domain_shared* shared = nullptr; ///< non-null on the sd_llc domain (kernel: sd->shared)
    int numa_distance = 0; ///< NUMA levels: the SLIT distance this level spans (else 0)
    u64 avg_scan_cost = 0; ///< SIS_PROP: EWMA of select_idle_cpu() scan time, ns (on sd_llc)
    sd_schedstat stats;    ///< CONFIG_SCHEDSTATS counters of this CPU's domain

    bool has(u32 f) const { return (flags & f) != 0; }
};

/// Tunables lifted out of sd_init() so they can be printed and swept.
struct topology_params {
    bool pkg_name = false; ///< name the package level "PKG" (6.7+) instead of "DIE"
    u32 imbalance_pct = 117, smt_imbalance_pct = 110, busy_factor = 16;
    bool numa_imb_6x = true; ///< imb_numa_nr as 6.x computes it (else 0 = the 5.15 25% rule)
};

struct kernel_config;
/// The topology a kernel profile builds: the package level's name and whether
/// build_sched_domains() sets imb_numa_nr (v5.18+) follow the profile's behaviour.
topology_params topology_params_of(const kernel_config& kc);

/// Per CPU, like rq->sd plus the per-cpu sd_llc shortcuts (update_top_cache_domain()).
struct cpu_sched_domains {
    std::vector<std::unique_ptr<sched_domain>> domains; ///< bottom-up; domains[i]->level == i
    sched_domain* sd() const { return domains.empty() ? nullptr : domains.front().get(); }
    sched_domain* sd_llc = nullptr;
    int sd_llc_size = 1;
    int sd_llc_id = 0; ///< first CPU of the LLC span (the CPU itself without an LLC domain)
    sched_domain_shared* sd_llc_shared = nullptr;
    /// v6.8+ sd_share_id (b95303e0aeaf): first CPU of the lowest SD_CLUSTER domain, else sd_llc_id
    int sd_share_id = 0;
    sched_domain* sd_numa = nullptr; ///< lowest NUMA domain
    sched_domain* sd_asym_cpucapacity = nullptr;
};

class sched_topology {
public:
    std::vector<cpu_sched_domains> cpus;                          ///< indexed by CPU
    std::vector<std::unique_ptr<sched_domain_shared>> llc_shared; ///< one per LLC
    /// The groups, in rings shared by the domains that list them (sched_group_list).
    std::vector<std::unique_ptr<std::vector<sched_group>>> group_rings;
    /// The CPUs' own orders of a ring, where a walk does not follow the ring's.
    std::vector<std::unique_ptr<std::vector<u32>>> group_orders;

    /// Every group some domain lists, by sched_group::id.
    const std::vector<const sched_group*>& groups() const { return groups_; }
    void set_groups(std::vector<const sched_group*> g) { groups_ = std::move(g); }

    const cpu_sched_domains& cpu(int c) const { return cpus[c]; }
    cpu_sched_domains& cpu(int c) { return cpus[c]; }
    /// kernel: cpus_share_cache()
    bool cpus_share_cache(int a, int b) const { return cpus[a].sd_llc_id == cpus[b].sd_llc_id; }
    /// kernel: cpus_share_resources(), v6.8+ (b95303e0aeaf): the same cluster, or the same LLC
    /// on a machine without clusters
    bool cpus_share_resources(int a, int b) const
    {
        return a == b || cpus[a].sd_share_id == cpus[b].sd_share_id;
    }
    /// kernel: the sched_cluster_active static key (v6.8+): some CPU kept an SD_CLUSTER domain
    bool sched_cluster_active = false;

private:
    std::vector<const sched_group*> groups_;
};

/// kernel: build_sched_domains() for all CPUs; SIM_BUG_ON if sched_domain_check() finds anything.
/// A machine whose domains would not fit (sched_domains_bytes_estimate() above half of this
/// machine's memory) is a config_error naming the estimate and the limit, before building.
sched_topology build_sched_domains(const machine& m, const topology_params& tp);

/*
 * An upper estimate of the memory build_sched_domains() takes for `m`, from the data
 * structures above: per CPU and level a sched_domain and its span; per level one shared
 * sched_group (with two cpumasks) per child unit of the machine (SMT: its threads; CLS: its
 * cores; MC: its clusters; DIE/PKG: its LLCs), and for the NUMA levels a ring of node groups
 * per node. It grows as CPUs^2 (every span has a bit per CPU); keep it in step with the
 * structures.
 */
double sched_domains_bytes_estimate(const machine& m);

/// The invariants sched_domain_debug_one() reports as "ERROR: ..."; empty means sound.
std::vector<std::string> sched_domain_check(const sched_topology& t, int cpu);

/// The dmesg "CPU0 attaching sched-domain(s):" text for every CPU; `verbose` adds each
/// domain's flags and sd_init parameters (like /sys/kernel/debug/sched/domains/cpuN/domainM/).
std::string sched_domain_debug(const sched_topology& t, const machine& m, bool verbose);
/// The same for one CPU (a 2048-CPU LLC prints 2048 groups per CPU: write it CPU by CPU).
std::string sched_domain_debug_cpu(const sched_topology& t, int cpu, bool verbose);

} // namespace schedlab
