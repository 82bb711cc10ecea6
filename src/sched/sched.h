// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The scheduler's data structures, named as in kernel/sched/sched.h and
 * include/linux/sched.h: task_struct, sched_entity, cfs_rq, rq. Fields keep
 * their kernel names so this file reads side by side with the kernel's.
 *
 * Task groups: autogroups only (no cgroups), one level under the root: each
 * session's autogroup has a cfs_rq and a group entity per CPU, the group
 * entities queue on the root cfs_rq (fair.cc, fair_pelt.cc). Not
 * modelled: cgroup hierarchies, bandwidth control, the stop class. The rt
 * class's structures are in rt.h, the deadline class's in deadline.h, the ext
 * class's in ext.h.
 */
#include "machine/cpumask.h"
#include "sched/deadline.h"
#include "sched/ext.h"
#include "sched/pelt.h"
#include "sched/rt.h"
#include "sim/event_queue.h"
#include "sim/rng.h"
#include "sim/time.h"

#include <sched.h> // glibc defines SCHED_BATCH (3) and SCHED_IDLE (5) with the uapi values

#include <list>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>
#include <string>

#ifndef SCHED_NORMAL
#define SCHED_NORMAL 0 /* include/uapi/linux/sched.h; glibc calls it SCHED_OTHER */
#endif
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6 /* include/uapi/linux/sched.h */
#endif
#ifndef SCHED_EXT
#define SCHED_EXT 7 /* include/uapi/linux/sched.h, v6.12 */
#endif

namespace schedlab {

class kernel;
class syscalls;
struct rq;
struct cfs_rq;
struct task_struct;

/* Wake flags (kernel/sched/sched.h, 6.x values; the low nibble equals SD_BALANCE_*). */
enum : int {
    WF_EXEC = 0x02,
    WF_FORK = 0x04,
    WF_TTWU = 0x08,
    WF_SYNC = 0x10,        ///< waker goes to sleep right after the wakeup
    WF_MIGRATED = 0x20,    ///< internal: task was migrated by ttwu
    WF_CURRENT_CPU = 0x40, ///< 6.6+: prefer the waker's CPU
};

/* Per-task flags (include/linux/sched.h; only those the model reads). */
enum : unsigned {
    PF_EXITING = 0x00000004, ///< set by exit_signals() at the top of do_exit()
};

/* enqueue_task / dequeue_task flags (6.6 values; the DELAYED pair from 6.12). */
enum : int {
    DEQUEUE_SLEEP = 0x01,
    DEQUEUE_SAVE = 0x02,
    DEQUEUE_MOVE = 0x04,
    DEQUEUE_NOCLOCK = 0x08,
    DEQUEUE_SPECIAL = 0x10, ///< 6.12: a state that must not see spurious wakeups (TASK_DEAD)
    DEQUEUE_DELAYED = 0x200, ///< 6.12: the final dequeue of a delayed entity
    ENQUEUE_DELAYED = 0x200, ///< 6.12: the wakeup of a delayed entity (requeue in place)
    ENQUEUE_WAKEUP = 0x01,
    ENQUEUE_RESTORE = 0x02,
    ENQUEUE_MOVE = 0x04,
    ENQUEUE_NOCLOCK = 0x08,
    ENQUEUE_HEAD = 0x10,
    ENQUEUE_REPLENISH = 0x20,
    ENQUEUE_MIGRATED = 0x40,
    ENQUEUE_INITIAL = 0x80,
};

/* task_struct::__state */
enum : unsigned {
    TASK_RUNNING = 0x0000,
    TASK_INTERRUPTIBLE = 0x0001,
    TASK_UNINTERRUPTIBLE = 0x0002,
    TASK_DEAD = 0x0080,
    TASK_WAKING = 0x0200,
    TASK_NEW = 0x0800,
    TASK_NORMAL = TASK_INTERRUPTIBLE | TASK_UNINTERRUPTIBLE,
};

/* task_struct::on_rq */
enum : int { TASK_ON_RQ_QUEUED = 1, TASK_ON_RQ_MIGRATING = 2 };


constexpr u32 NICE_0_LOAD = 1024;

/*
 * kernel: kernel/sched/clock.c sched_clock_cpu() -> sched_clock(), 6.6: rq->clock
 * (update_rq_clock()) counts nanoseconds since boot, and a benchmark starts on a
 * machine that has been up for a while. Stamps the kernel zeroes or leaves at 0
 * (se->exec_start after migrate_task_rq_fair() or before a new task first runs,
 * cfs_rq->last_update_tg_load_avg, rq->idle_stamp) therefore read as long ago:
 * task_hot() finds now - 0 far beyond sysctl_sched_migration_cost. model: the rq
 * clock is the simulation's time plus this uptime at the start of a run. Its value
 * is not a measurement: a run's decisions depend on it only through windows
 * measured from such a stamp (migration_cost 500 us, the tg ratelimit's 1 ms), so any
 * uptime beyond them schedules alike. 2^36 ns (~69 s: a machine booted a minute
 * before the run) is a multiple of PELT's 1024-ns unit, so PELT's arithmetic on
 * clock differences is unchanged by it.
 */
constexpr u64 SCHED_CLOCK_AT_START = u64{1} << 36;
/// The rq clock (sched_clock_cpu()) at simulated time t.
inline u64 sched_clock_at(sim_time t) { return static_cast<u64>(t) + SCHED_CLOCK_AT_START; }
/* include/linux/sched/prio.h: kernel priorities 0..99 are RT (lower is higher), 100..139 nice. */
constexpr int MAX_RT_PRIO = 100;
constexpr int MAX_PRIO = MAX_RT_PRIO + 40;
constexpr int DEFAULT_PRIO = MAX_RT_PRIO + 20;
inline int NICE_TO_PRIO(int nice) { return nice + DEFAULT_PRIO; }
/// kernel: include/linux/sched/rt.h rt_prio(): a priority of the RT range.
inline bool rt_prio(int prio) { return prio < MAX_RT_PRIO; }
constexpr u32 WEIGHT_IDLEPRIO = 3;
/// kernel: kernel/sched/core.c sched_prio_to_weight[], nice -20..19.
extern const u32 sched_prio_to_weight[40];

/// What a task does next, returned by its behaviour's step().
struct task_action {
    enum kind_t : u8 {
        run,   ///< consume `ns` of CPU, then call step() again
        block, ///< the task has queued itself on a wait queue: sleep until woken
        exit,  ///< do_exit()
        yield, ///< sched_yield()
    };
    /*
     * `ns` first, then the one-byte fields: 16 bytes, so a step() returns it in two
     * registers (a 24-byte task_action went through memory on every step). Build it with the
     * factories below; a positional brace-init fails to compile on `kind`.
     */
    sim_dur ns = 0;
    kind_t kind = run;
    /*
     * Where the burst runs, for the preemption models (kernel_behaviour::preempt; ignored
     * by the default `instant`): `user`: user-mode work (a compute burst), preemptible at
     * once in every model; else kernel code (a system call's part). `from_user`: the task
     * passed through its return to user mode (exit_to_user_mode_loop()) between its previous
     * burst and this one: a preemption point before this burst in every model.
     */
    bool user = true;
    bool from_user = true;
    /// The task returned from a system call to user mode right before this burst (a real
    /// exit_to_user_mode_loop(), not a boundary between two user-mode bursts): the only
    /// burst boundary where preempt=lazy acts on TIF_NEED_RESCHED_LAZY.
    bool returned = false;
    /// A mutex's optimistic spin (mutex_spin_on_owner()): the kernel's spinner leaves on
    /// need_resched() in every model; the model preempts the burst at once, as user work.
    bool spin = false;
    /// The burst ends at a might_resched() (e.g. mutex_lock()'s might_sleep()): a preemption
    /// point under voluntary, before the task's next step.
    bool might_resched_after = false;
    /*
     * The burst runs with preemption and interrupts off (a wake-all walk of a wait queue under
     * its spin_lock_irqsave(): workload/channel.h struct wake_walk): a reschedule of the CPU
     * waits, in every model, for the first burst after it that is not marked so
     * (kernel::preempt_defers()).
     */
    bool nopreempt = false;
    /// The burst ends at a preempt_enable() (a try_to_wake_up()'s end in a wake_up_q() walk,
    /// a wait queue walk's spin_unlock_irqrestore()): under full (lazy's full bit) and
    /// instant, a deferred reschedule acts there, before the task's next step.
    bool preempt_enable_after = false;

