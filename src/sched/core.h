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
 * fair_balance.cc (load balancing, free functions: fair_balance.h), debug.cc
 * (print_rq and the state dump of a failed check).
 *
 * The core calls the scheduling classes through p->sched_class (struct
 * sched_class, sched.h) at the kernel's own call sites; the classes are the
 * deadline class (deadline.cc), the rt class (rt.cc), the fair class
 * (fair*.cc), the ext class (ext.cc) and the idle class (idle.cc), in the
 * list sched_classes[] (core.cc).
 */
#include "machine/machine.h"
#include "sched/fair.h"
#include "sched/fair_balance.h"
#include "sched/fair_policy.h"
#include "sched/fair_shared_runq.h"
#include "sched/features.h"
#include "sched/params.h"
#include "sched/patchset.h"
#include "sched/profiles.h"
#include "sched/run_context.h"
#include "sched/sched.h"
#include "sched/syscalls.h"
#include "sched/topology.h"
#include "sim/simulation.h"
#include "trace/tracepoints.h"

#include <array>
#include <memory>
#include <string>
#include <optional>
#include <vector>

namespace schedlab {

/// How often the always-on rq/cfs_rq invariant checks run.
enum class check_level {
    sampled, ///< release default: every `check_interval` schedule() calls, and at the end
    every,   ///< after every __schedule() (the default of debug builds; tests)
};

class kernel final : private event_handler {
public:
    /// A kernel of profile `kc` on machine `m`, run by `sim`, charging its work through
    /// `ctx` (run_context.h: built for this kernel by the caller, on the same simulation and
    /// machine, and outliving it).
    kernel(simulation& sim, const machine& m, kernel_config kc, run_context& ctx);
    ~kernel();
    kernel(const kernel&) = delete;
    kernel& operator=(const kernel&) = delete;

    /// The system calls, the workload layer's only way in (syscalls.h).
    syscalls& sys() { return sys_; }

    /* ---- the kernel functions behind the system calls ---- */

    /// Creates a task as if forked by init and wakes it (wake_up_new_task()).
    task_struct& spawn(std::unique_ptr<task_behaviour> b, const task_opts& o);
    /// fork()/clone() from the current task `parent`, from inside its step().
    task_struct& fork(task_struct& parent, std::unique_ptr<task_behaviour> b, const task_opts& o);
    /// try_to_wake_up(): returns false if p was not in one of `state`'s sleep states.
    bool try_to_wake_up(task_struct& p, unsigned state, int wake_flags);
    bool wake_up_process(task_struct& p) { return try_to_wake_up(p, TASK_NORMAL, 0); }
    /// Arms p's hrtimer to wake it `ns` from now (schedule_hrtimeout_range()): soft expiry
    /// now + ns, hard expiry `slack` later; p then returns block.
    void schedule_timeout(task_struct& p, sim_dur ns, sim_dur slack = 0);
    /// The slack hrtimer_nanosleep() gives p's timer.
    static sim_dur nanosleep_slack(const task_struct& p);

    sim_time now() const { return sim_.now(); }
    int smp_processor_id() const { return this_cpu_; }
    /// Sets the CPU whose context the next direct call runs in (tests and harnesses
    /// calling kernel functions outside an event; events set it themselves).
    void set_this_cpu(int cpu) { this_cpu_ = cpu; }
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
    /// The cost model applied to this kernel's CPUs (cpu_charges.h), the run's
    /// (run_context.h): prices (charges().cm(), charges().params()), charges, the bursts'
    /// segments and the per-CPU accounting.
    cpu_charges& charges() { return charges_; }
    const cpu_charges& charges() const { return charges_; }
    simulation& sim() { return sim_; }
    const simulation& sim() const { return sim_; }
    const std::vector<std::unique_ptr<task_struct>>& tasks() const { return tasks_; }
    task_struct* find_task_by_pid(int pid);
    /// Running FNV-1a over every context switch (time, cpu, prev, next): equal
    /// digests mean identical schedules.
    u64 schedule_digest() const { return digest_; }
    u64 nr_migrations() const { return nr_migrations_; }
    /// The kinds of the kernel's events; the balancing code's (softirq, ilb, active_lb)
    /// are fired by its own handler, lb_state (fair_balance.h), and counted here.
    enum ev_kind : u32 {
        EV_WORK = 1,
        EV_RESCHED,
        EV_TICK,
        EV_TIMER,
        EV_TTWU_IPI,
        EV_SOFTIRQ,
        EV_ILB,
        EV_ACTIVE_LB,
        EV_SCHED_DONE,
        EV_MIGRATION_STOP,
        EV_TTWU_ACTIVATE,
        EV_WAKE_UP_NEW,
        EV_TTWU_DIRECT,
        EV_TTWU_WAKEUP
    };
    /// The events this kernel's handlers fired, by kind (bench/speed_cases.cc prints them).
    static constexpr int nr_event_kinds = 14;
    void count_event(ev_kind kind) { ++events_by_kind_[kind - 1]; }
    static const char* event_kind_name(int kind); ///< 0 <= kind < nr_event_kinds
    const std::array<u64, nr_event_kinds>& events_by_kind() const { return events_by_kind_; }

