// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Load balancing, the fair class's part of kernel/sched/fair.c that moves
 * tasks between CPUs (fair_balance.cc): sched_balance_rq() and its
 * find_busiest_group() / find_busiest_queue() / detach_tasks(), periodic
 * balancing per domain, newly-idle balancing, NOHZ idle balancing and active
 * balancing. Free functions of the kernel's names taking the kernel instance
 * first, as the other classes' (rt.h, deadline.h; docs/architecture.md "Where
 * a new class goes"); the core reaches them through the fair class's hooks
 * (pick_next_task_fair() -> sched_balance_newidle()) and the tick
 * (trigger_load_balance()).
 *
 * Their state lives where the kernel keeps it: per domain in sched_domain
 * (balance_interval, nr_balance_failed, max_newidle_lb_cost, the schedstat
 * counters), per CPU in struct rq (next_balance, active_balance, push_cpu,
 * idle_balance), the overload flag in root_domain; what fair.c keeps static
 * (`nohz`) and what only the model keeps (the group sums' cache, the cost of
 * the balancing calls) in struct lb_state, which the kernel owns (kernel::lb()).
 */
#include "sched/idle_gap.h"
#include "sched/nohz.h"
#include "sched/sched.h"
#include "sched/topology.h"
#include "sim/event_queue.h"

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace schedlab {

class kernel;

/// kernel: fair.c enum group_type, in pulling priority order (6.6).
enum group_type : int {
    group_has_spare = 0,
    group_fully_busy,
    group_smt_balance, ///< 6.6 (fee1759e4f04); kernel_behaviour::smt_balance
    group_misfit_task,
    group_asym_packing,
    group_imbalanced,
    group_overloaded,
};

/// kernel: fair.c enum migration_type.
enum migration_type : int { migrate_load = 0, migrate_util, migrate_task, migrate_misfit };

/// kernel: fair.c struct sg_lb_stats.
struct sg_lb_stats {
    unsigned long avg_load = 0;
    unsigned long group_load = 0;
    unsigned long group_capacity = 0;
    unsigned long group_util = 0;
    unsigned long group_runnable = 0;
    unsigned int sum_nr_running = 0;
    unsigned int sum_h_nr_running = 0;
    unsigned int idle_cpus = 0;
    unsigned int group_weight = 0;
    group_type group_type_ = group_has_spare; ///< kernel: sgs->group_type
    unsigned long group_misfit_task_load = 0;
    bool group_smt_balance =
        false; ///< 6.6: an SMT core with more than one task, seen by an idle CPU
};

/// kernel: fair.c struct sd_lb_stats.
struct sd_lb_stats {
    const sched_group* busiest = nullptr;
    const sched_group* local = nullptr;
    unsigned long total_load = 0;
    unsigned long total_capacity = 0;
    unsigned long avg_load = 0;
    bool prefer_sibling = false;
    sg_lb_stats busiest_stat;
    sg_lb_stats local_stat;
    /* model: env.cpus holds the whole domain span; the group being summed, by position */
    bool all_cpus = false;
    std::size_t group_index = 0;
};

/* lb_env flags (kernel/sched/fair.c LBF_*) */
/* LBF_SOME_PINNED (0x08) is left out: can_migrate_task() sets it for the LBF_DST_PINNED */
/* retry and the parent's sg_imbalanced() flag, neither modelled (fair_balance.cc). */
enum : unsigned {
    LBF_ALL_PINNED = 0x01,
    LBF_NEED_BREAK = 0x02,
    LBF_DST_PINNED = 0x04,
    LBF_ACTIVE_LB = 0x10
};

/// kernel: fair.c struct lb_env: one load_balance() attempt.
struct lb_env {
    sched_domain* sd = nullptr;
    int src_cpu = -1;
    rq* src_rq = nullptr;
    int dst_cpu = -1;
    rq* dst_rq = nullptr;
    cpu_idle_type idle = CPU_NOT_IDLE;
    long imbalance = 0;
    /// kernel: env->cpus, the CPUs still considered: this CPU's load_balance_mask
    /// (lb_state::load_balance_mask()), filled from the domain's span at each attempt.
    cpumask* cpus = nullptr;
    unsigned flags = 0;
    unsigned loop = 0, loop_break = 0, loop_max = 0;
    migration_type migration_type_ = migrate_load;
    std::vector<task_struct*> tasks; ///< detached, to attach
    u64 cpus_scanned = 0;            ///< rq statistics read by update_sg_lb_stats
    sim_dur scan_cost = 0;           ///< their cost: fixed part + cache lines by distance
    /// should_we_balance()'s idle_cpu() reads of other CPUs' rq lines: a line by distance
    /// each (what an attempt it turns away costs, sched_balance_rq())
    sim_dur swb_cost = 0;
};

/*
 * Model only: update_sg_lb_stats()'s sums over one sched group's CPUs, kept up to date
 * by the changes of its CPUs (lb_state::lb_stats_changed(), lb_state::flush()).
 */
struct group_lb_sums {
    bool valid = false;
    unsigned int nr_overloaded = 0; ///< CPUs with nr_running > 1 (SG_OVERLOAD if any)
    unsigned long load = 0, util = 0, runnable = 0;
    unsigned int nr_running = 0, h_nr_running = 0, idle_cpus = 0;
    unsigned int pending = 0; ///< idle CPUs with ttwu_pending (idle_cpu() depends on now)
    bool overload() const { return nr_overloaded > 0; }
    bool operator==(const group_lb_sums&) const = default;
};

/// Model only: one CPU's part of its groups' group_lb_sums (valid: 1, the others' sums).
group_lb_sums cpu_lb_contrib(const kernel& k, int cpu);

/// What sched_balance_newidle()'s gate decided (newidle_ops::gate).
enum class newidle_gate {
    open,   ///< balance the domains
    closed, ///< no balancing this time
    pulled, ///< a patch set pulled a task at the gate
    abort,  ///< a patch set's pull found work arriving: return at once, nothing updated
};

/*
 * The newly-idle balance's cost accounting where 5.15 and 5.16+ differ, one table per
 * version as fair_policy_ops is one per fair policy: sched_balance_newidle() and
 * sched_balance_domains() call these and never ask the version. The kernel's
 * constructor chooses the profile's (lb_state::init(), from
 * kernel_behaviour::newidle_5_15); fair_newidle.cc defines both. Vincent Guittot's
 * series of v5.16 (Message-ID 20211019123537.17146-1-vincent.guittot@linaro.org) made
 * every difference: 9e9af819db5d (update_blocked_averages() counted in the first
 * domain's cost), 9d783c8dd112 (the first domain's max_newidle_lb_cost gates the
 * pass, before update_blocked_averages()), e60b56e46b38 (update_newidle_cost(): wait a second before decaying),
 * c5b0a7eefc70 (no sysctl_sched_migration_cost gate), 8ea9183db4ad (next_balance
 * updated once, before balancing a domain).
 */
struct newidle_ops {
    const char* name; ///< "5.15", "5.16"
    /// The gate before any domain is balanced; `gate_sd` is the domain whose cost gates
    /// the pass (the base domain, or a patch set's: newidle_gate_domain).
    newidle_gate (*gate)(kernel& k, rq& this_rq, const sched_domain* gate_sd);
    /// update_blocked_averages() (its rq lock's wait, line and hold: lane faithfix) counts
    /// into the first domain's cost; otherwise the cost is measured from after it.
    bool blocked_averages_in_cost;
    /// update_next_balance() for a domain before its cost check; otherwise after
    /// balancing it (or at the cost check that stops the pass).
    bool next_balance_before_balancing;
    /// A balance of sd took `cost` ns: sd's max_newidle_lb_cost follows.
    void (*record_cost)(kernel& k, sched_domain& sd, u64 cost);
    /// sched_balance_domains(): sd's max_newidle_lb_cost decays when due; need_decay
    /// tells the caller to recompute the rq's max_idle_balance_cost.
    void (*decay)(kernel& k, sched_domain& sd, bool& need_decay);
};
extern const newidle_ops newidle_5_15_ops;
extern const newidle_ops newidle_5_16_ops;

/*
 * The balancing code's kernel-wide state, which the kernel owns through one member
 * (kernel::lb()); the handler of its events: SCHED_SOFTIRQ, the ILB kick's IPI and
 * the stopper of an active balance.
 */
class lb_state final : public event_handler {
public:
    lb_state(kernel& k, int nr_cpus) : nohz(nr_cpus), k_(k) {}
    /// Sizes the group sums' cache for the kernel's sched domains; chooses the profile's
    /// newly-idle balance (newidle_ops).
    void init(const sched_topology& topo, int nr_cpus);
    void fire(u64 arg) override;

    static constexpr u64 EV_SOFTIRQ = 1ULL << 32;   ///< sched_balance_softirq() on a CPU
    static constexpr u64 EV_ILB = 2ULL << 32;       ///< nohz_idle_balance() on the kicked CPU
    static constexpr u64 EV_ACTIVE_LB = 3ULL << 32; ///< active_load_balance_cpu_stop() on a CPU
    /// the periodic balance's next level on a CPU, once the last one's work is done
    static constexpr u64 EV_SOFTIRQ_LEVEL = 4ULL << 32;
    /// nohz_idle_balance()'s next step on the kicked CPU, once the last one's work is done
    static constexpr u64 EV_NOHZ_STEP = 5ULL << 32;

    /*
     * kernel: rebalance_domains()'s locals (sched_balance_domains() from 6.10), kept
     * between the levels of one SCHED_SOFTIRQ run: the model runs each level's
     * load_balance() at the instant the previous level's work is done
     * (sched_balance_softirq_level()), so the loop's state waits here meanwhile.
     * model: `active` while a run is under way on the CPU, `raised` when the tick raised
     * SCHED_SOFTIRQ again meanwhile (the kernel's pending bit: run once more after).
     */
    struct balance_walk {
        std::size_t level = 0; ///< the next domain, counted from the CPU's lowest
        int continue_balancing = 1;
        cpu_idle_type idle = CPU_NOT_IDLE;
        bool busy = false;
        u64 next_balance = 0;
        bool update_next_balance = false;
        bool need_decay = false;
        u64 max_cost = 0;
        bool active = false;
        bool raised = false;
        /// this run's current level took `balancing` (serialize_lock) and balanced: the
        /// softirq holds the lock until the level's work is done
        bool holds_balancing = false;
    };
    balance_walk& softirq_walk(int cpu) { return walks_[static_cast<std::size_t>(cpu)]; }

    /*
     * kernel: _nohz_idle_balance()'s locals (fair.c, 6.5), kept between the steps of one
     * walk of nohz.idle_cpus_mask by the kicked CPU: the model runs each balanced CPU's
     * rebalance_domains() one level at a time, each level when the kicked CPU has done the
     * previous one's work (nohz_idle_balance_step()), so the loop's state waits here.
     * model: `kicked` when another kick's IPI reached the CPU during a run of SCHED_SOFTIRQ
     * (this walk or its own periodic one): it walks again after that run.
     */
    struct nohz_walk {
        bool active = false;
        bool kicked = false;
        /// for_each_cpu_wrap(balance_cpu, nohz.idle_cpus_mask, this_cpu + 1), read as it
        /// goes: `start` is this_cpu + 1, `pos` the next CPU to look from, `wrapped` once
        /// it passed the last CPU and goes on from 0 up to `start`
        int start = 0;
        int pos = 0;
        bool wrapped = false;
        /// the CPU whose rebalance_domains() is under way (`domains` its locals), or -1
        int balance_cpu = -1;
        balance_walk domains;
        u64 next_balance = 0;
        bool update_next_balance = false;
        /// when the walk's next step is due (its EV_NOHZ_STEP): the invariant check's
        sim_time next_step = 0;
        /* the walk's figures, for the decision log (not kernel state) */
        sim_time started = 0;
        int visited = 0;  ///< idle CPUs of the mask reached
        int balanced = 0; ///< of those, the ones whose rebalance_domains() ran
        u64 work = 0;     ///< the balancing work charged to the kicked CPU, ns
        /// the rq locks (update_rq_clock()) and blocked-average updates (update_nohz_stats())
        /// charged to the kicked CPU, ns
        u64 upkeep = 0;
    };
    nohz_walk& ilb_walk(int cpu) { return ilb_walks_[static_cast<std::size_t>(cpu)]; }
    /// The invariant check (kernel::check_all()): a walk under way on `cpu` has its next
    /// step due now or later, and a walk not under way balances no CPU; appends errors.
    void check_walk(int cpu, std::string& errs);

    /*
     * kernel: fair.c `static DEFINE_SPINLOCK(balancing)` (read in 5.15.0, 6.1.0, 6.5.0 and
     * 6.6.87; 6.12.19 and 6.18.2 have the atomic_t `sched_balance_running` of 214c1b7f1395,
     * Message-ID 20240301110951.3707367-1-mingo@kernel.org, with a cmpxchg as the trylock), which
     * rebalance_domains() takes with a trylock at every SD_SERIALIZE (NUMA) level before
     * its interval check and drops after the level's load_balance(). One per kernel.
     * model: held from a level's balance until that level's work is done (the CPU's owed
     * work after its charge, cpu_charges::owed_until(): the kicked CPU's for a level that
     * nohz_idle_balance() balances on another CPU's behalf); a level that is not due takes
     * and drops it at one instant. The figures are the model's own (the kernel has no schedstat for
     * this): SD_SERIALIZE levels balanced, and those due but skipped because the lock was
     * held.
     */
    struct serialize_lock {
        sim_time until = 0; ///< held while now < until
        u64 balanced = 0;   ///< due SD_SERIALIZE levels balanced (the lock taken)
        u64 skipped = 0;    ///< due SD_SERIALIZE levels skipped: the trylock failed
        bool held(sim_time now) const { return now < until; }
    };
    serialize_lock balancing;

    /// kernel: fair.c `static struct { ... } nohz`: NOHZ idle balancing (nohz.h).
    nohz_state nohz;
    /// model: counting only, read by no decision (idle_gap.h; --schedstat prints it).
    idle_gap_stats gap;
    /// LLC index of each CPU in gap (its sd_llc_shared's in sched_topology::llc_shared), -1 none.
    int llc_index(int cpu) const { return gap.llc_of[static_cast<std::size_t>(cpu)]; }
    /// model: the cost of the sched_balance_rq() calls since last reset.
    sim_dur last_lb_cost = 0;
    /*
     * kernel: fair.c's per-CPU working masks, allocated once by init_sched_fair_class():
     * load_balance_mask (sched_balance_rq()'s env->cpus), select_rq_mask (select_idle_cpu()'s
     * cpus; select_idle_mask in 5.15) and should_we_balance_tmpmask (should_we_balance()'s
     * swb_cpus, 6.6), filled at each use: no call allocates a mask. Model: select_idle_cpu()
     * uses CPU 0's for every CPU (no two scans overlap; see fair_select.cc). Sized by init().
     */
    cpumask& load_balance_mask(int cpu) { return masks_[static_cast<std::size_t>(cpu)].load_balance; }
    cpumask& select_rq_mask(int cpu) { return masks_[static_cast<std::size_t>(cpu)].select_rq; }
    cpumask& should_we_balance_tmpmask(int cpu)
    {
        return masks_[static_cast<std::size_t>(cpu)].should_we_balance_tmp;
    }
    /// The newly-idle balance's version, as the profile chose (init()).
    const newidle_ops& newidle() const { return *newidle_; }
    /// model: update_sg_lb_stats()'s sums per sched group (by sched_group::id).
    std::vector<group_lb_sums> group_sums;
    /// model: the ids of the groups spanning `cpu`.
    std::span<const int> cpu_groups(int cpu) const
    {
        const auto c = static_cast<std::size_t>(cpu);
        return {cpu_group_ids_.data() + cpu_group_first_[c],
                cpu_group_first_[c + 1] - cpu_group_first_[c]};
    }

    /// model: rq load, util, runnable or util_est, nr_running, curr's idleness or
    /// ttwu_pending of `cpu` changed: its part of its groups' sums is stale until flush().
    void lb_stats_changed(int cpu)
    {
        const auto c = static_cast<std::size_t>(cpu);
        if (c < cpu_dirty_.size() && !cpu_dirty_[c]) {
            cpu_dirty_[c] = true;
            dirty_cpus_.push_back(cpu);
        }
    }
    /// Brings every group's sums up to date: each changed CPU's part is replaced in the
    /// groups spanning it, so the cost follows the changes, not the groups' sizes.
    void flush();
    /// The CPUs whose part, as of the last flush(), is an idle CPU with a queued wakeup
    /// (group_lb_sums::pending), in no particular order.
    const std::vector<int>& pending_cpus() const { return pending_cpus_; }
    /// The invariant check (kernel::check_all(), always on): after a flush(), the kept
    /// sums of the groups spanning `cpu` equal the sums read afresh; appends errors. One
    /// CPU's groups per call, so a sampled check costs a few groups' reads.
    void check_sums(int cpu, std::string& errs);

private:
    kernel& k_;
    const newidle_ops* newidle_ = &newidle_5_16_ops;
    struct cpu_masks {
        cpumask load_balance, select_rq, should_we_balance_tmp;
    };
    std::vector<cpu_masks> masks_;        ///< per CPU: the working masks above
    std::vector<balance_walk> walks_;     ///< per CPU: its SCHED_SOFTIRQ run under way
    std::vector<nohz_walk> ilb_walks_;    ///< per CPU: its nohz idle balance walk under way
    std::vector<group_lb_sums> cpu_part_; ///< per CPU: its part of its groups' sums
    std::vector<char> cpu_dirty_;         ///< per CPU: changed since the last flush()
    std::vector<int> dirty_cpus_;         ///< the changed CPUs, in the order they changed
    std::vector<int> pending_cpus_;       ///< see pending_cpus()
    /// cpu_groups(): every CPU's group ids in one array, CPU after CPU (CPU c's from
    /// cpu_group_first_[c] up to cpu_group_first_[c + 1]), so a flush() reads them in a line
    /// or two rather than in a block of its own per CPU.
    std::vector<int> cpu_group_ids_;
    std::vector<std::size_t> cpu_group_first_;
};

/* ---- fair_balance.cc ---- */
group_type group_classify(unsigned imbalance_pct, const sched_group& group, const sg_lb_stats& sgs);
long adjust_numa_imbalance(const kernel& k, long imbalance, long dst_running, long imb_numa_nr);
unsigned long get_sd_balance_interval(const kernel& k, const sched_domain& sd, bool cpu_busy);
bool update_newidle_cost(kernel& k, sched_domain& sd, u64 cost);
bool should_we_balance(kernel& k, lb_env& env);
void update_sg_lb_stats(kernel& k, lb_env& env, sd_lb_stats& sds, const sched_group& group,
                        const sched_domain::lb_group& info, sg_lb_stats& sgs, bool& sg_overload);
void sum_group_lb_stats(const kernel& k, const sched_group& group, group_lb_sums& sums);
const std::vector<sched_domain::lb_group>& sd_lb_groups(kernel& k, sched_domain& sd, int dst_cpu,
                                                        int reader);
void update_sg_lb_stats_scan(kernel& k, lb_env& env, const sched_group& group, sg_lb_stats& sgs,
                             bool& sg_overload);
bool update_sd_pick_busiest(kernel& k, lb_env& env, sd_lb_stats& sds, const sched_group& sg,
                            const sg_lb_stats& sgs);
void update_idle_cpu_scan(kernel& k, lb_env& env, unsigned long sum_util);
/// model: counting only (idle_gap.h): r's nr_running may have changed; at a CPU's switch to
/// no task, its avg_idle against the newly-idle gates' sum up to its LLC's domain.
void idle_gap_note(kernel& k, const rq& r);
void update_sd_lb_stats(kernel& k, lb_env& env, sd_lb_stats& sds);
long sibling_imbalance(const kernel& k, const lb_env& env, const sd_lb_stats& sds,
                       const sg_lb_stats& busiest, const sg_lb_stats& local);
void calculate_imbalance(kernel& k, lb_env& env, sd_lb_stats& sds);
const sched_group* find_busiest_group(kernel& k, lb_env& env);
rq* find_busiest_queue(kernel& k, lb_env& env, const sched_group& group);
int task_hot(kernel& k, task_struct& p, lb_env& env);
int can_migrate_task(kernel& k, task_struct& p, lb_env& env);
int detach_tasks(kernel& k, lb_env& env);
void attach_tasks(kernel& k, lb_env& env);
bool need_active_balance(lb_env& env);
int sched_balance_rq(kernel& k, int this_cpu, rq& this_rq, sched_domain& sd, cpu_idle_type idle,
                     int& continue_balancing);
void active_load_balance_cpu_stop(kernel& k, rq& busiest);
int sched_balance_newidle(kernel& k, rq& this_rq);
/// The newly-idle domain loop's next step, when this CPU gets there (rq::newidle).
bool sched_balance_newidle_resume(kernel& k, rq& this_rq);
void trigger_load_balance(kernel& k, rq& r);
void sched_balance_softirq(kernel& k, rq& r);
void sched_balance_softirq_level(kernel& k, rq& r);
void sched_balance_domains_begin(kernel& k, rq& r, cpu_idle_type idle, lb_state::balance_walk& w);
bool sched_balance_domains_step(kernel& k, rq& r, lb_state::balance_walk& w);
void sched_balance_domains_end(kernel& k, rq& r, lb_state::balance_walk& w);
void nohz_balance_enter_idle(kernel& k, rq& r);
void nohz_balance_exit_idle(kernel& k, rq& r);
void nohz_balancer_kick(kernel& k, rq& r);
void kick_ilb(kernel& k);
void nohz_idle_balance(kernel& k, rq& ilb_rq);
void nohz_idle_balance_step(kernel& k, rq& ilb_rq);

/* ---- fair_ni_random.cc: NI_RANDOM, a patch set (patchset.h) ---- */
void update_newidle_stats(sched_domain& sd, u32 success);

} // namespace schedlab