    static task_action make(kind_t k, sim_dur ns = 0)
    {
        task_action a;
        a.kind = k;
        a.ns = ns;
        return a;
    }
    static task_action cpu(sim_dur ns) { return make(run, ns); }
    static task_action sleep() { return make(block); }
    static task_action do_exit() { return make(exit); }
    static task_action do_yield() { return make(yield); }
};
static_assert(sizeof(task_action) == 16, "task_action is returned in registers");

/*
 * A task's user-space behaviour, implemented by the workload layer. step()
 * is called when the task is current on a CPU and has no CPU work left; it
 * performs the effects of the task's next operation at the current simulated
 * time (writes, wakeups, forks, through the system calls: syscalls.h) and
 * says what the task does next. It must not block the host thread or keep
 * state outside the task and the objects the workload owns.
 */
class task_behaviour {
public:
    virtual ~task_behaviour() = default;
    virtual task_action step(syscalls& sys, task_struct& p) = 0;
};

/*
 * struct sched_class (kernel/sched/sched.h): a scheduling class's hooks, called
 * by the core (core.cc) through p->sched_class at the kernel's own call sites.
 * Each class is one file defining one const table (fair.cc: fair_sched_class,
 * idle.cc: idle_sched_class) and one line in the class list (sched_classes[],
 * core.cc) in the kernel's order: stop, dl, rt, fair, ext, idle. Only the hooks
 * the model calls are here; a class leaves the optional ones (marked) null.
 * Differs: the hooks take the kernel instance as their first argument (the
 * kernel's reach every other CPU's state through globals), and a class lists
 * the policies it runs (`policies`) where sched_fork()/__setscheduler_prio()
 * test rt_prio()/dl_prio().
 */
struct sched_class {
    const char* name;
    /// Position in the kernel's class order (stop 0, dl 1, rt 2, fair 3, ext 4, idle 5):
    /// sched_class_above(a, b) is a->order < b->order.
    int order;
    /// The SCHED_* policies whose tasks this class runs, as bits (1u << policy).
    unsigned policies;

