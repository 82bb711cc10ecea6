// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * `kernel`: one simulated kernel instance - the per-CPU runqueues, the tasks,
 * the sched domains, the features and tunables of one kernel profile - bound
 * to one simulation engine. Many can exist at once (one per run); nothing is
 * global.
 *
 * The kernel's functions keep their names and live in the files the kernel
 * keeps them in: core.cc (try_to_wake_up, __schedule, sched_tick,
 * wake_up_new_task, do_exit), fair.cc (the fair class shell), fair_eevdf.cc
 * and fair_cfs.cc (the two policies), fair_select.cc (select_task_rq_fair),
 * debug.cc (print_rq and the state dump of a failed check).
 *
 * Only the fair class is modelled, so the sched_class hook table is flattened
 * into direct calls of the *_fair hooks; the hook names and call sites are the
 * kernel's so RT/DL/sched_ext classes can be slotted in later.
 */
#include "machine/machine.h"
#include "sched/features.h"
#include "sched/params.h"
#include "sched/profiles.h"
#include "sched/sched.h"
#include "sched/topology.h"
#include "sim/simulation.h"
#include "trace/tracepoints.h"

#include <memory>
#include <string>
#include <vector>

namespace schedlab {

/// How a new task is created by kernel::spawn / kernel::fork.
struct task_opts {
    std::string comm = "task";
    int nice = 0;
    int policy = SCHED_NORMAL;
    cpumask allowed;      ///< empty: inherit (fork) or all CPUs (spawn)
    int cpu = -1;         ///< spawn only: the CPU the creating context runs on (default 0)
    bool thread = false;  ///< share the parent's tgid (CLONE_THREAD)
};

/// How often the always-on rq/cfs_rq invariant checks run.
enum class check_level {
    sampled, ///< release default: every `check_interval` schedule() calls, and at the end
    every,   ///< after every __schedule() (the default of debug builds; tests)
};

class kernel final : private event_handler {
public:
    kernel(simulation& sim, const machine& m, kernel_config kc, cost_params costs = {});
    ~kernel();
    kernel(const kernel&) = delete;
    kernel& operator=(const kernel&) = delete;

    /* ---- the surface the workload layer uses (the "syscalls") ---- */

    /// Creates a task as if forked by init and wakes it (wake_up_new_task()).
    task_struct& spawn(std::unique_ptr<task_behaviour> b, const task_opts& o);
    /// fork()/clone() from the current task `parent`, from inside its step().
    task_struct& fork(task_struct& parent, std::unique_ptr<task_behaviour> b, const task_opts& o);
    /// try_to_wake_up(): returns false if p was not in one of `state`'s sleep states.
    bool try_to_wake_up(task_struct& p, unsigned state, int wake_flags);
    bool wake_up_process(task_struct& p) { return try_to_wake_up(p, TASK_NORMAL, 0); }
    /// Arms p's hrtimer to wake it `ns` from now (schedule_hrtimeout()); p then returns block.
    void schedule_timeout(task_struct& p, sim_dur ns);
    /// A syscall cost with the task's jitter applied (costs().jitter_pct).
    sim_dur charge(task_struct& p, sim_dur base);

    sim_time now() const { return sim_.now(); }
    int smp_processor_id() const { return this_cpu_; }
    task_struct* current() { return cpu_rq(this_cpu_).curr; }

    /* ---- running ---- */

    /// Runs the simulation until every spawned task has exited or `limit`.
    void run(sim_time limit);
    bool all_exited() const { return nr_alive_ == 0; }
    void add_sink(trace_sink* s) { sinks_.push_back(s); }
    void set_check_level(check_level l, u64 interval = 1024);
    /// Runs every invariant check now; panics (with the state dump) on failure.
    void check_all();

    /* ---- state, for metrics, tests and the debug dump ---- */

    rq& cpu_rq(int cpu) { return *rqs_[cpu]; }
    const rq& cpu_rq(int cpu) const { return *rqs_[cpu]; }
    int nr_cpu_ids() const { return m_.nr_cpus(); }
    const machine& mach() const { return m_; }
    const sched_topology& topology() const { return topo_; }
    const kernel_config& config() const { return kc_; }
    const sched_features& feats() const { return kc_.features; }
    const sched_tunables& tunables() const { return tun_; }
    const cost_params& costs() const { return costs_; }
    simulation& sim() { return sim_; }
    const std::vector<std::unique_ptr<task_struct>>& tasks() const { return tasks_; }
    task_struct* find_task_by_pid(int pid);
    /// Running FNV-1a over every context switch (time, cpu, prev, next): equal
    /// digests mean identical schedules.
    u64 schedule_digest() const { return digest_; }
    u64 nr_migrations() const { return nr_migrations_; }

    /// print_rq()-style dump of every CPU (debug.cc), printed by failed checks.
    std::string dump_state() const;
    std::string print_rq(int cpu) const;

    /* ---- core.c ---- */
    void __schedule(rq& rq, bool preempt);
    void resched_curr(rq& rq);
    void activate_task(rq& rq, task_struct& p, int flags);
    void deactivate_task(rq& rq, task_struct& p, int flags);
    void set_task_cpu(task_struct& p, int new_cpu);
    int select_task_rq(task_struct& p, int cpu, int wake_flags);
    void wake_up_new_task(task_struct& p);
    void sched_tick(rq& rq);
    void update_rq_clock(rq& rq);
    bool idle_cpu(int cpu) const;

