// SPDX-License-Identifier: GPL-2.0-only
/*
 * The scheduler core: task creation and exit, the wakeup path, __schedule(),
 * the tick, and the execution of task bursts on CPUs (which the kernel does
 * not have: it is where simulated user space runs).
 */
#include "sched/core.h"
#include "sched/fair.h"

#include <fmt/format.h>

#include "sim/bug.h"
#include "sim/config_error.h"

#include <algorithm>

namespace schedlab {

/* kernel: kernel/sched/core.c sched_prio_to_weight[] (same table since 2.6.23). */
const u32 sched_prio_to_weight[40] = {
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
    9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
    1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
    110,   87,    70,    56,    45,    36,    29,    23,    18,    15,
};

/*
 * The scheduling classes in the kernel's order (stop, dl, rt, fair, ext, idle;
 * sched_class::order): __schedule() asks each in turn for a task. A new class
 * is its file (its const sched_class table) and its line here.
 */
constexpr const sched_class* sched_classes[] = {&dl_sched_class, &rt_sched_class,
                                                &fair_sched_class, &ext_sched_class,
                                                &idle_sched_class};

namespace {
void digest_mix(u64& h, u64 v)
{
    for (int i = 0; i < 8; ++i) {
        h ^= (v >> (i * 8)) & 0xff;
        h *= 0x100000001b3ULL;
    }
}

trace_task_state trace_state(const task_struct& p)
{
    if (p.__state == TASK_RUNNING)
        return trace_task_state::R;
    if (p.__state & TASK_DEAD)
        return trace_task_state::X;
    if (p.__state & TASK_UNINTERRUPTIBLE)
        return trace_task_state::D;
    return trace_task_state::S;
}
} // namespace

kernel::kernel(simulation& sim, const machine& m, kernel_config kc, run_context& ctx)
    : sim_(sim), m_(m), kc_(std::move(kc)),
      policy_(kc_.params.policy == fair_policy::eevdf ? &eevdf_policy : &cfs_policy),
      tun_(scale_tunables(kc_.params, m.nr_cpus())),
      charges_(ctx.charges), dl_(std::make_unique<dl_state>(*this)), decisions_(ctx.decisions)
{
    topo_ = build_sched_domains(m_, topology_params_of(kc_));
    lb_.init(topo_, m_.nr_cpus());
    sys_.preempt_points_ = kc_.behaviour.preempt != preempt_model::instant;

    const u64 initial_min_vruntime = static_cast<u64>(-(1LL << 20)); // as init_cfs_rq(): exercise wrap
    for (int cpu = 0; cpu < m_.nr_cpus(); ++cpu) {
        auto r = std::make_unique<rq>();
        r->cpu = cpu;
        r->rd = &rd_;
        r->cfs.rq_ = r.get();
        r->fair_spares = &fair_spares_;
        r->sched_rnd_state = sim_.rng(fmt::format("sched_rng/{}", cpu));
        r->cfs.min_vruntime = initial_min_vruntime;
        init_rt_rq(*this, r->rt);
        r->avg_idle = 2 * tun_.migration_cost;
        r->max_idle_balance_cost = tun_.migration_cost;

        if (kc_.params.autogroup) {
            r->cfs.tg = &autogroup_;
            r->root_is_root_cfs = true;
            r->cfs.my_se = &r->tg_se;
            r->root_cfs.rq_ = r.get();
            r->root_cfs.min_vruntime = initial_min_vruntime;
            r->tg_se.se.my_q = &r->cfs;
            r->tg_se.se.cfs_rq_ = &r->root_cfs;
            r->tg_se.se.slice = tun_.base_slice;
            autogroup_.cfs_rq_.push_back(&r->cfs);
            autogroup_.se_.push_back(&r->tg_se);
        }
        // kernel: kernel/sched/core.c sched_init(), 5.15.0 to v6.5: wake_avg_idle starts at
        // avg_idle (ttwu_do_wakeup() halves it at each wakeup from idle), wake_stamp at jiffies.
        r->wake_avg_idle = r->avg_idle;
        r->wake_stamp = 0; // jiffies at boot (jiffies() counts from boot, fair_select.cc)
        auto idle = std::make_unique<task_struct>();
        idle->pid = 0;
        idle->comm = fmt::format("swapper/{}", cpu);
        idle->__state = TASK_RUNNING;
        idle->cpu = cpu;
        idle->on_cpu = true;
        idle->cpus_mask = cpumask(m_.nr_cpus());
        idle->cpus_mask.set(cpu);
        idle->nr_cpus_allowed = 1;
        idle->sched_class = &idle_sched_class; // init_idle()
        r->idle = idle.get();
        r->curr = idle.get();
        curr_hint_.push_back(r->curr);
        r->idle_stamp = 0;
        // The runqueue's PELT was last updated as the run starts, idle since boot: its
        // sums are decayed to 0 and the first update spans only the run's own time.
        r->cfs.avg.last_update_time = SCHED_CLOCK_AT_START;
        r->root_cfs.avg.last_update_time = SCHED_CLOCK_AT_START; // the root and the group's
        r->tg_se.avg.last_update_time = SCHED_CLOCK_AT_START;    // entity alike
        idle_tasks_.push_back(std::move(idle));
        rqs_.push_back(std::move(r));
    }
    if (kc_.params.autogroup)
        task_groups_.push_back(&autogroup_);
    charges_.attach(rqs_);
    cpupri_init(*this);
    init_dl(*this);
    register_patchsets();
    if (kc_.ext) // scx_ops_enable(), at boot: a policy named in the kernel spec (ext_load.cc)
        scx_ = std::make_unique<scx_sched>(*this, kc_.ext);
    // At boot every CPU idles with its tick stopped and every core is idle.
    for (int cpu = 0; cpu < m_.nr_cpus(); ++cpu) {
        nohz_balance_enter_idle(*this, cpu_rq(cpu));
        update_idle_core(*this, cpu_rq(cpu));
    }
    lb_.nohz.tick_stops = 0; // the run's count, not the boot's
    /*
     * A benchmark starts on a machine that has been up and idle, not at boot:
     * its LLCs have been balanced while idle, and SIS_UTIL's scan depth is what
     * update_idle_cpu_scan() computes for sum_util == 0, the whole LLC. (The
     * kernel's kzalloc()ed 0, "scan nothing", lasts only until each LLC's first
     * periodic balance after boot.)
     */
    for (auto& sds : topo_.llc_shared)
        sds->nr_idle_scan = 0;
    for (int cpu = 0; cpu < m_.nr_cpus(); ++cpu)
        if (sched_domain_shared* sds = topo_.cpu(cpu).sd_llc_shared)
            sds->nr_idle_scan = topo_.cpu(cpu).sd_llc_size;
#ifndef NDEBUG
    // Debug builds check every invariant after every scheduling operation.
    check_level_ = check_level::every;
#endif
}

kernel::~kernel() = default;

/*
 * model: the patch sets this kernel applies (patchset.h), each once: those of
 * its deltas in delta order, then those its version merged, in registry order;
 * their boot-time state now, their hooks for the hook points.
 */
void kernel::register_patchsets()
{
    auto apply = [this](const sched_patchset& ps) {
        if (patches_.add(ps) && ps.init)
            ps.init(*this);
    };
    for (const std::string& name : kc_.deltas)
        for (const kernel_delta_info& d : kernel_deltas())
            if (d.name == name)
                if (const sched_patchset* ps = find_patchset(d.group))
                    apply(*ps);
    for (const sched_patchset* ps : sched_patchset_registry())
        if (ps->merged && ps->merged(kc_))
            apply(*ps);
}

void kernel::set_check_level(check_level l, u64 interval)
{
    check_level_ = l;
    check_interval_ = std::max<u64>(1, interval);
    check_countdown_ = check_interval_;
}

task_struct* kernel::find_task_by_pid(int pid)
{
    if (pid <= 0 || pid > static_cast<int>(tasks_.size()))
        return nullptr;
    return tasks_[pid - 1].get();
}

task_struct& kernel::task_of(sched_entity& se)
{
    // container_of(se, struct task_struct, se): kept as a back pointer here.
    return *se.owner;
}

/* ------------------------------------------------------------------------ */
/* Task creation                                                              */

task_group* kernel::autogroup_create()
{
    if (!kc_.params.autogroup)
        return nullptr;
    auto owned = std::make_unique<task_group>();
    task_group& tg = *owned;
    tg.name = fmt::format("autogroup-{}", task_groups_.size() + 1); // ag->id, autogroup_seq_nr
    const u64 initial_min_vruntime = static_cast<u64>(-(1LL << 20)); // init_cfs_rq()
    for (auto& r : rqs_) {
        auto cfs = std::make_unique<cfs_rq>();
        auto se = std::make_unique<tg_sched_entity>();
        cfs->rq_ = r.get();
        cfs->tg = &tg;
        cfs->my_se = se.get();
        cfs->min_vruntime = initial_min_vruntime;
        se->se.my_q = cfs.get();
        se->se.cfs_rq_ = &r->root_cfs;
        se->se.slice = tun_.base_slice;
        // model: the group's averages start when it is created (online_fair_sched_group()
        // attaches its entities then), empty.
        cfs->avg.last_update_time = r->clock_task;
        se->avg.last_update_time = r->clock_task;
        tg.cfs_rq_.push_back(cfs.get());
        tg.se_.push_back(se.get());
        tg.own_cfs_rq.push_back(std::move(cfs));
        tg.own_se.push_back(std::move(se));
    }
    task_groups_.push_back(&tg);
    own_groups_.push_back(std::move(owned));
    return &tg;
}

// kernel: kernel/fork.c copy_process() + kernel/sched/core.c sched_fork(), 6.6. No mm/files model.
task_struct& kernel::new_task(std::unique_ptr<task_behaviour> b, const task_opts& o, int parent_cpu)
{
    SIM_BUG_ON(o.nice < -20 || o.nice > 19, "nice {} out of range", o.nice);
    auto t = std::make_unique<task_struct>();
    task_struct& p = *t;
    p.pid = static_cast<int>(tasks_.size()) + 1;
    p.tgid = p.pid;
    p.se.owner = &p;
    p.comm = o.comm;
    p.__state = TASK_NEW;
    p.policy = o.policy;
    p.static_prio_nice = o.nice;
    // __sched_setscheduler()'s checks: 1..99 for SCHED_FIFO/RR, 0 for the others.
    const bool rt_policy = o.policy == SCHED_FIFO || o.policy == SCHED_RR;
    SIM_BUG_ON(rt_policy ? (o.rt_priority < 1 || o.rt_priority > MAX_RT_PRIO - 1)
                         : o.rt_priority != 0,
               "task {}: rt_priority {} for policy {}", o.comm, o.rt_priority, o.policy);
    p.rt_priority = o.rt_priority;
    p.prio = o.policy == SCHED_DEADLINE ? MAX_DL_PRIO - 1
             : rt_policy                 ? MAX_RT_PRIO - 1 - o.rt_priority
                                         : NICE_TO_PRIO(o.nice); // normal_prio()
    p.rt.time_slice = sched_rr_timeslice(*this); // __sched_fork()
    p.se.load.weight =
        o.policy == SCHED_IDLE ? WEIGHT_IDLEPRIO : sched_prio_to_weight[o.nice + 20];
    p.cpus_mask = o.allowed.nr_cpu_ids() ? o.allowed : m_.all();
    p.nr_cpus_allowed = p.cpus_mask.weight();
    SIM_BUG_ON(p.nr_cpus_allowed == 0, "task {} has an empty affinity mask", p.comm);
    p.cpu = p.wake_cpu = p.recent_used_cpu = parent_cpu;
    p.sched_info_.last_queued = NOT_QUEUED;
    p.footprint_kib = o.footprint_kib;
    p.rng = sim_.rng(fmt::format("task/{}", p.pid));
    if (o.policy == SCHED_DEADLINE) {
        // model: created SCHED_DEADLINE, as if by sched_setattr() right after clone().
        const std::string err = sched_dl_setattr(*this, p, o.dl);
        if (!err.empty())
            throw config_error("sched_setattr", fmt::format("task {}: SCHED_DEADLINE: {}", o.comm, err));
    }
    p.behaviour = std::move(b);
    p.start_time = now();
    // sched_fork(): the first class in order that runs the task's policy.
    for (const sched_class* c : sched_classes)
        if (o.policy >= 0 && o.policy < 32 && (c->policies & (1u << o.policy))) {
            p.sched_class = c;
            break;
        }
    // ... and with an ext policy loaded, the fair policies run in the ext class (task_should_scx()).
    if (p.sched_class == &fair_sched_class || p.sched_class == &ext_sched_class)
        p.sched_class = task_should_scx(*this, p) ? &ext_sched_class : &fair_sched_class;
    SIM_BUG_ON(!p.sched_class, "task {}: no scheduling class runs policy {}", p.comm, o.policy);
    tasks_.push_back(std::move(t));
    ++nr_alive_;
    return p;
}

task_struct& kernel::spawn(std::unique_ptr<task_behaviour> b, const task_opts& o)
{
    const int cpu = o.cpu < 0 ? 0 : o.cpu;
    SIM_BUG_ON(cpu >= nr_cpu_ids(), "spawn on cpu{} of a {}-CPU machine", cpu, nr_cpu_ids());
    this_cpu_ = cpu;
    task_struct& p = new_task(std::move(b), o, cpu);
    // The benchmark's session (one shell), or a session of its own (setsid()).
    p.sched_task_group = o.setsid ? autogroup_create()
                                  : (task_groups_.empty() ? nullptr : &autogroup_);
    for (auto* s : sinks_)
        s->sched_process_fork({now(), cpu, p.pid, 0, &p.comm, p.prio});
    sched_cgroup_fork(p);
    wake_up_new_task(p, false);
    return p;
}

task_struct& kernel::fork(task_struct& parent, std::unique_ptr<task_behaviour> b,
                          const task_opts& o)
{
    SIM_BUG_ON(parent.cpu != this_cpu_ || cpu_rq(this_cpu_).curr != &parent,
               "fork() from pid {} which is not current on cpu{}", parent.pid, this_cpu_);
    task_opts co = o;
    if (!co.allowed.nr_cpu_ids())
        co.allowed = parent.cpus_mask;
    task_struct& p = new_task(std::move(b), co, parent.cpu);
    p.parent_pid = parent.pid;
    // kernel: kernel/sched/autogroup.c sched_autogroup_fork(), 6.6: the child's signal
    // struct takes its parent's autogroup; a child that calls setsid() at once gets a new
    // one (ksys_setsid() -> sched_autogroup_create_attach()).
    // model: the setsid() child is placed on its new group's cfs_rq at fork (the kernel
    // places it in its parent's group, then moves it: sched_move_task()).
    p.sched_task_group = o.setsid ? autogroup_create() : parent.sched_task_group;
    // kernel: kernel/fork.c dup_task_struct() -> arch_dup_task_struct() copies the parent's
    // task_struct whole, and kernel/sched/core.c __sched_fork() resets the entities, on_rq,
    // dl/rt state, numa and wake_entry but not record_wakee()'s fields (read in the 5.x body
    // and in the v6.17+ patch contexts of __sched_fork(u64 clone_flags, ...), e.g. Message-ID
    // 20260424071113.1199600-1-quzicheng@huawei.com, a 6.18-stable fix of its se resets):
    // the child starts with its parent's wakee_flips, their decay stamp and last_wakee, which
    // wake_wide() reads at the child's first wakeups (by it and of it).
    p.wakee_flips = parent.wakee_flips;
    p.wakee_flip_decay_ts = parent.wakee_flip_decay_ts;
    p.last_wakee = parent.last_wakee;
    if (o.thread)
        p.tgid = parent.tgid;
    for (auto* s : sinks_)
        s->sched_process_fork({now(), this_cpu_, p.pid, parent.pid, &p.comm, p.prio});
    charges_.charge_tracepoint(cpu_rq(this_cpu_)); // model: tracing's write (sched_tracepoint)
    sched_cgroup_fork(p);
    wake_up_new_task(p);
    // model: the child's first burst is its own start-up (cpu_charges::start_cost()), on the
    // CPU fork balancing chose; a migration before it first runs is not re-costed.
    p.work_left = charges_.start_cost(p, parent.cpu);
    return p;
}

// kernel: kernel/sched/core.c sched_cgroup_fork(), 6.6: the class's task_fork hook (no cgroups).
void kernel::sched_cgroup_fork(task_struct& p)
{
    if (p.sched_class->task_fork)
        p.sched_class->task_fork(*this, p);
}

/*
 * kernel: kernel/sched/core.c wake_up_new_task(), 6.1-6.6 (read in v6.5): under p->pi_lock
 * only, fork balancing (select_task_rq(WF_FORK), the fair class's find_idlest_cpu() over
 * every SD_BALANCE_FORK level) and __set_task_cpu(); then the chosen rq's lock,
 * update_rq_clock(), post_init_entity_util_avg() and activate_task(), from which p counts
 * in that rq's nr_running (idle_cpu(), find_idlest_group()). Other CPUs' forks that scan
 * meanwhile find the chosen CPU as idle as this one did and may choose it too.
 * model: the selection reads the state when the scan starts; activate_task() comes when
 * the forking CPU has done the work charged to it so far, the scan's reads
 * (find_idlest_cpu(), ACCT_IDLE_SCAN) and its tracepoints (cpu_charges::owed_until()):
 * an event then (EV_WAKE_UP_NEW), or at once when nothing is owed. spawn()'s tasks
 * (forked == false) are enqueued at once. No balance callbacks yet.
 * kernel: the chosen rq's lock (__task_rq_lock(), 5.15.0 sndrzt/linux-5.15 75c6ad16ec64,
 * 6.5 sndrzt/linux-6.5 4f5cdb332210 and 6.18.2 gfunkmonk/linux-6.18.2 062668f4d006 alike)
 * is held from update_rq_clock() through activate_task(), check_preempt_curr()
 * (wakeup_preempt() from 6.7) and task_woken() to task_rq_unlock(). model: as a direct
 * wakeup's (ttwu_queue_direct()): the forking CPU takes it when the selection is done -
 * its wait for another holder, the lock's line and rq_lock_hold, and the chosen rq's lines
 * when remote (pull_rq_lines()) are owed before the activation - and holds it across the
 * tg->load_avg line time and the IPI send under it (hold_across_lines(), hold_across_send()).
 * Lane rqlocks; before, the lock was not charged. spawn()'s tasks (init's forks) take no
 * lock: their forking CPU is not modelled.
 */
void kernel::wake_up_new_task(task_struct& p, bool forked)
{
    ttwu_waker_flush(cpu_rq(this_cpu_));
    p.__state = TASK_RUNNING;
    p.recent_used_cpu = p.cpu;
    // Fork balancing: set the CPU here, without migration accounting (__set_task_cpu()).
    const int cpu = select_task_rq(p, p.cpu, WF_FORK);
    p.cpu = p.wake_cpu = cpu;
    if (forked) { // __task_rq_lock() of the chosen rq
        rq& r = cpu_rq(cpu);
        charges_.lock_and_charge(r.lock, this_cpu_, charges_.params().rq_lock_hold);
        charges_.pull_rq_lines(r, this_cpu_);
    }
    const sim_time at = forked ? charges_.owed_until(cpu_rq(this_cpu_)) : now();
    if (at > now()) {
        p.new_task_waker = this_cpu_;
        sim_.at(at, event_prio::task_work, this, ev_arg(EV_WAKE_UP_NEW, static_cast<u32>(p.pid)));
        return;
    }
    wake_up_new_task_activate(p, this_cpu_, forked);
}

void kernel::wake_up_new_task_activate(task_struct& p, int this_cpu, bool forked)
{
    this_cpu_ = this_cpu;
    p.new_task_waker = -1;
    const int cpu = p.cpu;
    post_init_entity_util_avg(*this, p);
    rq& r = cpu_rq(cpu);
    const u64 line_before = charges_.line_ns(this_cpu);
    update_rq_clock(r);
    activate_task(r, p, ENQUEUE_NOCLOCK);
    for (auto* s : sinks_)
        s->sched_wakeup_new({now(), this_cpu_, p.pid, &p.comm, cpu, p.prio});
    if (forked)
        charges_.charge_tracepoint(cpu_rq(this_cpu_));
    const u64 ipi_before = charges_.ipi_send_ns(this_cpu);
    wakeup_preempt(r, p, WF_FORK);
    if (p.sched_class->task_woken)
        p.sched_class->task_woken(*this, r, p);
    if (forked) { // task_rq_unlock(): the lock was held across the lines and the send
        charges_.hold_across_lines(r.lock, this_cpu, line_before);
        charges_.hold_across_send(r.lock, this_cpu, ipi_before);
    }
}

/*
 * kernel: kernel/sched/core.c sched_exec(), 6.5 (the same call and stopper move in 5.15 and,
 * after the 2023 scoped_guard conversion, in 6.18), from fs/exec.c bprm_execve() once the
 * binary is open and before it is loaded: the class's select_task_rq() with WF_EXEC (fair:
 * the slow path from the highest SD_BALANCE_EXEC domain; rt, dl and ext keep the CPU), and,
 * when another CPU wins, stop_one_cpu(task_cpu(p), migration_cpu_stop): the stopper preempts
 * p on its own CPU at once and moves it. Differs: no cpu_active() check (no hotplug); the
 * stopper is an event once the scan's reads charged to p's CPU are done (find_idlest_cpu(),
 * cpu_charges::owed_until()), like the active balance's (its two context switches are not
 * charged); sched_core_exec() (core scheduling) is not modelled.
 */
void kernel::sched_exec(task_struct& p)
{
    SIM_BUG_ON(cpu_rq(p.cpu).curr != &p, "sched_exec() by pid {} which is not current", p.pid);
    this_cpu_ = p.cpu;
    const int dest_cpu = p.sched_class->select_task_rq(*this, p, p.cpu, WF_EXEC);
    if (dest_cpu == p.cpu || !p.cpus_mask.test(dest_cpu))
        return;
    rq& r = cpu_rq(p.cpu);
    SIM_BUG_ON(r.exec_migrate, "cpu{}: a second sched_exec() stopper", r.cpu);
    r.exec_migrate = &p;
    r.exec_dest_cpu = dest_cpu;
    sim_.at(charges_.owed_until(r), event_prio::ipi, this,
            ev_arg(EV_MIGRATION_STOP, static_cast<u32>(r.cpu)));
}

/*
 * kernel: kernel/sched/core.c migration_cpu_stop() -> __migrate_task() -> move_queued_task(),
 * 6.5, for sched_exec()'s request: on p's CPU the stopper has preempted p (put_prev_task());
 * p, still queued, is dequeued, set on dest (is_cpu_allowed() checked), enqueued there with
 * the wakeup-preemption check; the stopper's CPU then schedules. If p is no longer queued on
 * this CPU, only p->wake_cpu is set (the kernel's "task_rq(p) == rq" and on_rq tests).
 * Differs: the stopper thread is not a task (its switches are not charged), as for
 * active_load_balance_cpu_stop().
 */
void kernel::migration_cpu_stop(rq& r)
{
    task_struct* pp = std::exchange(r.exec_migrate, nullptr);
    const int dest_cpu = std::exchange(r.exec_dest_cpu, -1);
    SIM_BUG_ON(!pp, "cpu{}: migration stopper without a task", r.cpu);
    task_struct& p = *pp;
    this_cpu_ = r.cpu;
    const bool curr = r.curr == &p;
    if (curr) {
        stop_burst(r);
        update_rq_clock(r);
        if (p.sched_class == &fair_sched_class)
            update_curr(*this, task_cfs_rq(r, p));
    }
    if (p.cpu == r.cpu && p.on_rq && p.cpus_mask.test(dest_cpu)) {
        if (curr)
            p.sched_class->put_prev_task(*this, r, p);
        update_rq_clock(r);
        deactivate_task(r, p, DEQUEUE_NOCLOCK);
        set_task_cpu(p, dest_cpu);
        rq& dst = cpu_rq(dest_cpu);
        update_rq_clock(dst);
        activate_task(dst, p, ENQUEUE_NOCLOCK);
        wakeup_preempt(dst, p, 0);
    } else if (p.cpu == r.cpu) {
        p.wake_cpu = dest_cpu;
    }
    if (curr) {
        r.need_resched = true;
        __schedule(r, true);
    }
}

/* ------------------------------------------------------------------------ */
/* Enqueue / dequeue                                                          */

// kernel: kernel/sched/core.c update_rq_clock(), 6.6: rq->clock from sched_clock_cpu() (since
// boot: sched_clock_at()); no IRQ or steal time is modelled, so clock_task advances with it.
void kernel::update_rq_clock(rq& r)
{
    const u64 t = sched_clock_at(now());
    SIM_BUG_ON(t < r.clock, "cpu{}: rq clock went backwards", r.cpu);
    r.clock_task += t - r.clock; // no IRQ or steal time is modelled
    r.clock = t;
}

// kernel: kernel/sched/core.c enqueue_task(), 6.6 (no uclamp, no psi): the class's hook.
void kernel::enqueue_task(rq& r, task_struct& p, int flags)
{
    if (!(flags & ENQUEUE_NOCLOCK))
        update_rq_clock(r);
    if (!(flags & ENQUEUE_RESTORE) && p.sched_info_.last_queued == NOT_QUEUED)
        p.sched_info_.last_queued = r.clock; // sched_info_enqueue()
    p.sched_class->enqueue_task(*this, r, p, flags);
}

// kernel: kernel/sched/core.c activate_task(), 6.6.
void kernel::activate_task(rq& r, task_struct& p, int flags)
{
    enqueue_task(r, p, flags);
    p.on_rq = TASK_ON_RQ_QUEUED;
}

// kernel: kernel/sched/core.c dequeue_task(), 6.6 (no uclamp, no psi): the class's hook;
// false when the class keeps p queued (6.12 DELAY_DEQUEUE).
bool kernel::dequeue_task(rq& r, task_struct& p, int flags)
{
    if (!(flags & DEQUEUE_NOCLOCK))
        update_rq_clock(r);
    if (!(flags & DEQUEUE_SAVE) && p.sched_info_.last_queued != NOT_QUEUED) {
        // sched_info_dequeue(): time queued but not run counts as run_delay
        const u64 delta = r.clock - p.sched_info_.last_queued;
        p.sched_info_.last_queued = NOT_QUEUED;
        p.sched_info_.run_delay += delta;
        r.stats.run_delay += delta;
    }
    return p.sched_class->dequeue_task(*this, r, p, flags);
}

// kernel: kernel/sched/core.c deactivate_task(), 6.6; with 6.12's block_task(): a task
// whose dequeue the class delayed stays on_rq.
void kernel::deactivate_task(rq& r, task_struct& p, int flags)
{
    p.on_rq = (flags & DEQUEUE_SLEEP) ? 0 : TASK_ON_RQ_MIGRATING;
    if (!dequeue_task(r, p, flags))
        p.on_rq = TASK_ON_RQ_QUEUED;
}

// kernel: kernel/sched/core.c set_task_cpu(), 6.6: migrate_task_rq + sched_migrate_task trace.
void kernel::set_task_cpu(task_struct& p, int new_cpu)
{
    if (p.cpu == new_cpu)
        return;
    for (auto* s : sinks_)
        s->sched_migrate_task({now(), p.pid, &p.comm, p.cpu, new_cpu, p.prio});
    charges_.charge_tracepoint(cpu_rq(this_cpu_)); // on the CPU running the move
    if (p.sched_class->migrate_task_rq)
        p.sched_class->migrate_task_rq(*this, p, new_cpu);
    ++p.se.nr_migrations;
    ++nr_migrations_;
    p.cpu = p.wake_cpu = new_cpu;
}

namespace {

/*
 * kernel: kernel/sched/core.c select_fallback_rq(), read at v6.5 (sndrzt/linux-6.5
 * 4f5cdb332210) and v6.6.87 (Yunbaby8/linux-6.6.87-lab 7fe0c4ed5035; the same): the first
 * allowed CPU of cpu's node (cpumask_of_node(cpu_to_node(cpu)), in CPU order), else the first
 * allowed CPU. is_cpu_allowed() is the test of p->cpus_ptr: every CPU is active and online
 * and no task disables migration in the model. Differs: no cpuset_cpus_allowed_fallback() or
 * task_cpu_possible_mask() steps (and no "no longer affine" message), which the kernel takes
 * only when no allowed CPU is active: unreachable without hotplug, an affinity mask being
 * never empty (new_task()'s check).
 */
int select_fallback_rq(const machine& m, int cpu, const task_struct& p)
{
    const int nid = m.cpus[static_cast<std::size_t>(cpu)].node;
    const cpumask nodemask = m.node_mask(nid);
    for (int dest_cpu = nodemask.first(); dest_cpu < nodemask.nr_cpu_ids();
         dest_cpu = nodemask.next(dest_cpu + 1))
        if (p.cpus_mask.test(dest_cpu))
            return dest_cpu;
    return p.cpus_mask.first();
}

} // namespace

// kernel: kernel/sched/core.c select_task_rq(), 6.5 / 6.6 (read at v6.5 and v6.6.87): the
// class's choice for a task allowed on more than one CPU, else cpumask_any(p->cpus_ptr) (the
// first); a CPU outside p->cpus_ptr goes to select_fallback_rq(task_cpu(p), p). Differs: no
// is_migration_disabled(). Reached by a spawn() outside the task's mask, by a wakeup after a
// change of a sleeping task's mask that left its CPU out (tests set cpus_mask; no workload
// does), and on the 5.15 and 6.1 profiles by select_idle_sibling()'s recent_used_cpu, which
// they may return outside the mask when prev is allowed (kernel-map.md).
int kernel::select_task_rq(task_struct& p, int cpu, int wake_flags)
{
    if (p.nr_cpus_allowed > 1)
        cpu = p.sched_class->select_task_rq(*this, p, cpu, wake_flags);
    else
        cpu = p.cpus_mask.first();
    if (!p.cpus_mask.test(cpu))
        cpu = select_fallback_rq(m_, p.cpu, p);
    return cpu;
}

/*
 * kernel: kernel/sched/core.c idle_cpu(), 6.6: the idle task runs, nothing is
 * queued and no wakeup is pending, tested in the kernel's order (rq->curr first,
 * so a busy CPU costs one line of its rq). model: a pending wake list is seen by
 * the CPU that queued it at once and by the others only once that waker's store
 * to ttwu_pending is visible (rq::ttwu_pending_visible, see try_to_wake_up());
 * a CPU still in __schedule() to idle is not idle yet (rq::in_schedule).
 */
bool kernel::idle_cpu(int cpu) const
{
    const rq& r = cpu_rq(cpu);
    if (r.curr != r.idle)
        return false;
    if (r.nr_running)
        return false;
    if (r.ttwu_pending_seen_by(this_cpu_, now()))
        return false;
    return !r.in_schedule;
}

// model: the end of __schedule() to idle (rq::in_schedule): idle_cpu() from now on.
void kernel::sched_done(rq& r)
{
    r.in_schedule_event = {};
    r.in_schedule = false;
    r.in_schedule_prev = -1;
    r.newidle.active = false;
    lb_.lb_stats_changed(r.cpu);
    irqs_on_after_schedule(r);
}

/*
 * kernel: kernel/sched/core.c __schedule(), 6.5 (sndrzt/linux-6.5 4f5cdb332210):
 * local_irq_disable() (core.c:6609) before rq_lock(); interrupts come back on only in
 * finish_task_switch() -> finish_lock_switch() -> raw_spin_rq_unlock_irq() (core.c:5251,
 * 5133), on the idle task's side of the switch. newidle_balance() in the pick drops and
 * retakes the rq lock without touching interrupts (raw_spin_rq_unlock() and
 * raw_spin_rq_lock(), fair.c:11874, 11913; update_blocked_averages()'s rq_lock_irqsave()
 * restores the off state); 6.18.2's sched_balance_newidle() alike (gfunkmonk/linux-6.18.2
 * 062668f4d006, fair.c:12854, 12898; __schedule()'s local_irq_disable(), core.c:6813). So a
 * wake list's IPI that reaches the CPU meanwhile leaves ttwu_pending set (the loop breaks on
 * it, fair.c:11907) and nothing enqueued: newidle_balance() returns 0 with idle_stamp kept,
 * the CPU switches to idle, and the IPI is taken at the irq enable: sched_ttwu_pending()
 * (core.c:3859) enqueues, ttwu_do_activate()'s avg_idle sample runs from idle_stamp to then
 * (core.c:3792), and resched_curr() of the idle task sends nothing (local); do_idle() finds
 * need_resched, skips its idle loop (idle.c:258) and schedule_idle() (idle.c:310) switches
 * to the wakee. The tick's and a sleeper's hrtimer interrupt (LOCAL_TIMER_VECTOR 0xec) wait
 * too, and come after the IPI's (CALL_FUNCTION_SINGLE_VECTOR 0xfb; x86 takes the higher
 * vector first; arch/x86/include/asm/irq_vectors.h).
 * model: rq::in_schedule is that window (the work charged in __schedule() to idle and the
 * newly-idle passes); what came during it is taken at its end, at this instant, the IPI
 * first (event_prio::ipi before tick). Lane nibirq; before, each was taken at its instant
 * during the window, so the wakee was enqueued during the pass. Differs: the window also
 * covers work prev's path owed from before __schedule() (cpu_charges::switch_to_idle()).
 */
void kernel::irqs_on_after_schedule(rq& r)
{
    const auto cpu = static_cast<u32>(r.cpu);
    if (r.ttwu_ipi_held) {
        r.ttwu_ipi_held = false;
        r.ttwu_ipi_event = sim_.after(0, event_prio::ipi, this, ev_arg(EV_TTWU_IPI, cpu));
    }
    if (r.tick_held) {
        r.tick_held = false;
        if (!r.tick_event.valid())
            r.tick_event = sim_.after(0, event_prio::tick, this, ev_arg(EV_TICK, cpu));
    }
    for (const int pid : r.timers_held) {
        task_struct* p = find_task_by_pid(pid);
        // not woken meanwhile nor its timer armed anew; the CPU is awake: no idle exit first
        if (!p || p->timer_cpu != r.cpu || p->timer.valid())
            continue;
        p->timer_cpu_awake = true;
        p->timer = sim_.after(0, event_prio::tick, this, ev_arg(EV_TIMER, static_cast<u32>(pid)));
    }
    r.timers_held.clear();
}

/* ------------------------------------------------------------------------ */
/* Wakeups                                                                    */

/*
 * kernel: kernel/sched/core.c ttwu_do_activate(), 6.6: enqueue, the
 * wakeup-preemption check, and the avg_idle sample of a CPU leaving idle.
 * kernel: ttwu_do_wakeup() (6.5 sndrzt/linux-6.5 4f5cdb332210, 6.18 gfunkmonk/linux-6.18.2
 * 062668f4d006; inside ttwu_do_wakeup() after check_preempt_curr() in 5.15 and 6.1-rc7)
 * emits sched_wakeup on the CPU running it, after activate_task() and wakeup_preempt()
 * (and resched_curr()'s IPI), with r's lock still held: the waker's for a direct
 * activation of another CPU's rq (ttwu_queue() without the wake list), the target's from
 * its wake list (sched_ttwu_pending(), whose wakeup_preempt() is local and sends nothing);
 * the payload's target_cpu is r's CPU. model: run at the instant of the enqueue: a direct
 * activation's once the waker's CPU has paid the work before it (try_to_wake_up(),
 * EV_TTWU_DIRECT), a wake list's at the IPI's (or after the lock, sched_ttwu_activate()).
 * A reschedule IPI's send, charged to this CPU by wakeup_preempt(), extends r's lock
 * (cpu_charges::hold_across_send()) and comes before sched_wakeup's stamp
 * (ttwu_do_wakeup_trace()). Differs: TASK_RUNNING, task_woken and the avg_idle sample
 * are at the enqueue's instant, not after the send.
 */
void kernel::ttwu_do_activate(rq& r, task_struct& p, int wake_flags)
{
    update_rq_clock(r);
    int en_flags = ENQUEUE_WAKEUP | ENQUEUE_NOCLOCK;
    if (wake_flags & WF_MIGRATED)
        en_flags |= ENQUEUE_MIGRATED;
    activate_task(r, p, en_flags);
    const u64 ipi_before = charges_.ipi_send_ns(this_cpu_);
    wakeup_preempt(r, p, wake_flags);
    charges_.hold_across_send(r.lock, this_cpu_, ipi_before);
    p.__state = TASK_RUNNING; // ttwu_do_wakeup()
    ttwu_do_wakeup_trace(r, p, static_cast<sim_dur>(charges_.ipi_send_ns(this_cpu_) - ipi_before));
    if (p.sched_class->task_woken)
        p.sched_class->task_woken(*this, r, p);

    if (r.idle_stamp) {
        // update_avg(&rq->avg_idle, delta), capped at 2 * max_idle_balance_cost.
        const u64 delta = r.clock - r.idle_stamp;
        const u64 max = 2 * r.max_idle_balance_cost;
        const s64 diff = static_cast<s64>(delta) - static_cast<s64>(r.avg_idle);
        r.avg_idle = static_cast<u64>(static_cast<s64>(r.avg_idle) + diff / 8);
        if (r.avg_idle > max)
            r.avg_idle = max;
        r.wake_stamp = jiffies(*this);
        r.wake_avg_idle = r.avg_idle / 2;
        r.idle_stamp = 0;
    }
}

/*
 * kernel: ttwu_do_wakeup()'s trace_sched_wakeup(), on the CPU running it, after
 * wakeup_preempt()'s IPI send (ttwu_do_activate()). model: stamped `sent` after the
 * instant; its ring-buffer write is charged to this CPU now, after the send (it delays a
 * local preemption's switch, EV_RESCHED, not an IPI already sent). A stamp after the
 * instant is held back (ttwu_writes_, EV_TTWU_WAKEUP) so the trace is emitted in time
 * order; it is emitted at the instant instead if this CPU runs more of its own path first
 * or the wakee is switched in first (ttwu_wakeup_flush()).
 */
void kernel::ttwu_do_wakeup_trace(rq& r, task_struct& p, sim_dur sent)
{
    const trace_sched_wakeup e{now() + sent, this_cpu_, p.pid, &p.comm, r.cpu, p.prio, irq_ctx_};
    charges_.charge_tracepoint(cpu_rq(this_cpu_));
    if (sinks_.empty())
        return;
    if (sent <= 0) {
        for (auto* s : sinks_)
            s->sched_wakeup(e);
        return;
    }
    const u32 id = ttwu_write_seq_++;
    ttwu_writes_.push_back(
        {id, sim_.at(e.ts, event_prio::ipi, this, ev_arg(EV_TTWU_WAKEUP, id)), e});
}

void kernel::ttwu_wakeup_flush(int cpu, int pid)
{
    for (std::size_t i = 0; i < ttwu_writes_.size();) {
        ttwu_wakeup_write& w = ttwu_writes_[i];
        if (w.e.cpu != cpu && w.e.pid != pid) {
            ++i;
            continue;
        }
        sim_.cancel(w.ev);
        trace_sched_wakeup e = w.e;
        e.ts = now();
        ttwu_writes_.erase(ttwu_writes_.begin() + static_cast<std::ptrdiff_t>(i));
        for (auto* s : sinks_)
            s->sched_wakeup(e);
    }
}

// model: r's CPU runs more of its own path: its earlier try_to_wake_up()s are over.
void kernel::ttwu_waker_flush(rq& r)
{
    if (!r.ttwu_direct.empty())
        ttwu_direct_flush(r);
    if (!ttwu_writes_.empty())
        ttwu_wakeup_flush(r.cpu, -1);
}

/*
 * kernel: kernel/sched/core.c sched_ttwu_pending(), 6.6: the IPI's handler takes the rq lock,
 * update_rq_clock(), ttwu_do_activate() for every queued wakeup, then clears rq->ttwu_pending
 * (d6962c4fe8f9, v6.2-rc1). 5.15.0 and 6.1-rc7 (kernel_behaviour::ttwu_pending_clear_early)
 * clear it first, before rq_lock_irqsave(): from then until the first enqueue's
 * add_nr_running() (the end of enqueue_task_fair()) another CPU's idle_cpu() finds this one
 * idle (rq->curr the idle task, nr_running 0, ttwu_pending 0) and select_idle_sibling() may
 * stack its wakee here too. model: the list is enqueued at one instant: at the IPI's where
 * the clear is late (ttwu_pending covers the gap), and where it is early at the end of the
 * rq lock's wait, the lock line's transfer and the first wakee's rq_lock_hold
 * (sched_ttwu_activate()), the window the kernel has. Differs: the first enqueue's
 * tg->load_avg wait (fair_pelt.cc) is charged after that instant, not inside the window; the
 * later wakees are enqueued with the first.
 */
void kernel::sched_ttwu_pending(rq& r)
{
    this_cpu_ = r.cpu;
    r.ttwu_ipi_event = {};
    if (sim_.pending(r.ttwu_activate_event)) {
        /*
         * model: an IPI taken while the previous list is still being enqueued: the kernel's
         * handler runs with interrupts off, so this one is taken after it (v6.5's comment at
         * the clear: "We will receive IPI after local irq enabled").
         */
        r.ttwu_ipi_event = sim_.at(r.ttwu_activate_at, event_prio::ipi, this,
                                   ev_arg(EV_TTWU_IPI, static_cast<u32>(r.cpu)));
        return;
    }
    auto list = std::move(r.wake_list);
    r.wake_list.clear();
    const sim_dur hold = charges_.params().rq_lock_hold;
    const auto n = static_cast<sim_dur>(list.size());
    charges_.lock_and_charge(r.lock, r.cpu, hold * n);
    if (kc_.behaviour.ttwu_pending_clear_early && n > 0) {
        r.ttwu_pending = false;
        lb_.lb_stats_changed(r.cpu);
        // The lock is free again at busy_until: the first wakee's hold ends n - 1 holds before.
        r.ttwu_activate_at = r.lock.busy_until - hold * (n - 1);
        r.ttwu_activating = std::move(list);
        r.ttwu_activate_event = sim_.at(r.ttwu_activate_at, event_prio::ipi, this,
                                        ev_arg(EV_TTWU_ACTIVATE, static_cast<u32>(r.cpu)));
        return;
    }
    ttwu_activate_list(r, list);
    r.ttwu_pending = false;
    lb_.lb_stats_changed(r.cpu);
}

// model: the enqueues of sched_ttwu_pending() with an early ttwu_pending clear (see above).
void kernel::sched_ttwu_activate(rq& r)
{
    this_cpu_ = r.cpu;
    r.ttwu_activate_event = {};
    auto list = std::move(r.ttwu_activating);
    r.ttwu_activating.clear();
    ttwu_activate_list(r, list);
    lb_.lb_stats_changed(r.cpu);
}

// kernel: sched_ttwu_pending()'s loop, 6.6: ttwu_do_activate() of each wakee in list order.
void kernel::ttwu_activate_list(rq& r, const std::vector<std::pair<task_struct*, int>>& list)
{
    charges_.under_lock(r.lock, r.cpu, [&] { // the rq lock over the loop
        for (const auto& [p, wf] : list) {
            SIM_BUG_ON(p->cpu != r.cpu, "wake-list task pid {} is for cpu{}, queued on cpu{}",
                       p->pid, p->cpu, r.cpu);
            ttwu_do_activate(r, *p, wf & WF_MIGRATED);
        }
    });
}

/*
 * kernel: kernel/sched/core.c try_to_wake_up(), 6.6: select a CPU, migrate,
 * then activate directly or - with TTWU_QUEUE, for a target outside the
 * waker's LLC or an idle one inside it (5.15: outside it only, or an on_cpu
 * wakee's CPU running at most one task) - through the target's wake list,
 * activated when the IPI arrives (costs.def: ipi_wakeup, later), with
 * rq->ttwu_pending set meanwhile so other wakers see the CPU as busy.
 * A task still queued takes ttwu_runnable() instead; from 6.12 that includes
 * a delayed one, requeued in place on its CPU. A waker that enqueues on
 * another CPU's runqueue itself pays for that runqueue's lines
 * (pull_rq_lines(), model). Differs: no p->pi_lock or on_cpu spinning (a
 * task's block and its schedule() are atomic here).
 */
bool kernel::try_to_wake_up(task_struct& p, unsigned state, int wake_flags)
{
    ttwu_waker_flush(cpu_rq(this_cpu_));
    if (!(p.__state & state))
        return false;
    for (auto* s : sinks_)
        s->sched_waking({now(), this_cpu_, p.pid, &p.comm, p.cpu, p.prio, irq_ctx_});
    charges_.charge_tracepoint(cpu_rq(this_cpu_)); // model: tracing's write (sched_tracepoint)

    rq& this_rq = cpu_rq(this_cpu_);
    if (p.on_rq) {
        // ttwu_runnable(): still queued, just mark it running again; 6.12: a delayed
        // task is requeued in place on its CPU (no select_task_rq) and may preempt.
        if (p.se.sched_delayed) {
            rq& r = cpu_rq(p.cpu);
            charges_.lock_and_charge(r.lock, this_cpu_, charges_.params().rq_lock_hold);
            charges_.pull_rq_lines(r, this_cpu_);
            update_rq_clock(r);
            enqueue_task(r, p, ENQUEUE_NOCLOCK | ENQUEUE_DELAYED);
            const u64 ipi_before = charges_.ipi_send_ns(this_cpu_);
            if (!p.on_cpu)
                wakeup_preempt(r, p, wake_flags);
            // ttwu_do_wakeup() under the lock, after the IPI, as in ttwu_do_activate()
            charges_.hold_across_send(r.lock, this_cpu_, ipi_before);
            ttwu_do_wakeup_trace(
                r, p, static_cast<sim_dur>(charges_.ipi_send_ns(this_cpu_) - ipi_before));
        }
        p.__state = TASK_RUNNING;
        this_rq.stats.ttwu_count++;
        return true;
    }

    p.__state = TASK_WAKING;
    if (p.timer.valid()) {
        sim_.cancel(p.timer);
        p.timer = {};
    }
    hrtimer_dequeue(p);
    /*
     * kernel: try_to_wake_up(), 6.6: p still on_cpu (its CPU in __schedule() with p
     * as prev, rq::in_schedule) goes on that CPU's wake list when ttwu_queue_cond()
     * allows (ttwu_queue_wakelist(p, task_cpu(p))), without select_task_rq().
     * Differs: otherwise the waker would spin until p->on_cpu clears; here it
     * selects at once.
     */
    /*
     * kernel: ttwu_queue_wakelist() -> ttwu_queue_cond(), 6.1-6.6: another LLC's CPU, or
     * an idle CPU of this LLC other than the waker's, and p allowed there. 5.15
     * (kernel_behaviour::ttwu_queue_idle_cpu false): another LLC's CPU, or inside the
     * LLC only an on_cpu wakee (WF_ON_CPU) whose CPU runs at most one task; never the
     * waker's own CPU (its WARN_ON_ONCE() returns false); no affinity test.
     */
    const auto ttwu_queue_cond = [&](int cpu, bool wf_on_cpu) {
        if (!sched_feat(TTWU_QUEUE))
            return false;
        if (!kc_.behaviour.ttwu_queue_idle_cpu)
            return cpu != this_cpu_ && (!topo_.cpus_share_cache(this_cpu_, cpu) ||
                                        (wf_on_cpu && cpu_rq(cpu).nr_running <= 1));
        return p.cpus_mask.test(cpu) &&
               (!topo_.cpus_share_cache(this_cpu_, cpu) ||
                (cpu != this_cpu_ && cpu_rq(cpu).nr_running == 0));
    };
    const rq& prev_rq = cpu_rq(p.cpu);
    const bool on_cpu_queue = prev_rq.in_schedule && prev_rq.in_schedule_prev == p.pid &&
                              ttwu_queue_cond(p.cpu, true);
    const int cpu = on_cpu_queue ? p.cpu : select_task_rq(p, p.wake_cpu, wake_flags | WF_TTWU);
    if (decisions_.on())
        decisions_.log(now(), this_cpu_, "select_task_rq",
                       on_cpu_queue ? fmt::format("pid {} ({}) prev cpu{} -> cpu{}: on_cpu: its "
                                                  "CPU's wake list",
                                                  p.pid, p.comm, p.cpu, cpu)
                                    : fmt::format("pid {} ({}) prev cpu{} -> cpu{}: {}", p.pid,
                                                  p.comm, p.cpu, cpu, decisions_.last_placement()));
    if (!on_cpu_queue && lb_.gap.on) { // counting only (idle_gap.h): where the wakeup landed
        idle_gap_stats& gap = lb_.gap;
        ++gap.wakeups;
        p.gap_placed = cpu_rq(cpu).nr_running == 0 ? 1 : 0;
        gap.placed_on_idle += static_cast<u64>(p.gap_placed);
        if (p.sched_class == &fair_sched_class)
            gap.placed(decisions_.last_select_branch(), decisions_.last_sis_branch(),
                       p.gap_placed == 1);
    }
    if (cpu != p.cpu) {
        wake_flags |= WF_MIGRATED;
        set_task_cpu(p, cpu);
    }

    // ttwu_stat(), counted on the waking CPU.
    this_rq.stats.ttwu_count++;
    if (cpu == this_cpu_) {
        this_rq.stats.ttwu_local++;
    } else {
        for (auto& sd : topo_.cpu(this_cpu_).domains)
            if (sd->span.test(cpu)) {
                sd->stats.ttwu_wake_remote++;
                break;
            }
    }

    // ttwu_queue(): ttwu_queue_cond() decides between the wake list and a direct activation.
    rq& r = cpu_rq(cpu);
    const bool queue = ttwu_queue_cond(cpu, false);
    if (queue) {
        r.wake_list.emplace_back(&p, wake_flags);
        if (!r.ttwu_pending) {
            r.ttwu_pending = true;
            /*
             * model: __ttwu_queue_wakelist() writes ttwu_pending at the end of the
             * waker's path, after select_task_rq() read this CPU as idle and after
             * set_task_cpu(); other CPUs see the store only then. Until then they
             * still find the CPU idle and may queue their wakees on it too: the
             * select_task_rq()/enqueue race SIS_SHORT v6 was written against
             * (373e6886e274f198608fa1b5f1c254e32b43845d.1677069490.git.yu.c.chen@intel.com).
             * The window is the waker's try_to_wake_up() cost (costs.def: wakeup).
             */
            r.ttwu_pending_visible = now() + charges_.params().wakeup;
            r.ttwu_pending_writer = this_cpu_;
            r.ttwu_pending_cowriters.clear();
            lb_.lb_stats_changed(cpu);
            // An idle target must leave its C-state first (and may need the IPI too); the
            // waker sends it after its path's tracepoint writes (sched_tracepoint).
            r.ttwu_ipi_event =
                sim_.after(charges_.remote_notify_delay(r, this_cpu_, cost_model::notify::ipi) +
                               charges_.tracepoint_owed(cpu_rq(this_cpu_)),
                           event_prio::ipi, this, ev_arg(EV_TTWU_IPI, static_cast<u32>(cpu)));
        } else if (!r.ttwu_pending_seen_by(this_cpu_, now())) {
            /*
             * kernel: __ttwu_queue_wakelist(), 6.5 (sndrzt/linux-6.5 4f5cdb332210): every
             * waker that queues writes ttwu_pending = 1 (WRITE_ONCE, not only the first),
             * so a later waker that raced onto this CPU sees its own store at once too, and
             * its next select_task_rq() finds the CPU busy; the others still from the first
             * store's visibility.
             */
            r.ttwu_pending_cowriters.push_back(this_cpu_);
        }
        return true;
    }
    ttwu_queue_direct(r, p, wake_flags);
    return true;
}

/*
 * kernel: try_to_wake_up() -> ttwu_queue() without the wake list, 6.5 (sndrzt/linux-6.5
 * 4f5cdb332210) and 6.18 (gfunkmonk/linux-6.18.2 062668f4d006): the waker's CPU runs
 * select_task_rq() (its scan), set_task_cpu(), then takes the target's rq lock and
 * ttwu_do_activate() enqueues; until then p is TASK_WAKING and on no runqueue, so the
 * target's pick_next_task() and other CPUs' idle_cpu() and balancing do not see it.
 * model: the enqueue (and wakeup_preempt(), sched_wakeup, task_woken, the avg_idle
 * sample) happens when the waker's CPU has paid the work charged to it so far
 * (cpu_charges::owed_until()): the scan (ACCT_IDLE_SCAN), the sched_waking and
 * sched_migrate_task writes, the lock's wait and hold and the target's lines, and
 * whatever its path owed before the waking (EV_TTWU_DIRECT); at once when nothing is
 * owed. If the waker's CPU enters __schedule() first (the waker blocks, is preempted or
 * exits) or wakes or forks another task, the activation is done there, first
 * (ttwu_direct_flush()): the kernel's next step comes after try_to_wake_up(). Differs: an interrupt
 * reaching the waker's CPU meanwhile (a wake-list IPI, the tick, a timer) is taken at its instant;
 * the kernel's has interrupts off (pi_lock) and takes it after.
 */
void kernel::ttwu_queue_direct(rq& r, task_struct& p, int wake_flags)
{
    // The waker takes the target's rq lock and activates there itself.
    charges_.lock_and_charge(r.lock, this_cpu_, charges_.params().rq_lock_hold);
    charges_.pull_rq_lines(r, this_cpu_);
    const sim_time at = charges_.owed_until(cpu_rq(this_cpu_));
    if (at > now()) {
        p.ttwu_direct_waker = this_cpu_;
        p.ttwu_direct_flags = wake_flags;
        p.ttwu_direct_hardirq = irq_ctx_ == trace_irq_ctx::hardirq;
        p.ttwu_direct_event = sim_.at(at, event_prio::task_work, this,
                                      ev_arg(EV_TTWU_DIRECT, static_cast<u32>(p.pid)));
        cpu_rq(this_cpu_).ttwu_direct.push_back(&p);
        return;
    }
    charges_.under_lock(r.lock, this_cpu_, [&] { ttwu_do_activate(r, p, wake_flags); });
}

// model: the direct activation try_to_wake_up() deferred (EV_TTWU_DIRECT), on the waker's CPU.
void kernel::ttwu_direct_activate(task_struct& p)
{
    rq& w = cpu_rq(p.ttwu_direct_waker);
    const auto it = std::find(w.ttwu_direct.begin(), w.ttwu_direct.end(), &p);
    SIM_BUG_ON(it == w.ttwu_direct.end(), "pid {}'s direct activation is not cpu{}'s", p.pid,
               w.cpu);
    w.ttwu_direct.erase(it);
    SIM_BUG_ON(p.__state != TASK_WAKING || p.on_rq,
               "pid {} (state {:#x}, on_rq {}) changed before its direct activation", p.pid,
               p.__state, p.on_rq);
    this_cpu_ = w.cpu;
    const trace_irq_ctx ctx = irq_ctx_;
    irq_ctx_ = p.ttwu_direct_hardirq ? trace_irq_ctx::hardirq : trace_irq_ctx::task;
    const int wake_flags = p.ttwu_direct_flags;
    p.ttwu_direct_waker = -1;
    p.ttwu_direct_event = {};
    rq& r = cpu_rq(p.cpu);
    charges_.under_lock(r.lock, w.cpu, [&] { ttwu_do_activate(r, p, wake_flags); });
    irq_ctx_ = ctx;
}

/*
 * model: r's CPU is to run more of its own path (__schedule(), another try_to_wake_up() or a
 * fork's wake_up_new_task()) while wakees it activates directly still wait for the work
 * before their enqueue: in the kernel that try_to_wake_up() was over first, and the next
 * one's select_task_rq() sees its wakee queued, so they are activated now, in the order woken.
 * (A wake-all's walk reaches the next try_to_wake_up() only after a burst of the previous
 * one's cost, by then activated: workload/channel.h struct wake_walk.)
 */
void kernel::ttwu_direct_flush(rq& r)
{
    while (!r.ttwu_direct.empty()) {
        task_struct& p = *r.ttwu_direct.front();
        sim_.cancel(p.ttwu_direct_event);
        ttwu_direct_activate(p);
    }
}

/*
 * kernel: kernel/time/hrtimer.c hrtimer_set_expires_range_ns() and hrtimer_start_range_ns()
 * of a sleeper, 6.5: the soft expiry is now + ns, the hard one (the timerqueue's key, which
 * the clock event device is programmed for) `slack` later; the timer goes on the arming
 * CPU's base (switch_hrtimer_base(): the arming CPU is not idle). model: one base per CPU
 * for the sleepers (rq::hrtimer_sleepers).
 */
void kernel::schedule_timeout(task_struct& p, sim_dur ns, sim_dur slack)
{
    SIM_BUG_ON(ns < 0 || slack < 0, "negative timeout {} + {} for pid {}", ns, slack, p.pid);
    if (p.timer.valid())
        sim_.cancel(p.timer);
    hrtimer_dequeue(p);
    p.timer_cpu_awake = false;
    p.timer = sim_.after(ns + slack, event_prio::hrtimer, this,
                         ev_arg(EV_TIMER, static_cast<u32>(p.pid)));
    p.timer_softexpires = now() + ns;
    p.timer_expires = p.timer_softexpires + slack;
    p.timer_cpu = p.cpu;
    cpu_rq(p.cpu).hrtimer_sleepers.emplace(p.timer_expires, &p);
}

/*
 * kernel: kernel/time/hrtimer.c hrtimer_nanosleep(), 6.5: the range is current->timer_slack_ns,
 * 0 for an rt or deadline task (dl_task() || rt_task()).
 */
sim_dur kernel::nanosleep_slack(const task_struct& p)
{
    const bool rt_or_dl =
        p.policy == SCHED_FIFO || p.policy == SCHED_RR || p.policy == SCHED_DEADLINE;
    return rt_or_dl ? 0 : p.timer_slack_ns;
}

// kernel: kernel/time/hrtimer.c __remove_hrtimer() of a sleeper's timer, 6.5.
void kernel::hrtimer_dequeue(task_struct& p)
{
    if (p.timer_cpu < 0)
        return;
    auto& q = cpu_rq(p.timer_cpu).hrtimer_sleepers;
    auto [it, end] = q.equal_range(p.timer_expires);
    while (it != end && it->second != &p)
        ++it;
    SIM_BUG_ON(it == end, "pid {}'s hrtimer missing from cpu{}'s queue", p.pid, p.timer_cpu);
    q.erase(it);
    p.timer_cpu = -1;
}

/*
 * kernel: kernel/time/hrtimer.c __hrtimer_run_queues(), 6.5, for the sleepers' base: in
 * hard-expiry order, every timer whose soft expiry has passed runs (hrtimer_wakeup():
 * wake_up_process()); the walk stops at the first one whose soft expiry has not ("we don't
 * add extra wakeups by delaying timers that are right-of a not yet expired timer"). So an
 * hrtimer interrupt on the CPU - the tick, another sleeper's hard expiry - also ends the
 * sleeps within their slack. Differs: the deadline and rt classes' timers (deadline.cc,
 * rt.cc) are not interrupts that run this queue.
 */
void kernel::hrtimer_run_sleepers(rq& r)
{
    auto& q = r.hrtimer_sleepers;
    while (!q.empty() && q.begin()->second->timer_softexpires <= now()) {
        task_struct& p = *q.begin()->second;
        q.erase(q.begin());
        p.timer_cpu = -1;
        if (p.timer.valid()) {
            sim_.cancel(p.timer);
            p.timer = {};
        }
        p.timer_cpu_awake = false;
        this_cpu_ = r.cpu;
        // hrtimer_wakeup() runs in the timer interrupt: the tracepoints show hardirq context.
        irq_ctx_ = trace_irq_ctx::hardirq;
        try_to_wake_up(p, TASK_NORMAL, 0);
        irq_ctx_ = trace_irq_ctx::task;
    }
}

/*
 * kernel: kernel/sched/core.c resched_curr(), 6.6: the local CPU acts at its
 * next preemption point (now); a remote busy CPU after the reschedule IPI; an
 * idle one after leaving its C-state (and the IPI, unless it polls).
 * 6.18's __resched_curr(rq, TIF_NEED_RESCHED) (gfunkmonk/linux-6.18.2 57dc26c98e5e) also
 * goes on when only TIF_NEED_RESCHED_LAZY is set: it sets the full bit and sends the IPI,
 * so a lazy reschedule (rq::resched_lazy) becomes a full one here.
 */
void kernel::resched_curr(rq& r)
{
    if (r.need_resched && !r.resched_lazy)
        return;
    if (r.resched_lazy) { // preempt=lazy: the full bit joins the lazy one
        r.resched_lazy = false;
        r.resched_deferred = false; // judged again at EV_RESCHED, as a full reschedule
        if (r.resched_event.valid()) {
            sim_.cancel(r.resched_event);
            r.resched_event = {};
        }
    }
    r.need_resched = true;
    r.resched_own = r.cpu == this_cpu_ && in_task_step_;
    // The CPU running this code is awake already (an idle one is handling a wake-list
    // IPI or a timer it anticipated); any other learns of it after an IPI or its idle exit.
    // A remote one is sent after this CPU's tracepoint writes so far (sched_tracepoint); a
    // local one waits for them at EV_RESCHED.
    const sim_dur delay =
        r.cpu == this_cpu_ ? 0
                           : charges_.remote_notify_delay(r, this_cpu_, cost_model::notify::ipi) +
                                 charges_.tracepoint_owed(cpu_rq(this_cpu_));
    r.resched_event = sim_.after(delay, event_prio::resched, this, ev_arg(EV_RESCHED, r.cpu));
}

/*
 * kernel: kernel/sched/core.c resched_curr_lazy() -> __resched_curr(rq, tif), v6.18
 * (gfunkmonk/linux-6.18.2 57dc26c98e5e; PREEMPT_LAZY, "sched: Add Lazy preemption model",
 * 20241007075055.331243614@infradead.org, merged for v6.13). The fair class's reschedules
 * (fair.c: update_curr()'s slice end, check_preempt_wakeup_fair(), the hrtick's
 * entity_tick()) use it; every other resched_curr() caller keeps the full bit.
 * get_lazy_tif_bit() gives TIF_NEED_RESCHED_LAZY only with dynamic_preempt_lazy()
 * (preempt=lazy), else TIF_NEED_RESCHED: every other model calls resched_curr().
 * __resched_curr(): an idle curr always gets the full bit; nothing is done when either bit
 * is set already; on the local CPU the lazy bit is set without set_preempt_need_resched(),
 * so only a return to user mode acts on it (exit_to_user_mode_loop() tests both bits;
 * need_resched(), preempt_schedule() and irqentry_exit_cond_resched() the full one only);
 * on a remote CPU set_nr_and_not_polling() sets it and no IPI is sent (smp_send_reschedule()
 * only for TIF_NEED_RESCHED).
 * model: a local lazy reschedule goes through EV_RESCHED as resched_curr()'s does, where
 * preempt_defers() keeps it for curr's return to user mode unless curr is in user-mode work
 * (the interrupt that set it returns to user mode: the tick, a wake-list IPI, a timer), or
 * its own wakeup path was followed by user-mode work. A remote one sends nothing: curr
 * learns of it at its next return to user mode (the next burst that starts from user
 * mode after a system call, task_action::returned), when it blocks, or at its next tick
 * (sched_tick()'s promotion), or at the return of another interrupt that lands there while curr is
 * in user mode (a wake-list IPI for another wakee, a timer: irq_exit_to_user()), whichever comes
 * first.
 */
void kernel::resched_curr_lazy(rq& r)
{
    if (kc_.behaviour.preempt != preempt_model::lazy || r.curr->is_idle_task()) {
        resched_curr(r);
        return;
    }
    if (r.need_resched)
        return;
    if (r.cpu == this_cpu_) {
        resched_curr(r);
        r.resched_lazy = true;
        return;
    }
    r.need_resched = true;
    r.resched_lazy = true;
    r.resched_own = false;
    r.resched_deferred = true;
}

/*
 * kernel: kernel/sched/core.c wakeup_preempt() (check_preempt_curr() before 6.7),
 * 6.6: the class of rq->curr judges a wakee of its own class; a wakee of a higher
 * class preempts at once (the idle class always yields). No rq_clock_skip_update().
 */
void kernel::wakeup_preempt(rq& r, task_struct& p, int wake_flags)
{
    const sched_class* curr_class = r.curr->sched_class;
    if (p.sched_class == curr_class)
        curr_class->wakeup_preempt(*this, r, p, wake_flags);
    else if (sched_class_above(p.sched_class, curr_class))
        resched_curr(r);
}

/* ------------------------------------------------------------------------ */
/* __schedule                                                                 */

void kernel::sched_info_depart(rq& r, task_struct& p)
{
    r.stats.rq_cpu_time += r.clock - p.sched_info_.last_arrival;
    if (p.__state == TASK_RUNNING && p.on_rq)
        p.sched_info_.last_queued = r.clock; // preempted: waiting again
}

void kernel::sched_info_arrive(rq& r, task_struct& p)
{
    if (p.sched_info_.last_queued != NOT_QUEUED) {
        const u64 delta = r.clock - p.sched_info_.last_queued;
        p.sched_info_.run_delay += delta;
        r.stats.run_delay += delta;
        p.sched_info_.last_queued = NOT_QUEUED;
        if (p.gap_placed >= 0) { // counting only (idle_gap.h): the wait after a wakeup
            idle_gap_stats& gap = lb_.gap;
            (p.gap_placed ? gap.wait_after_idle_ns : gap.wait_after_busy_ns) += delta;
            ++(p.gap_placed ? gap.waits_after_idle : gap.waits_after_busy);
        }
    }
    p.gap_placed = -1;
    p.sched_info_.last_arrival = r.clock;
    ++p.sched_info_.pcount;
    ++r.stats.pcount;
}

/*
 * kernel: kernel/sched/core.c __pick_next_task(), 6.6. The fast path: prev is of
 * the fair class or below and every runnable task is fair: the fair class picks,
 * putting prev itself (pick_next_task_fair(rq, prev)), or the idle class does.
 * Otherwise put_prev_task_balance(): the classes from prev's down to (not
 * including) idle balance until one has a task (the rt class pulls), prev is put
 * (put_prev_task), and each class in order picks without prev. Differs: the fair
 * class has no balance hook; its newly-idle balance runs in its pick, which the
 * slow path reaches only when no class above has a task (balance_fair() would run
 * it then too). 6.12's pick_task()/put_prev_set_next_task() split is not followed:
 * the classes' picks set their task as current, as 6.6's do.
 */
task_struct* kernel::pick_next_task(rq& r, task_struct* prev)
{
    const bool scx_on = scx_enabled(*this); // 6.12: if (scx_enabled()) goto restart;
    if (!scx_on && !sched_class_above(prev->sched_class, &fair_sched_class) &&
        r.nr_running == rq_root_cfs(r).h_nr_running) {
        if (prev->is_idle_task()) // pick_next_task_fair() -> put_prev_task(prev)
            idle_sched_class.put_prev_task(*this, r, *prev);
        if (task_struct* p = fair_sched_class.pick_next_task(*this, r, prev))
            return p;
        return idle_sched_class.pick_next_task(*this, r, prev);
    }
    // put_prev_task_balance() (6.12 prev_balance(): with ext enabled, from ext at the latest)
    const sched_class* start = prev->sched_class;
    if (scx_on && sched_class_above(&ext_sched_class, start))
        start = &ext_sched_class;
    for (const sched_class* c : sched_classes) {
        if (c == &idle_sched_class)
            break;
        if (sched_class_above(c, start) || !c->balance)
            continue;
        if (c->balance(*this, r, *prev))
            break;
    }
    prev->sched_class->put_prev_task(*this, r, *prev);
    // for_each_active_class(): the fair class is skipped while ext runs every fair task
    for (const sched_class* c : sched_classes) {
        if (scx_on && c == &fair_sched_class)
            continue;
        if (task_struct* p = c->pick_next_task(*this, r, nullptr)) {
            if (p->sched_class != prev->sched_class && prev->sched_class->switch_class)
                prev->sched_class->switch_class(*this, r, *p);
            return p;
        }
    }
    SIM_BUG_ON(true, "cpu{}: no class picked a task, not even idle", r.cpu);
    return r.idle;
}

// kernel: kernel/sched/core.c queue_balance_callback(), 6.6: once per callback until run.
void kernel::queue_balance_callback(rq& r, void (*fn)(kernel&, rq&))
{
    for (const auto f : r.balance_callback)
        if (f == fn)
            return;
    r.balance_callback.push_back(fn);
}

/*
 * kernel: __schedule()'s deactivate_task() of a prev that blocks or dies (DEQUEUE_SPECIAL:
 * see docs/kernel-map.md's __schedule row), under the rq lock. model: the lock is held on
 * across the dequeue's tg->load_avg line time (cpu_charges::hold_across_lines()).
 */
void kernel::deactivate_prev(rq& r, task_struct& prev)
{
    const int dead = (prev.__state & TASK_DEAD) ? DEQUEUE_SPECIAL : 0;
    charges_.under_lock(r.lock, r.cpu,
                        [&] { deactivate_task(r, prev, DEQUEUE_SLEEP | DEQUEUE_NOCLOCK | dead); });
}

/*
 * kernel: kernel/sched/core.c __schedule(), 6.6.
 * Differs: no signal_pending check, no core scheduling.
 */
// kernel: clear_tsk_need_resched(), both bits; model: a pending EV_RESCHED goes with them.
void kernel::clear_tsk_need_resched(rq& r)
{
    r.need_resched = false;
    r.resched_deferred = false;
    r.resched_lazy = false;
    if (r.resched_event.valid()) {
        sim_.cancel(r.resched_event);
        r.resched_event = {};
    }
}

void kernel::__schedule(rq& r, bool preempt)
{
    ttwu_waker_flush(r);
    this_cpu_ = r.cpu;
    task_struct* prev = r.curr;
    stop_burst(r);
    update_rq_clock(r);
    clear_tsk_need_resched(r);
    r.stats.sched_count++;
    if (r.in_schedule) { // an earlier switch to idle is overtaken by this one
        sim_.cancel(r.in_schedule_event);
        sched_done(r);
    }
    charges_.lock_and_charge(r.lock, r.cpu, charges_.params().rq_lock_hold);

    u64* switch_count = &prev->nivcsw;
    if (!preempt && prev->__state != TASK_RUNNING && !prev->is_idle_task()) {
        deactivate_prev(r, *prev);
        switch_count = &prev->nvcsw;
    }

    task_struct* next = pick_next_task(r, prev);
    // model: a wakee switched in before its waker's sched_wakeup write (ttwu_wakeup_flush())
    if (!ttwu_writes_.empty() && next != prev)
        ttwu_wakeup_flush(-1, next->pid);

    if (next != prev) {
        ++r.nr_switches;
        if (!prev->is_idle_task())
            ++*switch_count;
        if (!prev->is_idle_task())
            sched_info_depart(r, *prev);
        if (!next->is_idle_task())
            sched_info_arrive(r, *next);
        prev->on_cpu = false;
        next->on_cpu = true;
        r.curr = next;
        curr_hint_[static_cast<std::size_t>(r.cpu)] = next;
        if (prev->is_idle_task() != next->is_idle_task()) { // SMT sibling state (smt_rate_pct)
            charges_.cm().core_busy_changed(r.cpu, !next->is_idle_task());
            lb_.lb_stats_changed(r.cpu); // idle_cpu()
            if (scx_)
                scx_update_idle(*this, r, next->is_idle_task());
        }

        const bool preempted = prev->__state == TASK_RUNNING && !prev->is_idle_task();
        if (prev->is_idle_task() && charges_.cpuidle_exit(r)) { // power:cpu_idle exit (below)
            for (auto* s : sinks_)
                s->cpu_idle({now(), PWR_EVENT_EXIT, r.cpu});
        }
        for (auto* s : sinks_)
            s->sched_switch({now(), r.cpu, prev->pid, &prev->comm, trace_state(*prev), preempted,
                             next->pid, &next->comm, prev->prio, next->prio});
        // model: its write delays next (or, to idle, the end of this __schedule()).
        charges_.charge_tracepoint(r);
        digest_mix(digest_, static_cast<u64>(now()));
        digest_mix(digest_, static_cast<u64>(r.cpu));
        digest_mix(digest_, static_cast<u64>(prev->pid));
        digest_mix(digest_, static_cast<u64>(next->pid));

        if (!prev->is_idle_task()) {
            charges_.cm().task_leaves(*prev, r.cpu, now()); // where prev leaves its working set warm
        }
        // finish_task_switch(): a dead task's class lets go of it
        if ((prev->__state & TASK_DEAD) && prev->sched_class->task_dead)
            prev->sched_class->task_dead(*this, *prev);
        if (prev->is_idle_task())
            start_tick(r);
        if (next->is_idle_task()) {
            // cpuidle: the menu governor's choice from the recent idle lengths, and its
            // stop_tick: the tick runs on until the next jiffy boundary (start_tick()).
            const s64 tick = static_cast<s64>(kc_.params.tick_nsec());
            const sim_time next_timer =
                prev->timer.valid() && prev->cpu == r.cpu ? prev->timer_expires : -1;
            const cost_model::idle_choice idle_choice = charges_.cpuidle_enter(
                r, kc_.behaviour.menu, tick, kc_.params.next_tick_after(now()), next_timer);
            const u8 idle_state = idle_choice.state;
            update_idle_core(*this, r); // pick_next_task_idle() -> update_idle_core()
            /*
             * kernel: kernel/sched/idle.c cpuidle_idle_call(), 6.5: the tick stops
             * (tick_nohz_idle_stop_tick() -> __tick_nohz_idle_stop_tick(), which calls
             * nohz_balance_enter_idle() once the tick is stopped) only when the governor's
             * stop_tick says so; else tick_nohz_idle_retain_tick() and the idle CPU keeps
             * ticking (sched_tick() below). tick_nohz_next_event()'s own refusal (a timer
             * due within a tick) needs no model of its own: menu's prediction is capped by
             * that timer (or is under RESIDENCY_THRESHOLD_NS where the timer is not read),
             * so it keeps the tick then. The timer known is the timed sleep of the task
             * leaving (cpu_charges::cpuidle_enter(), menu_gov::menu_select()).
             */
            if (idle_choice.stop_tick) {
                if (r.tick_event.valid()) {
                    sim_.cancel(r.tick_event);
                    r.tick_event = {};
                }
                nohz_balance_enter_idle(*this, r);
            } else {
                lb_.nohz.idle_entries_tick_kept++;
            }
            /*
             * kernel: drivers/cpuidle/cpuidle.c cpuidle_enter_state() and
             * kernel/sched/idle.c default_idle_call(), 6.6: trace_cpu_idle(index) before the
             * state is entered, trace_cpu_idle(PWR_EVENT_EXIT) once it is left. Differs: both
             * are emitted at the switch (entry as the idle task is switched in, exit as it is
             * switched out, after the exit latency); the kernel work still owed here
             * (idle_busy_until) is inside the period, and an idle CPU never leaves and
             * re-enters its state without a switch (no spurious wakeups, no re-selection).
             */
            for (auto* s : sinks_)
                s->cpu_idle({now(), idle_state, r.cpu});
            // Kernel work charged during this __schedule keeps the idle CPU busy.
            charges_.switch_to_idle(r);
            /*
             * kernel: kernel/sched/core.c __schedule() and idle_cpu(), 6.6: rq->curr stays prev
             * (prev->on_cpu set) until context_switch(), after deactivate_task(), the newly-idle
             * balance and the pick, so other CPUs' idle_cpu() reads this CPU as busy and a wakeup
             * of prev takes try_to_wake_up()'s on_cpu path. model: the switch is at the start of
             * that work (the charges owed at switch_to_idle()); the CPU is "in schedule" until
             * they are paid and newidle_balance()'s further passes are done (rq::newidle).
             */
            const sim_time owed_until = std::max(now(), charges_.cpu(r.cpu).idle_busy_until);
            if (owed_until > now() || r.newidle.active) {
                r.in_schedule = true;
                r.in_schedule_prev = prev->is_idle_task() ? -1 : prev->pid;
                r.in_schedule_event = sim_.at(owed_until, event_prio::task_work, this,
                                              ev_arg(EV_SCHED_DONE, static_cast<u32>(r.cpu)));
            }
        } else {
            r.newidle.active = false; // the loop stops: this rq has a task (nr_running)
            charges_.switch_in(r, *next);
            charges_.cm().task_arrives(*next, r.cpu);
        }
        start_burst(r);
        if (prev->is_idle_task() != next->is_idle_task())
            charges_.update_smt_rates(r.cpu);
    } else {
        start_burst(r);
    }
    // __balance_callbacks(), from finish_task_switch() (or __schedule()'s end without a switch)
    while (!r.balance_callback.empty()) {
        auto fn = r.balance_callback.front();
        r.balance_callback.erase(r.balance_callback.begin());
        fn(*this, r);
    }
    maybe_check(r);
}

/* ------------------------------------------------------------------------ */
/* Bursts: simulated user space running on a CPU                              */

/*
 * A burst segment: first the overhead charged to this CPU (context switch,
 * cache refill, locks, balancing, idle exit), then the task's work at the
 * rate SMT sharing allows. Progress is accounted when the segment stops.
 */
void kernel::start_burst(rq& r)
{
    if (r.curr->is_idle_task())
        return;
    r.work_event = sim_.after(charges_.begin_segment(r), event_prio::task_work, this,
                              ev_arg(EV_WORK, static_cast<u32>(r.cpu)));
}

void kernel::stop_burst(rq& r)
{
    if (!sim_.pending(r.work_event))
        return;
    sim_.cancel(r.work_event);
    r.work_event = {};
    charges_.end_segment(r);
}

void kernel::cpu_work_done(rq& r)
{
    this_cpu_ = r.cpu;
    task_struct& p = *r.curr;
    SIM_BUG_ON(p.is_idle_task(), "cpu{}: burst completion for the idle task", r.cpu);
    charges_.burst_done(r);
    r.work_event = {};
    p.work_left = 0;
    if (r.resched_deferred && p.burst_might_resched &&
        kc_.behaviour.preempt == preempt_model::voluntary) {
        // might_resched() at the burst's end: the task switches before its next step.
        p.burst_might_resched = false;
        __schedule(r, true);
        return;
    }
    if (r.resched_deferred && p.burst_preempt_enable && !r.resched_lazy &&
        (kc_.behaviour.preempt == preempt_model::full ||
         kc_.behaviour.preempt == preempt_model::lazy ||
         kc_.behaviour.preempt == preempt_model::instant)) {
        // preempt_enable() -> preempt_schedule() at the burst's end (task_action).
        p.burst_preempt_enable = false;
        __schedule(r, true);
        return;
    }
    for (int guard = 0;; ++guard) {
        SIM_BUG_ON(guard > 1'000'000, "pid {} ({}) made no progress in 1e6 steps", p.pid, p.comm);
        in_task_step_ = true;
        const task_action a = p.behaviour->step(sys_, p);
        in_task_step_ = false;
        switch (a.kind) {
        case task_action::run:
            if (a.ns <= 0) {
                // A return to user mode with no CPU time (task_context::return_point(), or
                // cpu()'s user work of no length after a call's tail): a deferred
                // reschedule's preemption point all the same (exit_to_user_mode_loop()).
                if (a.from_user && r.resched_deferred && preempt_point(r, a)) {
                    __schedule(r, true);
                    return;
                }
                continue;
            }
            p.work_left = a.ns;
            p.burst_user = a.user || a.spin;
            p.burst_spin = a.spin;
            p.burst_might_resched = a.might_resched_after;
            p.burst_nopreempt = a.nopreempt;
            p.burst_preempt_enable = a.preempt_enable_after;
            if (r.resched_deferred && preempt_point(r, a)) {
                // The deferred reschedule's preemption point: curr switches before the burst,
                // which it runs when it is picked again (work_left).
                __schedule(r, true);
                return;
            }
            start_burst(r);
            return;
        case task_action::block:
            if (p.__state == TASK_RUNNING)
                p.__state = TASK_INTERRUPTIBLE; // set_current_state()
            __schedule(r, false);
            return;
        case task_action::exit:
            do_exit(r, p);
            return;
        case task_action::yield:
            r.stats.yld_count++; // do_sched_yield()
            if (p.sched_class->yield_task)
                p.sched_class->yield_task(*this, r);
            __schedule(r, false);
            return;
        }
    }
}

/*
 * The preemption models (kernel_behaviour::preempt, the `+preempt=` kernel term).
 * kernel: v6.6 and v6.18 (kernel/sched/core.c resched_curr(), preempt_schedule(),
 * __schedule()'s callers; kernel/entry/common.c exit_to_user_mode_loop(), irqentry_exit()
 * and its irqentry_exit_cond_resched(); include/linux/kernel.h might_resched()):
 *  - resched_curr() only sets TIF_NEED_RESCHED (and sends the IPI to a remote CPU);
 *    the switch happens at a preemption point of the CPU's current task;
 *  - every model: at the return to user mode (exit_to_user_mode_loop()), including an
 *    interrupt's return to a task in user mode, and when the task blocks (schedule());
 *  - full (CONFIG_PREEMPT / preempt=full): also at preempt_enable() (preempt_schedule()),
 *    so a waker switches at the end of its try_to_wake_up() / wake-up path's locked
 *    section, and at an interrupt's return to kernel code (irqentry_exit_cond_resched());
 *  - voluntary: also at might_resched() (might_sleep(), cond_resched()) in kernel code;
 *  - none: only the points every model has (cond_resched() too, which the model's system
 *    calls do not reach: they are short);
 *  - lazy (PREEMPT_LAZY, v6.13+; read at 6.18.2, gfunkmonk/linux-6.18.2 57dc26c98e5e):
 *    full's points for TIF_NEED_RESCHED (__sched_dynamic_update() sets lazy's static calls
 *    as full's: cond_resched() and might_resched() return 0), but the fair class's
 *    reschedules set TIF_NEED_RESCHED_LAZY (resched_curr_lazy()), which only
 *    exit_to_user_mode_loop() and a blocking schedule() act on, and which sched_tick()
 *    promotes to TIF_NEED_RESCHED; a remote lazy reschedule sends no IPI.
 * model: the task layer marks each burst user or kernel mode and where a return to user
 * lies (task_action::user, from_user); a reschedule that finds curr in a kernel-mode burst
 * is deferred (rq::resched_deferred) to the next burst boundary that is a preemption point:
 * a return to user in every model; any boundary for full when the reschedule came from
 * curr's own wakeup path (the waker's wakeup cost is its own burst: the end of its
 * preempt-disabled section); for voluntary, also the end of a burst the task layer marks
 * as ending at a might_resched() (task_action::might_resched_after: the part of a pipe
 * call before its mutex_lock(), whose might_sleep() is one). Differs: voluntary's other
 * points (a socket call's lock or allocation, cond_resched() in long loops; might_fault()
 * is empty without debug configs: docs/kernels.md, lane pvaudit) are not modelled, nor
 * full's preempt_enable() points other than the waker's. A mutex spinner's burst
 * (task_action::spin) is preempted at once in every model, as the default did: it stands
 * for mutex_spin_on_owner() leaving on need_resched() (the kernel's spinner then sleeps
 * on the wait list; the model's is preempted and stays in the OSQ). A reschedule that
 * arrives while one is deferred (need_resched already set) does not shorten the
 * deferral; the tick's and the IPI's resched on a task in kernel code under full act at
 * once, as the model had (irqentry_exit_cond_resched()); the stopper (migration)
 * preempts at once. Under lazy a lazy reschedule (rq::resched_lazy) is deferred in kernel
 * code and in a mutex spin (mutex_spin_on_owner() tests need_resched(), the full bit only)
 * to a return to user mode, and acts at once in user-mode work only when it came from this
 * CPU (an interrupt's return, or a waker's own path followed by user work); a remote one
 * is deferred wherever curr is (resched_curr_lazy()); of curr's burst boundaries only one
 * after a system call's return to user mode (task_action::returned) acts on it, not one
 * between two user-mode bursts, which no kernel entry separates.
 * Every model, instant included: a burst the task layer marks task_action::nopreempt (a
 * wake-all's walk of a wait queue, which kernel/sched/wait.c __wake_up_common_lock() runs
 * under spin_lock_irqsave(), 6.5) defers a reschedule to the first later burst not so marked:
 * the walk's spin_unlock_irqrestore() (lane wakepace). Differs: interrupts still land in it.
 * A burst marked task_action::preempt_enable_after (a wake_up_q() walk's try_to_wake_up(), the
 * walk's unlock) ends at a preempt_enable(): full, lazy's full bit and instant act there,
 * before the task's next step (cpu_work_done()).
 */
bool kernel::preempt_defers(const rq& r) const
{
    // A wait queue's walk under spin_lock_irqsave() (task_action::nopreempt): every model.
    if (r.curr->burst_nopreempt)
        return true;
    const preempt_model m = kc_.behaviour.preempt;
    if (m == preempt_model::instant)
        return false; // the default
    if (r.resched_lazy) // preempt=lazy's TIF_NEED_RESCHED_LAZY (resched_curr_lazy())
        return !r.curr->burst_user || r.curr->burst_spin; // user mode: the IRQ's return
    if (r.curr->burst_user)
        return false; // curr in user mode: the interrupt's return switches
    if ((m == preempt_model::full || m == preempt_model::lazy) && !r.resched_own)
        return false; // irqentry_exit_cond_resched(): kernel code is preemptible
    return true;
}

/*
 * kernel: kernel/entry/common.c irqentry_exit() -> irqentry_exit_to_user_mode() ->
 * exit_to_user_mode_prepare() -> exit_to_user_mode_loop(), v6.18 (gfunkmonk/linux-6.18.2
 * 57dc26c98e5e; EXIT_TO_USER_MODE_WORK holds _TIF_NEED_RESCHED_LAZY since the PREEMPT_LAZY
 * series, 20241007075055.219540785@infradead.org): an interrupt taken in user mode returns
 * through the loop that calls schedule() on either bit, so a lazy bit another CPU set
 * without an IPI (resched_curr_lazy()) is acted on at the return of the next interrupt of
 * any kind that lands on the CPU while curr runs user code, not only at the tick.
 * model: the wake-list IPI's handler (sched_ttwu_pending()) and the hrtimer interrupt's
 * (hrtimer_run_sleepers()) end here; with a deferred lazy reschedule and curr in user-mode
 * work (not a mutex spin, which is kernel code) the reschedule is judged again at once
 * (EV_RESCHED, where preempt_defers() lets it act). Under every other model nothing is
 * deferred in user-mode work, so this does nothing. Differs: the tick's own return is
 * sched_tick()'s promotion; softirqs and other devices' interrupts are not modelled.
 */
void kernel::irq_exit_to_user(rq& r)
{
    if (!r.resched_lazy || !r.resched_deferred || r.curr->is_idle_task() || !r.curr->burst_user ||
        r.curr->burst_spin || r.resched_event.valid())
        return;
    r.resched_deferred = false;
    r.resched_event = sim_.after(0, event_prio::resched, this, ev_arg(EV_RESCHED, r.cpu));
}

bool kernel::preempt_point(const rq& r, const task_action& a) const
{
    if (a.nopreempt) // the walk under the wait queue's lock goes on
        return false;
    if (r.resched_lazy) // only exit_to_user_mode_loop() tests the lazy bit (and schedule())
        return a.returned; // a system call's return, not two user bursts back to back
    if (a.from_user || a.user || a.spin)
        return true;
    const preempt_model m = kc_.behaviour.preempt;
    if (m == preempt_model::instant) // deferred only by a walk's lock (burst_nopreempt)
        return true;
    return (m == preempt_model::full || m == preempt_model::lazy) && r.resched_own;
}

// kernel: kernel/exit.c do_exit() -> do_task_dead(), 6.6: TASK_DEAD then a final __schedule().
void kernel::do_exit(rq& r, task_struct& p)
{
    for (auto* s : sinks_)
        s->sched_process_exit({now(), r.cpu, p.pid, p.parent_pid, &p.comm, p.prio});
    charges_.charge_tracepoint(r);
    p.__state = TASK_DEAD;
    p.exit_time = now();
    --nr_alive_;
    __schedule(r, false);
    if (nr_alive_ == 0)
        sim_.stop();
}

const char* acct_cat_name(acct_cat c)
{
    switch (c) {
    case ACCT_CONTEXT_SWITCH:
        return "context switch";
    case ACCT_CACHE_REFILL:
        return "cache refill";
    case ACCT_LOCK_SPIN:
        return "lock spinning";
    case ACCT_LOCK_HOLD:
        return "lock holding";
    case ACCT_BALANCE:
        return "load balancing";
    case ACCT_IDLE_SCAN:
        return "idle-cpu scans";
    case ACCT_IPI:
        return "sending IPIs";
    case ACCT_TRACEPOINT:
        return "tracepoints";
    case ACCT_CARRIED:
        return "carried idle work";
    case ACCT_NR:
        break;
    }
    return "?";
}

/* ------------------------------------------------------------------------ */
/* The tick                                                                   */

void kernel::start_tick(rq& r)
{
    if (r.tick_event.valid() || r.tick_held)
        return;
    // The tick restarts on the next jiffy boundary (tick_nohz_restart()).
    // kernel: kernel/time/tick-sched.c, 6.18.2 (gfunkmonk/linux-6.18.2 062668f4d006):
    // tick_init_jiffy_update() aligns the first period to a multiple of TICK_NSEC of
    // CLOCK_MONOTONIC, tick_setup_sched_timer() offsets a CPU's only with skew_tick=, and
    // tick_nohz_restart() forwards the timer from its last tick by TICK_NSEC: every CPU ticks on
    // one grid. model: its phase against the run's time 0 is sched_params::tick_phase_ns (0 but
    // for a replay, whose trace records its kernel's: replay_tick_phase()).
    const sim_time next = kc_.params.next_tick_after(now());
    r.tick_event = sim_.at(next, event_prio::tick, this, ev_arg(EV_TICK, static_cast<u32>(r.cpu)));
}

/*
 * kernel: kernel/sched/core.c sched_tick() (scheduler_tick() before 6.10), 6.6.
 * 6.18 (gfunkmonk/linux-6.18.2 57dc26c98e5e): with dynamic_preempt_lazy(), a
 * TIF_NEED_RESCHED_LAZY already set when the tick comes is promoted by resched_curr()
 * before task_tick(); the tick's return then preempts (irqentry_exit_cond_resched(), on
 * under lazy as under full). A lazy bit that task_tick() itself sets waits for the next tick
 * (or a return to user mode: the tick's own when curr was in user mode).
 * kernel: the tick takes this rq's lock (rq_lock()) before update_rq_clock() and drops it
 * (rq_unlock()) after task_tick(), calc_global_load_tick() and the other per-tick updates,
 * before trigger_load_balance() (sched_balance_trigger() from 6.10): 5.15.0
 * (sndrzt/linux-5.15 75c6ad16ec64), 6.5 (sndrzt/linux-6.5 4f5cdb332210) and 6.18.2
 * (gfunkmonk/linux-6.18.2 062668f4d006) alike, on a busy CPU and on an idle one whose tick
 * runs. model: the lock's wait for a waker holding it, its line and rq_lock_hold are
 * charged to this CPU, and the lock is held across the tg->load_avg line time of the
 * task_tick() under it (update_cfs_group(), update_tg_load_avg()), so a waker taking it
 * meanwhile waits for both (lane rqlocks; before, the tick took no lock). Differs: the
 * other per-tick updates under the lock (thermal/hw pressure, calc_global_load_tick(),
 * task_tick_mm_cid()) have no price of their own but rq_lock_hold.
 */
void kernel::sched_tick(rq& r)
{
    this_cpu_ = r.cpu;
    charges_.lock_and_charge(r.lock, r.cpu, charges_.params().rq_lock_hold);
    charges_.under_lock(r.lock, r.cpu, [&] {
        update_rq_clock(r);
        if (r.resched_lazy)
            resched_curr(r);
        r.curr->sched_class->task_tick(*this, r, *r.curr, 0);
    });
    r.idle_balance = idle_cpu(r.cpu);
    trigger_load_balance(*this, r);
    // The tick is tick_sched_timer(), an hrtimer (the CLOCK_MONOTONIC base, run before the
    // sleepers' CLOCK_REALTIME one): its interrupt also runs the sleepers due (soft expiry
    // passed). Differs: an idle CPU's exit latency is not charged before them either.
    hrtimer_run_sleepers(r);
    this_cpu_ = r.cpu;
    if (r.curr->is_idle_task() && !r.need_resched && r.nr_running == 0 && !r.ttwu_pending) {
        /*
         * kernel: kernel/sched/idle.c do_idle(), 6.5: the tick kept by the governor woke
         * this idle CPU; with nothing to run, the loop goes round to cpuidle_idle_call()
         * and the governor selects again (menu_reflect() noted the tick wakeup), stopping
         * the tick this time if it says so. Differs: the state's exit latency before the
         * tick's work is not charged.
         */
        lb_.nohz.idle_ticks++;
        const cost_model::idle_choice c =
            charges_.cpuidle_tick(r, kc_.behaviour.menu, static_cast<s64>(kc_.params.tick_nsec()));
        for (auto* s : sinks_) {
            s->cpu_idle({now(), PWR_EVENT_EXIT, r.cpu});
            s->cpu_idle({now(), c.state, r.cpu});
        }
        if (c.stop_tick) {
            nohz_balance_enter_idle(*this, r);
            return;
        }
    }
    // A busy CPU's tick, or a kept one (also of an idle CPU about to switch to a task).
    r.tick_event = sim_.after(static_cast<s64>(kc_.params.tick_nsec()), event_prio::tick, this,
                              ev_arg(EV_TICK, static_cast<u32>(r.cpu)));
}

const char* kernel::event_kind_name(int kind)
{
    static_assert(EV_TTWU_WAKEUP == nr_event_kinds, "one name per ev_kind");
    static constexpr std::array<const char*, nr_event_kinds> names = {
        "burst",         "resched",     "tick",        "timer",      "ttwu_ipi",
        "softirq",       "ilb",         "active_lb",   "sched_done", "migration_stop",
        "ttwu_activate", "wake_up_new", "ttwu_direct", "ttwu_wakeup"};
    return names.at(static_cast<std::size_t>(kind));
}

/*
 * model: none (the simulator's own speed, issue 14). Every event's handler first touches
 * its CPU's rq, and a burst's completion the charge state and rq->curr: at 512 CPUs these
 * are last-level-cache misses (docs/performance.md). While this event's handler runs, the
 * lines of the event due next (the queue's earliest once this one is taken) are fetched.
 * A prefetch reads nothing the model decides on, and a wrong guess (the handler schedules
 * an earlier event) costs only the fetch.
 */
void kernel::prefetch_next_event() const
{
    const auto nx = sim_.queue().peek_next();
    if (nx.handler != this)
        return;
    const auto kind = static_cast<ev_kind>(nx.arg >> 32);
    if (kind != EV_WORK && kind != EV_RESCHED && kind != EV_TTWU_IPI && kind != EV_SCHED_DONE)
        return;
    const u32 v = static_cast<u32>(nx.arg);
    const rq* r = rqs_[v].get();
    __builtin_prefetch(r);
    __builtin_prefetch(&r->curr);
    if (kind == EV_WORK) {
        __builtin_prefetch(&charges_.cpu(static_cast<int>(v)));
        // r->curr from the dense copy: loading it from r would wait for r's line.
        const task_struct* p = curr_hint_[v];
        __builtin_prefetch(p);
        __builtin_prefetch(&p->behaviour);
    }
}

void kernel::fire(u64 arg)
{
    const auto kind = static_cast<ev_kind>(arg >> 32);
    const u32 v = static_cast<u32>(arg);
    prefetch_next_event();
    ++events_by_kind_[kind - 1];
    switch (kind) {
    case EV_WORK:
        cpu_work_done(cpu_rq(static_cast<int>(v)));
        break;
    case EV_RESCHED: {
        rq& r = cpu_rq(static_cast<int>(v));
        r.resched_event = {};
        /*
         * kernel: kernel/sched/idle.c do_idle(), 6.6: an idle CPU reaches schedule_idle()
         * only once the interrupt work it was woken for (flush_smp_call_function_queue()
         * -> sched_ttwu_pending(), softirqs) is done, so the wakee becomes rq->curr, and
         * PELT starts counting it as running, after that work. The model's idle CPU owes
         * that work until its cpu_charge_state::idle_busy_until: it switches then.
         */
        // An idle CPU woken in its idle loop first finds its way out of do_idle()
        // (cpu_charges::charge_do_idle_exit()).
        if (r.need_resched && r.curr->is_idle_task())
            charges_.charge_do_idle_exit(r);
        const sim_time owed_until = charges_.cpu(r.cpu).idle_busy_until;
        if (r.need_resched && r.curr->is_idle_task() && owed_until > now()) {
            r.resched_event = sim_.at(owed_until, event_prio::resched, this, arg);
            break;
        }
        /*
         * model: a busy CPU reaches the switch once its path's tracepoint writes are done
         * (sched_tracepoint: a local wakeup's sched_waking and sched_wakeup lie between
         * resched_curr() and the preemption point).
         */
        if (r.need_resched && !r.curr->is_idle_task() && charges_.tracepoint_owed(r) > 0) {
            r.resched_event =
                sim_.after(charges_.tracepoint_owed(r), event_prio::resched, this, arg);
            break;
        }
        if (r.need_resched && !r.curr->is_idle_task() && preempt_defers(r)) {
            r.resched_deferred = true; // acted on at curr's next preemption point
            break;
        }
        if (r.need_resched)
            __schedule(r, true);
        break;
    }
    case EV_TICK: {
        rq& r = cpu_rq(static_cast<int>(v));
        r.tick_event = {};
        if (r.in_schedule) { // interrupts off in __schedule(): irqs_on_after_schedule()
            r.tick_held = true;
            break;
        }
        // model: the wake-list IPI's handler is still enqueueing (an early ttwu_pending
        // clear, sched_ttwu_pending()): interrupts are off, the tick is taken after it.
        if (sim_.pending(r.ttwu_activate_event)) {
            r.tick_event = sim_.at(r.ttwu_activate_at, event_prio::tick, this, arg);
            break;
        }
        sched_tick(r);
        break;
    }
    case EV_TTWU_IPI: // the IPI's handler: hardirq context, as the tracepoints show it
        if (cpu_rq(static_cast<int>(v)).in_schedule) { // see irqs_on_after_schedule()
            cpu_rq(static_cast<int>(v)).ttwu_ipi_event = {};
            cpu_rq(static_cast<int>(v)).ttwu_ipi_held = true;
            break;
        }
        irq_ctx_ = trace_irq_ctx::hardirq;
        sched_ttwu_pending(cpu_rq(static_cast<int>(v)));
        irq_ctx_ = trace_irq_ctx::task;
        if (!sim_.pending(cpu_rq(static_cast<int>(v)).ttwu_activate_event))
            irq_exit_to_user(cpu_rq(static_cast<int>(v)));
        break;
    case EV_TTWU_ACTIVATE: // the same handler's enqueues, after an early ttwu_pending clear
        irq_ctx_ = trace_irq_ctx::hardirq;
        sched_ttwu_activate(cpu_rq(static_cast<int>(v)));
        irq_ctx_ = trace_irq_ctx::task;
        irq_exit_to_user(cpu_rq(static_cast<int>(v)));
        break;
    case EV_MIGRATION_STOP:
        migration_cpu_stop(cpu_rq(static_cast<int>(v)));
        break;
    case EV_WAKE_UP_NEW: { // the forking CPU's wake_up_new_task() reaches activate_task()
        task_struct* p = find_task_by_pid(static_cast<int>(v));
        SIM_BUG_ON(!p || p->new_task_waker < 0, "wake_up_new_task() of pid {} not pending", v);
        wake_up_new_task_activate(*p, p->new_task_waker, true);
        break;
    }
    case EV_TTWU_DIRECT: { // the waker's try_to_wake_up() reaches ttwu_do_activate()
        task_struct* p = find_task_by_pid(static_cast<int>(v));
        SIM_BUG_ON(!p || p->ttwu_direct_waker < 0, "direct activation of pid {} not pending", v);
        const bool hardirq = p->ttwu_direct_hardirq;
        const int waker = p->ttwu_direct_waker;
        ttwu_direct_activate(*p);
        if (hardirq) // an interrupt's wakeup (hrtimer_wakeup()): its return follows
            irq_exit_to_user(cpu_rq(waker));
        break;
    }
    case EV_TTWU_WAKEUP: { // a sched_wakeup written after its path's IPI send
                           // (ttwu_do_wakeup_trace())
        const auto it = std::find_if(ttwu_writes_.begin(), ttwu_writes_.end(),
                                     [v](const ttwu_wakeup_write& w) { return w.id == v; });
        SIM_BUG_ON(it == ttwu_writes_.end(), "sched_wakeup write {} not pending", v);
        const trace_sched_wakeup e = it->e;
        ttwu_writes_.erase(it);
        for (auto* s : sinks_)
            s->sched_wakeup(e);
        break;
    }
    case EV_SCHED_DONE: { // __schedule() to idle is done: prev is off the CPU (see __schedule())
        rq& r = cpu_rq(static_cast<int>(v));
        r.in_schedule_event = {};
        // newidle_balance()'s next domain, if its loop goes on (sched_balance_newidle()).
        if (sched_balance_newidle_resume(*this, r)) {
            r.in_schedule_event = sim_.at(charges_.owed_until(r), event_prio::task_work, this, arg);
            break;
        }
        sched_done(r);
        break;
    }
    case EV_TIMER:
        hrtimer_interrupt(v, arg);
        break;
    case EV_SOFTIRQ:
    case EV_ILB:
    case EV_ACTIVE_LB: // fired by lb_state (fair_balance.h)
        SIM_BUG_ON(true, "kernel: balancing event {:#x} on the kernel's handler", arg);
        break;
    }
}

/*
 * model: a sleeper's hrtimer expiry (EV_TIMER, `arg`, of pid `pid`) reaches its CPU: held
 * while that CPU has interrupts off (in __schedule() to idle, irqs_on_after_schedule(); in
 * a wake list's handler, after it as the tick), delayed by an idle CPU's exit latency,
 * else hrtimer_interrupt() runs the sleepers due.
 */
void kernel::hrtimer_interrupt(u32 pid, u64 arg)
{
    task_struct* p = find_task_by_pid(static_cast<int>(pid));
    SIM_BUG_ON(!p, "timer for unknown pid {}", pid);
    p->timer = {};
    SIM_BUG_ON(p->timer_cpu < 0, "timer of pid {} is on no CPU's queue", pid);
    rq& tr = cpu_rq(p->timer_cpu);
    if (tr.in_schedule) { // interrupts off in __schedule(): irqs_on_after_schedule()
        tr.timers_held.push_back(p->pid);
        return;
    }
    if (sim_.pending(tr.ttwu_activate_event)) { // the wake list's handler, as the tick
        p->timer = sim_.at(tr.ttwu_activate_at, event_prio::tick, this, arg); // after it
        return;
    }
    if (tr.curr->is_idle_task() && !p->timer_cpu_awake) {
        // The timer interrupt wakes an idle CPU: its handler runs after the exit latency.
        const sim_dur d = charges_.remote_notify_delay(tr, this_cpu_, cost_model::notify::timer);
        if (d > 0) {
            p->timer_cpu_awake = true;
            p->timer = sim_.after(d, event_prio::hrtimer, this, arg);
            return;
        }
    }
    // hrtimer_interrupt(): p's hard expiry has passed, so p runs, with every timer
    // before it or within its slack.
    hrtimer_run_sleepers(tr);
    irq_exit_to_user(tr);
}

void kernel::run(sim_time limit)
{
    // Any SIM_BUG_ON during the run prints the scheduler state and the seed.
    bug_context_scope scope([this] { return dump_state(); });
    sim_.run_until(limit);
    check_all();
}

/* ------------------------------------------------------------------------ */
/* Always-on invariant checks                                                 */

void kernel::maybe_check(rq& r)
{
    if (check_level_ == check_level::every) {
        check_all();
        return;
    }
    (void)r;
    if (--check_countdown_ == 0) {
        check_countdown_ = check_interval_;
        check_all();
    }
}

void kernel::check_rq(const rq& r, std::string& errs) const
{
    auto err = [&](fmt::string_view f, auto&&... args) {
        errs += fmt::format("cpu{}: ", r.cpu) + fmt::vformat(f, fmt::make_format_args(args...)) +
                "\n";
    };
    if (curr_hint_[static_cast<std::size_t>(r.cpu)] != r.curr)
        err("curr_hint_ is not rq->curr");
    if (r.root_is_root_cfs != (r.cfs.tg != nullptr))
        err("root_is_root_cfs {} with autogroup {}", r.root_is_root_cfs, r.cfs.tg != nullptr);
    // A cfs_rq's timeline and sums: a group's (or the root's with autogroup off) holds
    // tasks, the root's with autogroup on the group entities.
    auto check_cfs = [&](const cfs_rq& cfs, const char* name) {
        const bool root_of_groups = cfs.tg == nullptr && r.cfs.tg != nullptr;
        unsigned n = 0;
        u64 load = 0;
        unsigned idle = 0;
        const sched_entity* prev = nullptr;
        for (const sched_entity* se : cfs.tasks_timeline) {
            ++n;
            load += se->load.weight;
            idle += se->owner && se->owner->policy == SCHED_IDLE;
            if (prev && entity_less{}(se, prev))
                err("{}: tree out of order at vruntime {}", name, se->vruntime);
            if (!se->on_rq)
                err("{}: entity in the tree with on_rq == 0", name);
            if (se == cfs.curr)
                err("{}: curr is in the tree", name);
            if (se->cfs_rq_ != &cfs)
                err("{}: an entity in the tree has another cfs_rq", name);
            if (root_of_groups) {
                if (!se->my_q || se->owner)
                    err("{}: a task's entity on the root of the groups", name);
            } else {
                if (!se->owner) {
                    err("{}: a group entity on a group's cfs_rq", name);
                } else {
                    const task_struct& p = *se->owner;
                    if (p.cpu != r.cpu)
                        err("pid {} queued here but task_cpu is {}", p.pid, p.cpu);
                    if (!task_on_rq_queued(p))
                        err("pid {} in the tree but on_rq={}", p.pid, p.on_rq);
                }
            }
            prev = se;
        }
        if (cfs.curr && cfs.curr->on_rq) {
            ++n;
            load += cfs.curr->load.weight;
            idle += cfs.curr->owner && cfs.curr->owner->policy == SCHED_IDLE;
        }
        if (n != cfs.nr_running)
            err("{}: cfs_rq nr_running {} but {} entities queued", name, cfs.nr_running, n);
        if (idle != cfs.idle_nr_running)
            err("{}: cfs_rq idle_nr_running {} but {} SCHED_IDLE entities queued", name,
                cfs.idle_nr_running, idle);
        if (load != cfs.load.weight)
            err("{}: cfs_rq load {} but queued weights sum to {}", name, cfs.load.weight, load);
        if (!root_of_groups && cfs.h_nr_running != cfs.nr_running)
            err("{}: h_nr_running {} but nr_running {}", name, cfs.h_nr_running, cfs.nr_running);
        if (policy_->check_cfs_rq)
            policy_->check_cfs_rq(*this, cfs, errs);
    };
    const cfs_rq& root = rq_root_cfs(r);
    const task_struct* fair_curr = r.curr->sched_class == &fair_sched_class ? r.curr : nullptr;
    if (!r.cfs.tg) {
        check_cfs(r.cfs, "/");
        if (!fair_curr && r.cfs.curr)
            err("rq->curr pid {} is of the {} class but cfs_rq->curr is set", r.curr->pid,
                r.curr->sched_class->name);
        else if (fair_curr && r.cfs.curr != &fair_curr->se)
            err("rq->curr pid {} is not cfs_rq->curr", r.curr->pid);
    } else {
        // model: check_rq() of the hierarchy: each group's cfs_rq as above; on the root,
        // a group's entity is queued iff its cfs_rq has weight queued, the root's
        // h_nr_running is the sum of its groups', and rq->curr's group entity is the
        // root's curr.
        check_cfs(root, "/");
        unsigned h = 0, idle_h = 0;
        for (const task_group* tg : task_groups_) {
            const cfs_rq& g = *tg->cfs_rq_[static_cast<std::size_t>(r.cpu)];
            const sched_entity& gse = tg->se_[static_cast<std::size_t>(r.cpu)]->se;
            check_cfs(g, tg->name.c_str());
            h += g.h_nr_running;
            idle_h += g.idle_h_nr_running;
            // 6.12+: a delayed group entity stays queued with its group empty
            if (gse.on_rq != (g.load.weight != 0 || gse.sched_delayed) ||
                (gse.sched_delayed && g.load.weight != 0))
                err("/{}: group entity on_rq {} delayed {} but the group's load {}", tg->name,
                    gse.on_rq, gse.sched_delayed, g.load.weight);
            if (gse.load.weight != std::max<unsigned long>(2, tg->se_[static_cast<std::size_t>(r.cpu)]->shares >> 10))
                err("/{}: group entity weight {} is not its shares'", tg->name, gse.load.weight);
            const bool is_currs = fair_curr && fair_curr->sched_task_group == tg;
            if (g.curr && !is_currs)
                err("/{}: cfs_rq->curr set but rq->curr pid {} is not of the group", tg->name,
                    r.curr->pid);
            if (is_currs && g.curr != &fair_curr->se)
                err("rq->curr pid {} is not its group's cfs_rq->curr", r.curr->pid);
            if (is_currs && root.curr != &gse)
                err("rq->curr pid {}'s group entity is not the root's curr", r.curr->pid);
            if (root.curr == &gse && !is_currs)
                err("/{}: the root's curr but rq->curr pid {} is not of the group", tg->name,
                    r.curr->pid);
        }
        if (h != root.h_nr_running || idle_h != root.idle_h_nr_running)
            err("root h_nr_running {} / idle {} but its groups' sum to {} / {}", root.h_nr_running,
                root.idle_h_nr_running, h, idle_h);
    }
    const unsigned rt_queued = r.rt.rt_queued ? r.rt.rt_nr_running : 0;
    const unsigned dl_tasks = r.dl.dl_nr_running - (r.fair_server.on_rq ? 1 : 0);
    if (r.nr_running != root.h_nr_running + rt_queued + dl_tasks + r.scx.nr_running)
        err("nr_running {} / h_nr_running {} / rt queued {} / dl {} / ext {} disagree",
            r.nr_running, root.h_nr_running, rt_queued, dl_tasks, r.scx.nr_running);
    if (scx_)
        check_scx_rq(*this, r, errs);
    check_rt_rq(*this, r, errs);
    check_dl_rq(*this, r, errs);
    if (!r.curr->is_idle_task() && r.curr->cpu != r.cpu)
        err("rq->curr pid {} has task_cpu {}", r.curr->pid, r.curr->cpu);
    // ext tasks may wait in a shared DSQ or with the policy while a CPU idles; not in its local DSQ
    if (r.nr_running - r.scx.nr_running + r.scx.local_dsq.nr > 0 && r.curr->is_idle_task() &&
        !r.need_resched)
        err("{} runnable tasks but the CPU idles without need_resched", r.nr_running);
}

void kernel::check_all()
{
    std::string errs;
    u64 queued = 0;
    for (const auto& r : rqs_) {
        check_rq(*r, errs);
        queued += r->nr_running;
        if (!r->rt.rt_queued)
            queued += r->rt.rt_nr_running; // throttled RT tasks stay queued on their rt_rq
    }
    u64 runnable = 0;
    for (const auto& t : tasks_) {
        if (t->__state & TASK_DEAD)
            continue;
        if (task_on_rq_queued(*t))
            ++runnable;
        if (task_on_rq_queued(*t) && t->sched_class == &dl_sched_class && !t->dl.on_rq)
            ++queued; // a throttled DL task stays queued off its dl_rq until its timer
        // (a new task between wake_up_new_task()'s selection and its activate_task() is
        // TASK_RUNNING and on no runqueue, as in the kernel: task_struct::new_task_waker)
        if (t->__state == TASK_RUNNING && !task_on_rq_queued(*t) && t->new_task_waker < 0)
            errs += fmt::format("pid {} ({}) is TASK_RUNNING but on no runqueue (lost)\n", t->pid,
                                t->comm);
        if (t->__state != TASK_RUNNING && task_on_rq_queued(*t) && !t->on_cpu &&
            !t->se.sched_delayed)
            errs += fmt::format("pid {} ({}) sleeps (state {:#x}) but is queued\n", t->pid,
                                t->comm, t->__state);
    }
    if (runnable != queued)
        errs += fmt::format("{} tasks are queued but the runqueues hold {}\n", runnable, queued);
    // The balancing code's kept group sums, one CPU's groups per check, in turn.
    lb_.check_sums(static_cast<int>(check_rounds_ % rqs_.size()), errs);
    lb_.check_walk(static_cast<int>(check_rounds_++ % rqs_.size()), errs);
    if (!errs.empty())
        sim_panic("scheduler invariant violated at t={} ns:\n{}\n{}", now(), errs, dump_state());
}

} // namespace schedlab