    /// activate_task() -> enqueue_task(): p becomes runnable on rq.
    void (*enqueue_task)(kernel& k, rq& rq, task_struct& p, int flags);
    /// deactivate_task() -> dequeue_task(); false: the class keeps p queued (6.12 delay).
    bool (*dequeue_task)(kernel& k, rq& rq, task_struct& p, int flags);
    /// do_sched_yield(), on rq->curr's class (optional).
    void (*yield_task)(kernel& k, rq& rq);
    /// wakeup_preempt() when p's class is rq->curr's: may p preempt rq->curr?
    void (*wakeup_preempt)(kernel& k, rq& rq, task_struct& p, int wake_flags);
    /// __pick_next_task(), in class order: the class's next task or null. prev is
    /// rq->curr, of any class.
    task_struct* (*pick_next_task)(kernel& k, rq& rq, task_struct* prev);
    /// select_task_rq(), for a task allowed on more than one CPU.
    int (*select_task_rq)(kernel& k, task_struct& p, int prev_cpu, int wake_flags);
    /// set_task_cpu(), before p's CPU changes (optional).
    void (*migrate_task_rq)(kernel& k, task_struct& p, int new_cpu);
    /// sched_tick() on rq->curr's class.
    void (*task_tick)(kernel& k, rq& rq, task_struct& curr, int queued);
    /// sched_cgroup_fork() (sched_fork() before 5.x): a new task's class state (optional).
    void (*task_fork)(kernel& k, task_struct& p);
    /// __schedule()'s switch, when another class's pick follows (put_prev_task_balance()):
    /// prev (rq->curr, of this class) stops being current.
    void (*put_prev_task)(kernel& k, rq& rq, task_struct& prev);
    /// put_prev_task_balance(), from prev's class down to (not including) idle, until one
    /// returns true (it has a task to run); the rt class pulls here (optional).
    bool (*balance)(kernel& k, rq& rq, task_struct& prev);
    /// ttwu_do_activate() and wake_up_new_task(), after wakeup_preempt() (optional).
    void (*task_woken)(kernel& k, rq& rq, task_struct& p);
    /// finish_task_switch(), after the final switch away from a dead task (optional).
    void (*task_dead)(kernel& k, task_struct& p);
    /// __pick_next_task(), on prev's class, when next is of another class (6.12's
    /// switch_class; the ext class's cpu_release) (optional).
    void (*switch_class)(kernel& k, rq& rq, task_struct& next);
};

extern const sched_class dl_sched_class;   ///< deadline.cc
extern const sched_class rt_sched_class;   ///< rt.cc
extern const sched_class fair_sched_class; ///< fair.cc
extern const sched_class ext_sched_class;  ///< ext.cc
extern const sched_class idle_sched_class; ///< idle.cc

inline bool sched_class_above(const sched_class* a, const sched_class* b)
{
    return a->order < b->order;
}

struct load_weight {
    u32 weight = NICE_0_LOAD;
};

/// struct sched_entity: a task's (owner set) or an autogroup's on the root (my_q set).
struct sched_entity;
/// Orders a cfs_rq's timeline: vruntime (wrap-safe), then insertion sequence.
struct entity_less {
    bool operator()(const sched_entity* a, const sched_entity* b) const;
};
/// cfs_rq::tasks_timeline: an ordered set, not an rbtree.
using entity_timeline = std::set<sched_entity*, entity_less>;

struct sched_entity {
    load_weight load;
    u64 vruntime = 0;
    u64 deadline = 0;     ///< EEVDF virtual deadline
    s64 vlag = 0;         ///< EEVDF lag; with RUN_TO_PARITY also the deadline at pick time
    u64 slice = 0;        ///< EEVDF request size
    /// v6.17+ (6.18 profile): the vruntime up to which curr is protected from a pick
    /// (set_protect_slice(), protect_slice()); replaces the vlag stash of RUN_TO_PARITY.
    u64 vprot = 0;
    /// v6.12 PLACE_REL_DEADLINE: dequeued but not asleep, so deadline holds deadline - vruntime
    bool rel_deadline = false;
    u64 exec_start = 0;
    u64 sum_exec_runtime = 0;
    u64 prev_sum_exec_runtime = 0;
    u64 nr_migrations = 0;
    bool on_rq = false;
    /// 6.12 DELAY_DEQUEUE: slept while ineligible, still queued until picked or woken.
    bool sched_delayed = false;
    cfs_rq* cfs_rq_ = nullptr; ///< cfs_rq_of(se); trailing _ only to avoid the type's name
    u64 tree_seq = 0;         ///< insertion order: breaks vruntime ties FIFO, deterministically
    task_struct* owner = nullptr; ///< container_of(se, task_struct, se); null for a group's
    cfs_rq* my_q = nullptr;       ///< se->my_q: a group entity's own cfs_rq (null for a task's)
    sched_avg avg;                ///< PELT (a group entity's is in tg_sched_entity::avg)
    /* SIS_SHORT v6 (dequeue_task_fair): CPU time between voluntary sleeps */
    u64 dur_avg = 0;
    u64 prev_sleep_sum_runtime = 0;
};

/// A spinlock or a contended cache line, as the cost model sees it: who held it
/// last (transfer cost by distance) and until when (waiters spin in order).
struct contended_lock {
    sim_time busy_until = 0;
    int last_cpu = -1;
    u64 acquisitions = 0;
    u64 contended = 0;  ///< acquisitions that had to wait
    sim_dur wait_total = 0;
};

/// model: list_add of a task's list node at pos, where the kernel's node is part of the task
/// (se->group_node, p->shared_runq_node) and so costs no allocation: the first of the
/// list's spare nodes (the last one unlinked, its value stale) is relinked at pos and set to
/// p, a new node allocated only when there is none. Returns p's node. rq->cfs_tasks takes
/// its nodes from rq::fair_spares (sched/fair.cc), a SHARED_RUNQ shard from its own spares.
inline std::list<task_struct*>::iterator list_add_spare_node(std::list<task_struct*>& list,
                                                             std::list<task_struct*>::iterator pos,
                                                             std::list<task_struct*>& spare,
                                                             task_struct* p)
{
    if (spare.empty())
        return list.insert(pos, p);
    const std::list<task_struct*>::iterator node = spare.begin();
    *node = p;
    list.splice(pos, spare, node);
    return node;
}

/// SHARED_RUNQ (David Vernet, 2023): one FIFO of runnable, not running,
/// unpinned fair tasks per shard of an LLC, under its own spinlock.
struct shared_runq_shard {
    std::list<task_struct*> list;
    /// model: the list nodes unlinked or popped off this shard, the last one first, for
    /// its next pushes (the kernel's p->shared_runq_node is part of the task, so a push
    /// allocates nothing; sched/fair_shared_runq.cc). Their values are stale.
    std::list<task_struct*> spare;
    contended_lock lock;
};

struct shared_runq {
    std::vector<shared_runq_shard> shards;
};

/// Counters of the shared runqueue, for the run summary and tests.
struct shared_runq_stats {
    u64 pushes = 0;
    u64 removals = 0;       ///< unlinked at pick, sleep or migration (__dequeue_entity)
    u64 pops = 0;           ///< heads taken by a newly idle CPU
    u64 pulls_moved = 0;    ///< ... that were then moved to it
    u64 pops_not_moved = 0; ///< ... that were no longer movable (running or gone)
    u64 head_not_allowed = 0;
    /// model: the shard locks' holds (shard_lock_hold and the list nodes' lines), from the
    /// acquire on, as lockstat's holdtime counts them (the lock's own line comes before)
    sim_dur hold_ns = 0;
    sim_dur lock_line_ns = 0; ///< ... the lock's own line's transfers, before the holds
    u64 node_lines = 0;       ///< list nodes' lines taken from another CPU under a shard lock
    sim_dur node_line_ns = 0; ///< ... their waits and transfers (part of hold_ns)
    /// model: what the shard locks' waits, holds and lines added to the holds of the rq
    /// locks held across them (pushes, unlinks, pops; hold_rq_across_shard())
    sim_dur rq_hold_ns = 0;
};

/// Who called update_tg_load_avg() (kernel/sched/fair.c, 6.5): update_load_avg() after
/// attach_entity_load_avg() (DO_ATTACH) or detach_entity_load_avg() (DO_DETACH), or on
/// "decayed" with UPDATE_TG (a period crossed; _REMOVED when removed load was folded in
/// too), and __update_blocked_fair().
enum tg_write_site {
    TG_WRITE_ATTACH,
    TG_WRITE_DETACH,
    TG_WRITE_DECAY,
    TG_WRITE_REMOVED,
    TG_WRITE_BLOCKED,
    TG_WRITE_SITES
};

/// struct task_group, reduced to what the model reads: the group's global
/// load_avg, updated from each CPU's cfs_rq by update_tg_load_avg().
struct tg_sched_entity;
struct task_group {
    std::string name;
    /// tg->cfs_rq[cpu] and tg->se[cpu]: the group's queue and entity on each CPU. The
    /// first autogroup's are part of each rq (rq::cfs, rq::tg_se); a later one owns its
    /// own (kernel::autogroup_create()).
    std::vector<cfs_rq*> cfs_rq_;
    std::vector<tg_sched_entity*> se_;
    std::vector<std::unique_ptr<cfs_rq>> own_cfs_rq;
    std::vector<std::unique_ptr<tg_sched_entity>> own_se;
    long load_avg = 0;        ///< atomic_long_t tg->load_avg
    u64 load_avg_updates = 0; ///< writes to tg->load_avg
    u64 load_avg_reads = 0;       ///< update_cfs_group() reads of tg->load_avg
    u64 load_avg_read_misses = 0; ///< ... that missed (another CPU wrote since this CPU read)
    sim_dur load_avg_read_wait = 0; ///< ... waiting for a transfer in flight
    u64 load_avg_llc_hits = 0;    ///< ... of them served by a copy in the reader's LLC
    /// update_tg_load_avg() by its caller (tg_write_site): calls that reached the 1/64
    /// test (past the ratelimit), and the writes among them. Statistics only.
    u64 load_avg_site_calls[TG_WRITE_SITES] = {};
    u64 load_avg_site_writes[TG_WRITE_SITES] = {};
    u64 load_avg_ratelimited = 0; ///< calls the v6.7 ratelimit returned from
    contended_lock load_avg_line; ///< the cache line holding tg->load_avg (writes take it)
    /// The line's version each LLC holds (by sd_llc_id): the write count when a CPU of
    /// that LLC last fetched or wrote it, and when that copy arrived there.
    struct llc_copy {
        u64 version = ~0ULL;
        sim_time ready = 0;
    };
    std::vector<llc_copy> load_avg_llc;
};

/// sched_info::last_queued of a task not waiting on a runqueue (the kernel uses 0; the
/// model's clock can be 0 at a real enqueue).
inline constexpr u64 NOT_QUEUED = ~0ULL;

/// struct sched_info (CONFIG_SCHED_INFO): run_delay and pcount.
struct sched_info {
    u64 pcount = 0;       ///< times run on a CPU
    u64 run_delay = 0;    ///< ns spent runnable but waiting
    u64 last_arrival = 0; ///< when last run on a CPU
    u64 last_queued = 0;  ///< when last queued (NOT_QUEUED when not waiting; set by new_task())
};

struct task_struct {
    int pid = 0;
    int tgid = 0;
    std::string comm;
    unsigned __state = TASK_NEW;
    unsigned flags = 0; ///< p->flags: PF_EXITING only
    int on_rq = 0;
    bool on_cpu = false;
    int cpu = 0;                ///< task_cpu(p)
    int wake_cpu = 0;
    int recent_used_cpu = 0;
    int policy = SCHED_NORMAL;
    int static_prio_nice = 0;   ///< nice value, -20..19
    cpumask cpus_mask;
    int nr_cpus_allowed = 0;
    const struct sched_class* sched_class = nullptr; ///< set by sched_fork() / init_idle()
    sched_entity se;