    /// print_rq()-style dump of every CPU (debug.cc), printed by failed checks.
    std::string dump_state() const;
    std::string print_rq(int cpu) const;
    /// Switches a feature at run time, as writing to /sys/kernel/debug/sched/features
    /// does (debug.cc; SHARED_RUNQ drains its queues when switched off).
    void sched_feat_set(sched_feat_id f, bool on);

    /* ---- core.c ---- */
    void __schedule(rq& rq, bool preempt);
    void resched_curr(rq& rq);
    /// The fair class's reschedule: TIF_NEED_RESCHED_LAZY under preempt=lazy, else resched_curr().
    void resched_curr_lazy(rq& rq);
    void enqueue_task(rq& rq, task_struct& p, int flags);
    bool dequeue_task(rq& rq, task_struct& p, int flags);
    void activate_task(rq& rq, task_struct& p, int flags);
    void deactivate_task(rq& rq, task_struct& p, int flags);
    void wakeup_preempt(rq& rq, task_struct& p, int wake_flags);
    task_struct* pick_next_task(rq& rq, task_struct* prev);
    void set_task_cpu(task_struct& p, int new_cpu);
    int select_task_rq(task_struct& p, int cpu, int wake_flags);
    /// `forked`: by fork() (its tracepoint is charged, sched_tracepoint); spawn()'s tasks
    /// are the run's setup, as if there before it began.
    void wake_up_new_task(task_struct& p, bool forked = true);
    /// The rest of wake_up_new_task() from the rq lock on, on the forking CPU `this_cpu`:
    /// p is enqueued on the CPU selected for it.
    void wake_up_new_task_activate(task_struct& p, int this_cpu, bool forked);
    /// execve()'s sched_exec() by the current task p, from inside its step(): re-places p
    /// (select_task_rq(WF_EXEC)) and queues the stopper that moves it if another CPU wins.
    void sched_exec(task_struct& p);
    void migration_cpu_stop(rq& r);
    void sched_tick(rq& rq);
    void update_rq_clock(rq& rq);
    /// Ends the current burst of rq's task (its work so far accounted).
    void stop_burst(rq& rq);
    bool idle_cpu(int cpu) const;

    /* ---- ext.c: the ext class (ext.cc) ---- */
    /// The ext class's kernel-wide state, null when no ext policy is loaded (ext.h).
    scx_sched* scx() { return scx_.get(); }
    const scx_sched* scx() const { return scx_.get(); }

    /// kernel: core.c queue_balance_callback(): fn runs at the end of __schedule().
    void queue_balance_callback(rq& r, void (*fn)(kernel&, rq&));
    /// The rt class's kernel-wide state (rt.h; the class is free functions in rt.cc).
    rt_state& rt() { return rt_; }
    const rt_state& rt() const { return rt_; }
    /// The deadline class's kernel-wide state (deadline.h): its timers and counters.
    dl_state& dl() { return *dl_; }
    const dl_state& dl() const { return *dl_; }
    /// The fair class's policy, EEVDF or CFS, as the profile chose (fair_policy.h).
    const fair_policy_ops& policy() const { return *policy_; }

    /* The fair class's hooks and entity level (fair.cc), its policies (fair_eevdf.cc,
       fair_cfs.cc), placement (fair_select.cc, fair_sis_short.cc) and PELT (fair_pelt.cc)
       are free functions (fair.h). */