    /* ---- fair.c: the class hooks ---- */
    void enqueue_task_fair(rq& rq, task_struct& p, int flags);
    void dequeue_task_fair(rq& rq, task_struct& p, int flags);
    task_struct* pick_next_task_fair(rq& rq, task_struct* prev);
    void put_prev_task_fair(rq& rq, task_struct& prev);
    void set_next_task_fair(rq& rq, task_struct& p);
    void check_preempt_wakeup_fair(rq& rq, task_struct& p, int wake_flags);
    int select_task_rq_fair(task_struct& p, int prev_cpu, int wake_flags);
    void migrate_task_rq_fair(task_struct& p, int new_cpu);
    void task_tick_fair(rq& rq, task_struct& curr);
    void task_fork_fair(task_struct& p);
    void yield_task_fair(rq& rq);
    int sched_balance_newidle(rq& rq);

    /* ---- fair.c: entity level ---- */
    void update_curr(cfs_rq& cfs);
    void enqueue_entity(cfs_rq& cfs, sched_entity& se, int flags);
    void dequeue_entity(cfs_rq& cfs, sched_entity& se, int flags);
    void set_next_entity(cfs_rq& cfs, sched_entity& se);
    void put_prev_entity(cfs_rq& cfs, sched_entity& prev);
    sched_entity* pick_next_entity(cfs_rq& cfs, sched_entity* curr);
    void __enqueue_entity(cfs_rq& cfs, sched_entity& se);
    void __dequeue_entity(cfs_rq& cfs, sched_entity& se);
    void update_min_vruntime(cfs_rq& cfs);
    void clear_buddies(cfs_rq& cfs, sched_entity& se);
    sched_entity* __pick_first_entity(const cfs_rq& cfs) const;
    static u64 calc_delta_fair(u64 delta, const sched_entity& se);

    /* ---- fair_eevdf.cc (6.6) ---- */
    u64 avg_vruntime(const cfs_rq& cfs) const;
    bool entity_eligible(const cfs_rq& cfs, const sched_entity& se) const;
    void avg_vruntime_add(cfs_rq& cfs, const sched_entity& se);
    void avg_vruntime_sub(cfs_rq& cfs, const sched_entity& se);
    void update_entity_lag(cfs_rq& cfs, sched_entity& se);
    void place_entity_eevdf(cfs_rq& cfs, sched_entity& se, int flags);
    void update_deadline(cfs_rq& cfs, sched_entity& se);
    sched_entity* pick_eevdf(cfs_rq& cfs);
    void check_preempt_wakeup_eevdf(rq& rq, task_struct& p, int wake_flags);

    /* ---- fair_cfs.cc (<= 6.5) ---- */
    u64 sched_slice(const cfs_rq& cfs, const sched_entity& se) const;
    u64 sched_vslice(const cfs_rq& cfs, const sched_entity& se) const;
    void place_entity_cfs(cfs_rq& cfs, sched_entity& se, bool initial);
    int wakeup_preempt_entity(const sched_entity& curr, const sched_entity& se) const;
    u64 wakeup_gran(const sched_entity& se) const;
    void check_preempt_tick(cfs_rq& cfs, sched_entity& curr);
    sched_entity* pick_next_entity_cfs(cfs_rq& cfs, sched_entity* curr);
    void check_preempt_wakeup_cfs(rq& rq, task_struct& p, int wake_flags);

    /* ---- fair_select.cc ---- */
    int select_idle_sibling(task_struct& p, int prev, int target);
    int find_idlest_cpu(task_struct& p, int cpu);

    bool is_eevdf() const { return kc_.params.policy == fair_policy::eevdf; }
    task_struct& task_of(sched_entity& se);

private:
    enum ev_kind : u32 { EV_WORK = 1, EV_RESCHED, EV_TICK, EV_TIMER };
    void fire(u64 arg) override;
    static u64 ev_arg(ev_kind k, u32 v) { return (static_cast<u64>(k) << 32) | v; }

    task_struct& new_task(std::unique_ptr<task_behaviour> b, const task_opts& o, int parent_cpu);
    void cpu_work_done(rq& rq);
    void start_burst(rq& rq, sim_dur overhead);
    void stop_burst(rq& rq);
    void do_exit(rq& rq, task_struct& p);
    void start_tick(rq& rq);
    void sched_info_depart(rq& rq, task_struct& p);
    void sched_info_arrive(rq& rq, task_struct& p);
    void maybe_check(rq& rq);
    void check_rq(const rq& rq, std::string& errs) const;

    simulation& sim_;
    const machine& m_;
    kernel_config kc_;
    sched_tunables tun_;
    cost_params costs_;
    sched_topology topo_;
    std::vector<std::unique_ptr<rq>> rqs_;
    std::vector<std::unique_ptr<task_struct>> idle_tasks_;
    std::vector<std::unique_ptr<task_struct>> tasks_; ///< tasks_[i]->pid == i + 1
    std::vector<trace_sink*> sinks_;
    int this_cpu_ = 0;
    u64 nr_alive_ = 0;
    u64 digest_ = 0xcbf29ce484222325ULL;
    u64 nr_migrations_ = 0;
    check_level check_level_ = check_level::sampled;
    u64 check_interval_ = 1024;
    u64 check_countdown_ = 1024;
};

} // namespace schedlab