    /* wakee tracking (record_wakee / wake_wide) */
    task_struct* last_wakee = nullptr;
    u32 wakee_flips = 0;
    u64 wakee_flip_decay_ts = 0;

    /* accounting */
    u64 nvcsw = 0;  ///< voluntary context switches
    u64 nivcsw = 0; ///< involuntary context switches
    sched_info sched_info_;
    sim_time start_time = 0;
    sim_time exit_time = -1;
    int parent_pid = 0;
    /// p->sched_task_group: the task's autogroup (its session's, signal->autogroup), null
    /// with autogroup off (the root group). Inherited at fork; setsid() makes a new one.
    task_group* sched_task_group = nullptr;

    /* placement */
    std::list<task_struct*>::iterator group_node; ///< position in rq->cfs_tasks (se->group_node)
    bool on_cfs_tasks = false;
    struct shared_runq_shard* shard = nullptr;        ///< SHARED_RUNQ: the shard listing p, if any
    std::list<task_struct*>::iterator shard_node;     ///< p->shared_runq_node
    /// model: the cache line of p->shared_runq_node (part of p's task_struct): which CPU
    /// wrote it last (a push, unlink or pop of p or of a neighbour in its shard's list) and
    /// when that write was done (fair_shared_runq.cc, shard_write_nodes())
    contended_lock shard_node_line;
    sim_time shard_visible = 0; ///< model: when the pushing CPU reached the push (others see p from then)
    /// model: the CPU whose wake_up_new_task() has selected p's CPU and not yet reached
    /// activate_task() (kernel::EV_WAKE_UP_NEW), -1 none
    int new_task_waker = -1;
    /// model: the CPU whose try_to_wake_up() activates p directly (ttwu_queue() without the
    /// wake list) once it has paid the work before ttwu_do_activate() (kernel::EV_TTWU_DIRECT,
    /// ttwu_direct_event), -1 none; p is TASK_WAKING and on no runqueue until then
    int ttwu_direct_waker = -1;
    int ttwu_direct_flags = 0;        ///< ... its wake_flags
    bool ttwu_direct_hardirq = false; ///< ... the waker ran in an interrupt (hrtimer_wakeup())
    event_id ttwu_direct_event;