    /* ---- fair_balance.cc: load balancing, free functions (fair_balance.h) ---- */
    /// The balancing code's kernel-wide state (fair_balance.h): NOHZ, the group sums.
    lb_state& lb() { return lb_; }
    const lb_state& lb() const { return lb_; }
    const root_domain& rd() const { return rd_; }
    root_domain& rd() { return rd_; }

    /* ---- fair_shared_runq.cc: SHARED_RUNQ v3/v4, a patch set (fair_shared_runq.h) ---- */
    /// Its kernel-wide state: the shared runqueues and their counters.
    shared_runq_state& srq() { return srq_; }
    const shared_runq_state& srq() const { return srq_; }
    /// The fair class's spare timeline and cfs_tasks nodes, every rq's (sched.h).
    const fair_spare_nodes& fair_spares() const { return fair_spares_; }
    /// The hooks of the patch sets this kernel applies (patchset.h).
    const patchset_hooks& patches() const { return patches_; }

    /// The first autogroup (the benchmark's session: the tasks spawn() creates), whose
    /// per-CPU cfs_rq and entity are rq::cfs and rq::tg_se (fair_pelt.cc).
    const task_group& autogroup() const { return autogroup_; }
    task_group& autogroup() { return autogroup_; }
    /// Every autogroup, the first one first, then in the order created (setsid()).
    const std::vector<task_group*>& task_groups() const { return task_groups_; }
    /// kernel: kernel/sched/autogroup.c autogroup_create(), 6.6: a new session's
    /// autogroup, a task group under the root with nice-0 shares, its cfs_rq and entity
    /// on every CPU (sched_create_group(), sched_online_group()). With autogroup off,
    /// null: a new session's tasks stay in the root group (autogroup_task_group()).
    task_group* autogroup_create();

    /// The run's decision log (decision_log.h, run_context.h): off unless a sink is set.
    decision_log& decisions() { return decisions_; }
    const decision_log& decisions() const { return decisions_; }

    task_struct& task_of(sched_entity& se);

private:
    void fire(u64 arg) override;
    void prefetch_next_event() const; ///< fetches the lines the next event will touch (core.cc)
    static u64 ev_arg(ev_kind k, u32 v) { return (static_cast<u64>(k) << 32) | v; }

    task_struct& new_task(std::unique_ptr<task_behaviour> b, const task_opts& o, int parent_cpu);
    void sched_cgroup_fork(task_struct& p);
    void cpu_work_done(rq& rq);
    /// The preemption model keeps r's need_resched for curr's next preemption point.
    bool preempt_defers(const rq& r) const;
    /// At a burst boundary of curr: a deferred reschedule acts before `a` (preempt_defers()).
    bool preempt_point(const rq& r, const task_action& a) const;
    /// An interrupt handled on r's CPU returns: to user mode if curr is in user-mode work,
    /// where a pending lazy reschedule is acted on (exit_to_user_mode_loop()).
    void irq_exit_to_user(rq& r);
    void start_burst(rq& rq);
    void do_exit(rq& rq, task_struct& p);
    void start_tick(rq& rq);
    void sched_info_depart(rq& rq, task_struct& p);
    void sched_info_arrive(rq& rq, task_struct& p);
    void maybe_check(rq& rq);
    void check_rq(const rq& rq, std::string& errs) const;

    simulation& sim_;
    syscalls sys_{*this};
    const machine& m_;
    kernel_config kc_;
    const fair_policy_ops* policy_;
    sched_tunables tun_;
    sched_topology topo_;
    std::vector<std::unique_ptr<rq>> rqs_;
    /// model: none (the simulator's speed). curr_hint_[cpu] == rqs_[cpu]->curr, written where
    /// rq->curr is (the constructor, __schedule()); dense, so prefetch_next_event() finds the
    /// next burst's task without waiting for that CPU's rq line. Read by nothing else.
    std::vector<const task_struct*> curr_hint_;
    cpu_charges& charges_; ///< the run's (run_context.h), attached to rqs_ by the constructor
    std::vector<std::unique_ptr<task_struct>> idle_tasks_;
    std::vector<std::unique_ptr<task_struct>> tasks_; ///< tasks_[i]->pid == i + 1
    std::vector<trace_sink*> sinks_;
    int this_cpu_ = 0;
    /// The context the wakeup tracepoints are emitted in (a timer's or the wake-list IPI's
    /// hardirq, else task): tracing only, no scheduling decision reads it.
    trace_irq_ctx irq_ctx_ = trace_irq_ctx::task;
    /// A task's behaviour is stepping (its own kernel path runs: cpu_work_done()).
    bool in_task_step_ = false;
    u64 nr_alive_ = 0;
    u64 digest_ = 0xcbf29ce484222325ULL;
    u64 nr_migrations_ = 0;
    std::array<u64, nr_event_kinds> events_by_kind_{}; ///< indexed by ev_kind - 1
    root_domain rd_;
    rt_state rt_{*this}; ///< the rt class's (rt.h)
    std::unique_ptr<dl_state> dl_; ///< the deadline class's (deadline.h)
    task_group autogroup_{"autogroup-1"};
    std::vector<task_group*> task_groups_; ///< &autogroup_ first (with autogroup on), then autogroup_create()'s
    std::vector<std::unique_ptr<task_group>> own_groups_; ///< autogroup_create()'s
    patchset_hooks patches_; ///< the hooks of the patch sets this kernel applies (patchset.h)
    void register_patchsets();
    shared_runq_state srq_; ///< SHARED_RUNQ's (fair_shared_runq.h), if applied
    fair_spare_nodes fair_spares_; ///< the fair class's spare nodes (sched.h), every rq's
    decision_log& decisions_; ///< the run's (run_context.h)
    lb_state lb_{*this, m_.nr_cpus()}; ///< the balancing code's (fair_balance.h)
    void ttwu_do_activate(rq& r, task_struct& p, int wake_flags);
    void sched_ttwu_pending(rq& r);
    void sched_ttwu_activate(rq& r);
    void ttwu_activate_list(rq& r, const std::vector<std::pair<task_struct*, int>>& list);
    void ttwu_queue_direct(rq& r, task_struct& p, int wake_flags); ///< ttwu_queue(), no wake list
    void ttwu_direct_activate(task_struct& p); ///< model: EV_TTWU_DIRECT (try_to_wake_up())
    void ttwu_direct_flush(rq& r);             ///< model: r's CPU's pending direct activations, now
    void ttwu_waker_flush(rq& r); ///< model: ttwu_direct_flush() and ttwu_wakeup_flush() of r's CPU
    /// ttwu_do_wakeup()'s sched_wakeup of p on r, after the `sent` ns of IPI sending this CPU
    /// just did under r's lock (ttwu_do_activate()).
    void ttwu_do_wakeup_trace(rq& r, task_struct& p, sim_dur sent);
    /// model: emits now the pending sched_wakeup writes (ttwu_writes_) of waker CPU `cpu`
    /// and of task `pid` (-1: none by that key).
    void ttwu_wakeup_flush(int cpu, int pid);
    /*
     * model: a sched_wakeup written after an IPI's send (ttwu_do_wakeup_trace()): emitted at
     * its time by an event (EV_TTWU_WAKEUP), or earlier, at the instant, when its CPU runs
     * more of its own path or its wakee is switched in first (ttwu_wakeup_flush()). Tracing
     * only; no decision reads it.
     */
    struct ttwu_wakeup_write {
        u32 id;
        event_id ev;
        trace_sched_wakeup e;
    };
    std::vector<ttwu_wakeup_write> ttwu_writes_;
    u32 ttwu_write_seq_ = 0;
    void deactivate_prev(rq& r, task_struct& prev);
    void sched_done(rq& r); ///< model: the end of __schedule() to idle (rq::in_schedule)
    void irqs_on_after_schedule(rq& r); ///< the interrupts held during in_schedule, taken
    void hrtimer_interrupt(u32 pid, u64 arg); ///< a sleeper's timer expiry (EV_TIMER)
    void clear_tsk_need_resched(rq& r);
    void hrtimer_dequeue(task_struct& p);
    void hrtimer_run_sleepers(rq& r);
    std::unique_ptr<scx_sched> scx_; ///< the ext class's state (ext.cc), if a policy is loaded
    check_level check_level_ = check_level::sampled;
    u64 check_interval_ = 1024;
    u64 check_countdown_ = 1024;
    u64 check_rounds_ = 0; ///< check_all() calls so far (whose CPU's group sums are checked)
};

} // namespace schedlab