    /* the cache model: the task's working set and where it was left warm */
    u32 footprint_kib = 16;       ///< hot data touched per run (task_opts.footprint_kib)
    int last_ran_cpu = -1;        ///< CPU of the last run, -1 before the first
    sim_time last_ran_end = 0;    ///< when that run ended
    u64 core_clock_at_leave = 0;  ///< footprint_clock of that CPU's core when it left
    u64 llc_clock_at_leave = 0;   ///< footprint_clock of that CPU's LLC when it left

    /* the simulated user-space program */
    std::unique_ptr<task_behaviour> behaviour;
    sim_dur work_left = 0;     ///< CPU work of the current burst not yet done
    bool burst_user = false;   ///< the current burst is user-mode work (task_action::user)
    bool burst_might_resched = false; ///< it ends at a might_resched() (task_action)
    bool burst_spin = false;   ///< it is a mutex spin (task_action::spin)
    bool burst_nopreempt = false; ///< it runs with preemption off (task_action::nopreempt)
    bool burst_preempt_enable = false; ///< it ends at a preempt_enable() (task_action)
    rng_stream rng{0, ""};     ///< this task's own random stream ("task/<pid>")
    event_id timer;            ///< pending hrtimer (timed sleep), if any
    sim_time timer_expires = 0;     ///< its hard expiry: when `timer` was set to fire
    sim_time timer_softexpires = 0; ///< its soft expiry (hrtimer_set_expires_range_ns())
    int timer_cpu = -1;             ///< the CPU whose rq::hrtimer_sleepers holds it, -1 if none
    /// p->timer_slack_ns: init/init_task.c's 50 us, inherited at fork (no prctl model).
    sim_dur timer_slack_ns = 50'000;
    bool timer_cpu_awake = false; ///< the timer's CPU has been woken from idle for it
    void* wait_token = nullptr; ///< workload's wait-queue bookkeeping (opaque to sched)
    int rt_priority = 0;        ///< SCHED_FIFO/RR priority 1..99 (sched_param), 0 otherwise
    int prio = DEFAULT_PRIO;    ///< p->prio (== normal_prio: no PI): 99 - rt_priority, or 120 + nice
    sched_rt_entity rt;         ///< the rt class's (p->rt); after the fair path's fields
    sched_dl_entity dl;         ///< the deadline class's (p->dl)
    sched_ext_entity scx;       ///< the ext class's (p->scx)
    /// model: counting only (idle_gap.h): its last wakeup chose a CPU with no task (1) or
    /// with one (0), until it next runs; -1 none. Last: the hot fields keep their offsets.
    s8 gap_placed = -1;

    bool is_idle_task() const { return pid == 0; }
    int task_nice() const { return static_prio_nice; }
};

inline bool entity_less::operator()(const sched_entity* a, const sched_entity* b) const
{
    const s64 d = static_cast<s64>(a->vruntime - b->vruntime);
    if (d != 0)
        return d < 0;
    return a->tree_seq < b->tree_seq;
}

/*
 * model: the kernel's se->run_node and se->group_node are part of the entity, so
 * enqueueing allocates nothing. The model's timelines are std::sets and rq->cfs_tasks
 * std::lists: the nodes their dequeues free are kept here, one store for the whole
 * kernel, the last one freed first, for the next enqueue on any CPU (sched/fair.cc), as
 * malloc would hand back the chunk freed last, without malloc's work. A node carries no
 * order (a set's position follows from the key, a list's from the splice), and its
 * stored value is stale until it is used again.
 */
struct fair_spare_nodes {
    std::vector<entity_timeline::node_type> run_nodes;
    std::list<task_struct*> group_nodes;
};

/// struct cfs_rq: an autogroup's on one CPU (tasks queue there), or a CPU's root (rq::root_cfs
/// with autogroup on, where the group entities queue; rq::cfs with autogroup off).
struct cfs_rq {
    load_weight load{0};         ///< sum of queued weights, curr included
    unsigned nr_running = 0;     ///< queued entities, curr included
    unsigned h_nr_running = 0;
    unsigned idle_h_nr_running = 0;
    /// 6.12+ DELAY_DEQUEUE: sched_delayed tasks among h_nr_running (6.12's h_nr_delayed, the
    /// kernel's h_nr_queued - h_nr_runnable from v6.13), on the task's cfs_rq and the root.
    unsigned h_nr_delayed = 0;
    unsigned idle_nr_running = 0; ///< queued entities that are se_is_idle() (SCHED_IDLE tasks)
    u64 min_vruntime = 0;
    s64 avg_vruntime = 0;        ///< EEVDF: sum of (v_i - min_vruntime) * w_i over the tree
    u64 avg_load = 0;            ///< EEVDF: sum of w_i over the tree
    entity_timeline tasks_timeline;
    sched_entity* curr = nullptr;
    sched_entity* next = nullptr;
    sched_entity* last = nullptr; ///< CFS LAST_BUDDY
    sched_entity* skip = nullptr;
    rq* rq_ = nullptr;
    u64 tree_seq = 0;
    sched_avg avg; ///< PELT of the whole runqueue (running and blocked entities)
    struct {
        int nr = 0;
        unsigned long load_avg = 0, util_avg = 0, runnable_avg = 0;
    } removed;                          ///< load of tasks that migrated away while asleep
    task_group* tg = nullptr;           ///< the group whose per-CPU queue this is (null: a root)
    tg_sched_entity* my_se = nullptr;   ///< tg->se[cpu]: the group's entity on the root (null: a root)
    long tg_load_avg_contrib = 0;       ///< this cfs_rq's share last added to tg->load_avg
    u64 tg_load_avg_seen = ~0ULL;       ///< the line's write count when this CPU last read it
    u64 last_update_tg_load_avg = 0;    ///< ns: for the tg load_avg ratelimit
    // CONFIG_FAIR_GROUP_SCHED, this cfs_rq being the group's (tg != nullptr):
    bool propagate = false;             ///< cfs_rq->propagate: load to push to the group entity
    long prop_runnable_sum = 0;         ///< cfs_rq->prop_runnable_sum (unweighted load_sum)
    unsigned long h_load = 0;           ///< cfs_rq->h_load (update_cfs_rq_h_load())
    u64 last_h_load_update = ~0ULL;     ///< jiffies of h_load; ~0: never
};

/*
 * An autogroup's entity on one CPU (tg->se[cpu]), queued on the root cfs_rq
 * (rq::root_cfs) while its group has a task queued on this CPU. `se` is the
 * entity the root's timeline holds (vruntime, deadline, lag, load.weight:
 * the shares scaled down), placed and picked by the policy's code for task entities
 * (fair.cc); its PELT, shares and runnable weight are kept here
 * (fair_pelt.cc). With autogroup off (rq::cfs.tg == nullptr) none is used and
 * rq::cfs is the root.
 */
struct tg_sched_entity {
    unsigned long shares = 1024UL << 10; ///< se->load.weight, scaled (init_tg_cfs_entry(): NICE_0_LOAD)
    sched_avg avg;
    unsigned long runnable_weight = 0;   ///< se->runnable_weight: the group's h_nr_running
    /// The entity on the root's timeline (se.my_q: the group's cfs_rq): se.load.weight is
    /// se_weight(se), scale_load_down(shares); se.on_rq whether it is queued on the root.
    sched_entity se;
    unsigned long weight() const { return se.load.weight; }
};

/// Per-CPU schedstat counters (/proc/schedstat v15 "cpu" line).
struct rq_schedstat {
    u64 yld_count = 0;
    u64 sched_count = 0;
    u64 sched_goidle = 0;
    u64 ttwu_count = 0;
    u64 ttwu_local = 0;
    u64 rq_cpu_time = 0;
    u64 run_delay = 0;
    u64 pcount = 0;
    /* patch-set counters (not in /proc/schedstat), counted on the waker's CPU */
    u64 sis_short_affine = 0;    ///< SIS_SHORT hook A: wake_affine_idle chose the short waker's CPU
    u64 sis_short_target = 0;    ///< SIS_SHORT hook B: select_idle_cpu kept target without a scan
    u64 wakee_flips_coupled = 0; ///< COUPLE_WAKEE_FLIPS: flips a heavy waker gave its wakee
};

/// Kinds of kernel time the cost model charges to a CPU (its accounting categories).
enum acct_cat : int {
    ACCT_CONTEXT_SWITCH = 0,
    ACCT_CACHE_REFILL,
    ACCT_LOCK_SPIN,  ///< waiting for contended locks and cache lines
    ACCT_LOCK_HOLD,  ///< holding them, cache-line transfers included
    ACCT_BALANCE,    ///< load balancing: scans and moves (periodic, newly idle, NOHZ)
    ACCT_IDLE_SCAN,  ///< select_idle_cpu() probes of the wakeup path, find_idlest_cpu()'s reads
    ACCT_IPI,        ///< sending IPIs (wake lists, reschedules, idle wakeups)
    ACCT_TRACEPOINT, ///< tracepoints' ring-buffer writes (sched_tracepoint: a traced kernel)
    ACCT_CARRIED,    ///< kernel work begun while idle, finished after a task was picked
    ACCT_NR,
};
const char* acct_cat_name(acct_cat c);

/// Where a CPU's time went (ns), measured as the time elapses, so that
/// task + spent + idle == the run's duration for every CPU.
struct cpu_time_accounting {
    sim_dur task = 0;                 ///< tasks' own work (at SMT-shared speed)
    sim_dur spent[ACCT_NR] = {};      ///< kernel time spent while a task was current
    sim_dur idle_work[ACCT_NR] = {};  ///< kernel time charged while the CPU idled
    sim_dur idle_exit = 0;            ///< C-state exit latencies (part of idle time)
    sim_dur carried = 0;              ///< idle_work that was still running when a task was picked
};

/// struct root_domain: one for the whole machine (no cpusets / exclusive partitions).
struct root_domain {
    bool overload = false;     ///< some CPU had >= 2 runnable tasks (sticky; see add_nr_running)
    bool overutilized = false; ///< EAS only: kept for the record, not consulted
    /* the rt class's (rt.cc) */
    struct cpupri cpupri;
    cpumask rto_mask;        ///< RT-overloaded CPUs
    int rto_count = 0;
    int rto_cpu = -1;        ///< RT_PUSH_IPI: where the push IPI chain is, -1 when not running
    int rto_loop = 0;
    int rto_loop_next = 0;
    bool rto_loop_start = false;
    /* the deadline class's (deadline.cc) */
    struct dl_bw dl_bw;
    struct cpudl cpudl;
    cpumask dlo_mask;        ///< DL-overloaded CPUs
    int dlo_count = 0;
};

/// struct rq: one per CPU. Cache-line aligned as the kernel's per-CPU runqueues are
/// (DEFINE_PER_CPU_SHARED_ALIGNED): every rq then splits into lines at the same offsets, so
/// fields read together (curr, idle, clock, ttwu_pending) share one line on every CPU;
/// malloc's 16-byte alignment put them on two lines on most (docs/performance.md, speed9).
struct alignas(64) rq {
    int cpu = 0;
    unsigned nr_running = 0;
    root_domain* rd = nullptr; ///< the root domain this CPU is attached to (the kernel's one)
    /// model: autogroup on, so root_cfs is the root (rq_root_cfs()); kept on the first line
    /// with nr_running and root_cfs's counters, which select_idle_cpu()'s scan reads
    /// (sched_idle_cpu()) on every CPU it probes (docs/performance.md, lane speed11)
    bool root_is_root_cfs = false;
    cfs_rq root_cfs;              ///< with autogroup on, rq->cfs (the root): the group entities'
    cfs_rq cfs;                   ///< with autogroup on, the first autogroup's (tg->cfs_rq[cpu])
    tg_sched_entity tg_se;        ///< with autogroup on, the first autogroup's tg->se[cpu]
    task_struct* curr = nullptr;
    task_struct* idle = nullptr;
    u64 clock = SCHED_CLOCK_AT_START;      ///< sched_clock_at(now()) at the last update_rq_clock()
    u64 clock_task = SCHED_CLOCK_AT_START; ///< clock less IRQ and steal time (none modelled)
    bool need_resched = false;   ///< TIF_NEED_RESCHED of rq->curr
    /// need_resched waits for curr's next preemption point (kernel_behaviour::preempt)
    bool resched_deferred = false;
    /// the reschedule was asked by curr's own path (a waker's try_to_wake_up()), not an IRQ
    bool resched_own = false;
    /// preempt=lazy: need_resched is TIF_NEED_RESCHED_LAZY only (resched_curr_lazy()), not
    /// yet promoted to TIF_NEED_RESCHED (by the tick or a resched_curr())
    bool resched_lazy = false;
    u64 next_balance = 0;
    bool ttwu_pending = false;
    /// model: when the waker's write of ttwu_pending becomes visible to other CPUs,
    /// and which CPU wrote it (it sees its own store at once); see try_to_wake_up().
    sim_time ttwu_pending_visible = 0;
    int ttwu_pending_writer = -1;
    u64 nr_switches = 0;
    std::vector<std::pair<task_struct*, int>> wake_list; ///< TTWU_QUEUE: (task, wake_flags) awaiting the IPI
    rng_stream sched_rnd_state{0, ""}; ///< kernel: per-CPU sched_rnd_state (sched_rng(), NI_RANDOM): "sched_rng/<cpu>"
    event_id ttwu_ipi_event;
    /// model: __schedule() to idle still running on this CPU: the kernel's rq->curr
    /// is still prev (on_cpu) while it dequeues, balances newly idle and picks, so
    /// idle_cpu() is false until the work charged there is done (in_schedule_event
    /// clears both); see kernel::__schedule() and kernel::try_to_wake_up().
    bool in_schedule = false;
    int in_schedule_prev = -1; ///< pid of prev, on_cpu until then (-1: none)
    event_id in_schedule_event;
    /// model: the interrupts that reached this CPU during in_schedule, with interrupts off
    /// in the kernel's __schedule(): taken when it ends (kernel::irqs_on_after_schedule())
    bool ttwu_ipi_held = false; ///< the wake list's IPI (EV_TTWU_IPI)
    bool tick_held = false;     ///< the tick (EV_TICK)
    std::vector<int> timers_held; ///< sleepers' hrtimers, by pid (EV_TIMER)
    /// model: newidle_balance()'s domain loop still to run (sched_balance_newidle()).
    /// The kernel checks nr_running and ttwu_pending after each domain's pass (from
    /// v6.10, the next domain's should_we_balance() does), so a wakeup that arrives
    /// during a pass ends the loop there; the model runs the first
    /// pass in the pick and each further one when this CPU has done the work before it
    /// (sched_balance_newidle_resume(), from the end of in_schedule).
    struct newidle_walk {
        bool active = false;
        std::size_t next = 0; ///< index in the CPU's domains of the next one to consider
        u64 curr_cost = 0;    ///< the passes' cost so far
        u64 next_balance = 0; ///< the loop's next_balance so far
    } newidle;
    u64 idle_stamp = 0;
    u64 avg_idle = 0;
    u64 max_idle_balance_cost = 0;
    u64 wake_stamp = 0;     ///< SIS_PROP: jiffies of the last wake_avg_idle update
    u64 wake_avg_idle = 0;  ///< SIS_PROP: avg_idle / 2 at the last wakeup, aged per jiffy
    bool idle_balance = false; ///< the tick found the CPU idle (rebalance as CPU_IDLE)
    /// kernel: rq->has_blocked_load (CONFIG_NO_HZ_COMMON): set at each tick stop
    /// (nohz_balance_enter_idle()), cleared by update_blocked_averages() when no cfs_rq of
    /// the CPU has load or util left to decay; read by update_nohz_stats()
    bool has_blocked_load = false;
    /// kernel: rq->last_blocked_load_update_tick: the jiffy of the last
    /// update_blocked_averages() (update_blocked_load_tick()); update_nohz_stats() runs it
    /// again only in a later jiffy
    u64 last_blocked_load_update_tick = 0;
    bool active_balance = false;       ///< an active balance's stopper is queued on this CPU
    int push_cpu = 0;                  ///< ... and pushes a task to this CPU
    task_struct* exec_migrate = nullptr; ///< sched_exec()'s stopper is queued here for this task
    int exec_dest_cpu = -1;              ///< ... and moves it to this CPU (migration_arg)
    std::list<task_struct*> cfs_tasks; ///< fair tasks on this rq, most recently run first
    struct fair_spare_nodes* fair_spares = nullptr; ///< the kernel's (kernel::fair_spares())
    shared_runq* srq = nullptr;        ///< SHARED_RUNQ: this CPU's LLC's queue (rq->cfs.shared_runq)
    int shard_idx = 0;                 ///< and its shard (rq->cfs.shard)
    rq_schedstat stats;
    contended_lock lock;         ///< rq->__lock

    /* execution of the current task's burst */
    event_id work_event;     ///< end of the current burst (or the step() call)
    event_id resched_event;  ///< pending __schedule() for need_resched
    event_id tick_event;     ///< next scheduler tick (stopped while idle: NOHZ)
    /// model: the hrtimer base's timerqueue of the timed sleeps armed on this CPU, by hard
    /// expiry (equal expiries in the order armed, as timerqueue_add()'s rbtree keeps them).
    std::multimap<sim_time, task_struct*> hrtimer_sleepers;
    /// kernel_behaviour::ttwu_pending_clear_early: the wake list sched_ttwu_pending() took,
    /// ttwu_pending already cleared, enqueued once the rq lock's wait and the first wakee's
    /// share of its hold are over (ttwu_activate_event, at ttwu_activate_at)
    std::vector<std::pair<task_struct*, int>> ttwu_activating;
    event_id ttwu_activate_event;
    sim_time ttwu_activate_at = 0;
    /// model: the wakees this CPU's try_to_wake_up() activates directly, in the order woken,
    /// each once this CPU has paid the work before its enqueue (task_struct::ttwu_direct_waker)
    std::vector<task_struct*> ttwu_direct;

    struct rt_rq rt; ///< the rt class's runqueue
    /// queue_balance_callback(): run at the end of __schedule() (rt: push_rt_tasks)
    std::vector<void (*)(kernel&, struct rq&)> balance_callback;
    /// lib/cpumask.c's per-CPU distribute_cpu_mask_prev (cpumask_any_and_distribute(), rt.cc)
    int distribute_cpu_mask_prev = 0;
    struct dl_rq dl;              ///< the deadline class's runqueue
    sched_dl_entity fair_server;  ///< v6.12+: the fair class's dl_server (deadline.cc)
    struct scx_rq scx; ///< the ext class's (rq->scx); last: the fair path's fields keep their offsets
    /// model: the CPUs other than ttwu_pending_writer that wrote ttwu_pending (queued here)
    /// before that first store was visible to them: each sees its own store at once too
    /// (after the fair path's fields, keeping their offsets)
    std::vector<int> ttwu_pending_cowriters;

    /// model: whether `cpu` reads rq->ttwu_pending as set at `now` (kernel::idle_cpu()): a
    /// CPU that wrote it sees its own store at once, the others from ttwu_pending_visible.
    bool ttwu_pending_seen_by(int cpu, sim_time now) const
    {
        if (!ttwu_pending)
            return false;
        if (now >= ttwu_pending_visible || cpu == ttwu_pending_writer)
            return true;
        for (const int c : ttwu_pending_cowriters)
            if (c == cpu)
                return true;
        return false;
    }
};

/// rq->cfs, the root cfs_rq: rq::root_cfs with autogroup on (the group entities queue
/// there), rq::cfs with autogroup off (the tasks queue there).
inline cfs_rq& rq_root_cfs(rq& r)
{
    return r.root_is_root_cfs ? r.root_cfs : r.cfs;
}
inline const cfs_rq& rq_root_cfs(const rq& r)
{
    return r.root_is_root_cfs ? r.root_cfs : r.cfs;
}

/// kernel: kernel/sched/sched.h task_cfs_rq() on the rq of task_cpu(p): p's autogroup's
/// cfs_rq on r's CPU (rq::cfs for the first autogroup and with autogroup off).
inline cfs_rq& task_cfs_rq(rq& r, const task_struct& p)
{
    task_group* tg = p.sched_task_group;
    return tg ? *tg->cfs_rq_[static_cast<std::size_t>(r.cpu)] : r.cfs;
}

/// kernel: kernel/sched/fair.c parent_entity(): a task's group entity on the root (null
/// for a task of the root and for a group entity, the hierarchy being one level deep).
inline sched_entity* parent_entity(const cfs_rq& cfs) { return cfs.my_se ? &cfs.my_se->se : nullptr; }

// kernel: kernel/sched/sched.h add_nr_running(), 6.6: a second runnable task sets rd->overload.
inline void add_nr_running(rq& r, unsigned count)
{
    const unsigned prev_nr = r.nr_running;
    r.nr_running = prev_nr + count;
    if (prev_nr < 2 && r.nr_running >= 2)
        r.rd->overload = true;
}

// kernel: kernel/sched/sched.h sub_nr_running(), 6.6 (no tick dependency: the model's tick
// stops only on an idle CPU).
inline void sub_nr_running(rq& r, unsigned count) { r.nr_running -= count; }

inline bool task_on_rq_queued(const task_struct& p) { return p.on_rq == TASK_ON_RQ_QUEUED; }

} // namespace schedlab
