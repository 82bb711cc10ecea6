// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The rt class's data (kernel/sched/sched.h struct rt_rq, rt_prio_array,
 * include/linux/sched.h struct sched_rt_entity, kernel/sched/cpupri.h struct
 * cpupri), included by sched.h: the rq holds an rt_rq, a task its
 * sched_rt_entity, the root domain the cpupri and the RT-overload mask.
 * The class itself is rt.cc: free functions of the kernel's names, which the
 * core reaches only through rt_sched_class (sched.h); its kernel-wide state is
 * struct rt_state, which the kernel owns (kernel::rt()).
 *
 * Not modelled: RT task groups (CONFIG_RT_GROUP_SCHED: every RT task is on
 * the rq's root rt_rq), priority inheritance (p->prio == normal_prio), the
 * RT PELT signal (avg_rt) and with it the fair class's capacity reduction
 * for RT time (scale_rt_capacity), uclamp's capacity fitness.
 */
#include "machine/cpumask.h"
#include "sim/event_queue.h"
#include "sim/time.h"

#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace schedlab {

class kernel;
struct rq;
struct task_struct;

/// struct sched_rt_entity (a task's; no group entities).
struct sched_rt_entity {
    std::list<task_struct*>::iterator run_list; ///< position in its priority's queue
    bool on_rq = false;                         ///< on_rt_rq()
    bool on_pushable = false;                   ///< in rq->rt.pushable_tasks
    std::multimap<int, task_struct*>::iterator pushable_node; ///< p->pushable_tasks
    unsigned time_slice = 0;                    ///< SCHED_RR: ticks left of its timeslice
};

/// struct rt_prio_array: a FIFO per RT priority and the bitmap of the non-empty ones.
struct rt_prio_array {
    u64 bitmap[2] = {0, 1ULL << (100 - 64)}; ///< bit MAX_RT_PRIO (100) set as the search delimiter
    std::list<task_struct*> queue[100];
};

/// struct rt_rq: the rq's root RT runqueue.
struct rt_rq {
    /// Out of line (2.4 KB of list heads): struct rq stays small for the fair path's scans.
    std::unique_ptr<rt_prio_array> active = std::make_unique<rt_prio_array>();
    unsigned rt_nr_running = 0;
    unsigned rr_nr_running = 0;
    struct {
        int curr = 99; ///< highest queued RT priority (MAX_RT_PRIO - 1 when none, 5.11+)
        int next = 99; ///< highest pushable one
    } highest_prio;
    unsigned rt_nr_migratory = 0; ///< <= 6.6: queued RT tasks allowed on more than one CPU
    unsigned rt_nr_total = 0;     ///< <= 6.6
    bool overloaded = false;      ///< this CPU is in rd->rto_mask
    /// pushable_tasks: queued, not running, migratable RT tasks in priority order
    /// (a plist: FIFO among equal priorities, as multimap's insertion at the upper end).
    std::multimap<int, task_struct*> pushable_tasks;
    bool rt_queued = false;  ///< the RT tasks count in rq->nr_running (not throttled)
    u64 rt_time = 0;         ///< RT runtime consumed in this period
    bool rt_throttled = false;
    u64 rt_runtime = 0;      ///< sched_rt_runtime_us, in ns (RUNTIME_INF: no bandwidth limit)
    u64 nr_throttled = 0;    ///< model: times this rt_rq was throttled
};

constexpr u64 RUNTIME_INF = ~0ULL;

/// kernel/sched/cpupri.h: CPUPRI_NORMAL (0) holds idle and fair CPUs, 1..99 the RT priorities.
constexpr int CPUPRI_NR_PRIORITIES = 101;
constexpr int CPUPRI_INVALID = -1;
constexpr int CPUPRI_NORMAL = 0;
constexpr int CPUPRI_HIGHER = 100; ///< v5.11+ (b13772f8135c): a CPU running DL tasks

/// struct cpupri: per cpupri value, the CPUs whose highest RT priority it is.
struct cpupri {
    struct vec {
        int count = 0;
        cpumask mask;
    };
    std::vector<vec> pri_to_cpu;
    std::vector<int> cpu_to_pri;
};

/*
 * The rt class's kernel-wide state, owned by the kernel (kernel::rt()):
 * def_rt_bandwidth's period timer and the events of rd->rto_push_work.
 */
class rt_state final : private event_handler {
public:
    explicit rt_state(kernel& k) : k_(k) {}
    rt_state(const rt_state&) = delete;
    rt_state& operator=(const rt_state&) = delete;

    bool rt_period_active = false; ///< def_rt_bandwidth.rt_period_active
    event_id rt_period_timer;      ///< def_rt_bandwidth.rt_period_timer
    u64 pushes = 0;                ///< model: RT tasks moved by push_rt_task()
    u64 pulls = 0;                 ///< model: ... and by pull_rt_task()

    /// The event argument of the period timer; rto_push_work's is its CPU.
    static constexpr u64 period_timer = ~0ULL;
    event_handler* handler() { return this; }

private:
    void fire(u64 arg) override;
    kernel& k_;
};

/* ---- kernel/sched/cpupri.c ---- */
void cpupri_init(kernel& k);
void cpupri_set(cpupri& cp, int cpu, int newpri);
bool cpupri_find(const cpupri& cp, const task_struct& p, cpumask* lowest_mask);
/// lib/cpumask.c: the per-CPU state is rq->distribute_cpu_mask_prev.
int cpumask_any_and_distribute(kernel& k, const cpumask& a, const cpumask& b);
/// model: the common tail of find_lowest_rq() (rt.c) and find_later_rq() (deadline.c),
/// which the kernel writes out twice: a CPU of `mask` near task_cpu, or -1.
int find_cpu_near(kernel& k, const cpumask& mask, int task_cpu);

/* ---- kernel/sched/rt.c: the class hooks (rt_sched_class) ---- */
void enqueue_task_rt(kernel& k, rq& rq, task_struct& p, int flags);
bool dequeue_task_rt(kernel& k, rq& rq, task_struct& p, int flags);
void yield_task_rt(kernel& k, rq& rq);
void wakeup_preempt_rt(kernel& k, rq& rq, task_struct& p, int wake_flags);
task_struct* pick_next_task_rt(kernel& k, rq& rq);
void put_prev_task_rt(kernel& k, rq& rq, task_struct& p);
int select_task_rq_rt(kernel& k, task_struct& p, int cpu, int wake_flags);
void task_tick_rt(kernel& k, rq& rq, task_struct& p, int queued);
bool balance_rt(kernel& k, rq& rq, task_struct& prev);
void task_woken_rt(kernel& k, rq& rq, task_struct& p);

/* ---- kernel/sched/rt.c: the rt_rq ---- */
void init_rt_rq(const kernel& k, rt_rq& rt);
void check_preempt_equal_prio(kernel& k, rq& rq, task_struct& p);
void set_next_task_rt(kernel& k, rq& rq, task_struct& p, bool first);
void update_curr_rt(kernel& k, rq& rq);
void enqueue_rt_entity(kernel& k, rq& rq, task_struct& p, int flags);
void dequeue_rt_entity(kernel& k, rq& rq, task_struct& p);
void enqueue_top_rt_rq(kernel& k, rq& rq);
void dequeue_top_rt_rq(kernel& k, rq& rq);
void inc_rt_tasks(kernel& k, rq& rq, task_struct& p);
void dec_rt_tasks(kernel& k, rq& rq, task_struct& p);
void requeue_task_rt(rq& rq, task_struct& p, bool head);
unsigned sched_rr_timeslice(const kernel& k);

/* ---- kernel/sched/rt.c: bandwidth ---- */
bool rt_bandwidth_enabled(const kernel& k);
bool sched_rt_runtime_exceeded(kernel& k, rq& rq);
void start_rt_bandwidth(kernel& k);
void sched_rt_period_timer(kernel& k);
bool do_sched_rt_period_timer(kernel& k, int overrun);

/* ---- kernel/sched/rt.c: push and pull across the root domain ---- */
void enqueue_pushable_task(kernel& k, rq& rq, task_struct& p);
void dequeue_pushable_task(kernel& k, rq& rq, task_struct& p);
void rt_set_overload(kernel& k, rq& rq);
void rt_clear_overload(kernel& k, rq& rq);
void update_rt_migration(kernel& k, rq& rq);
int find_lowest_rq(kernel& k, task_struct& p);
rq* find_lock_lowest_rq(kernel& k, task_struct& p, rq& rq);
bool push_rt_task(kernel& k, rq& rq);
void push_rt_tasks(kernel& k, rq& rq);
void pull_rt_task(kernel& k, rq& this_rq);
int rto_next_cpu(kernel& k);
void tell_cpu_to_push(kernel& k, rq& rq);
void queue_rto_push_work(kernel& k, int cpu);
void rto_push_irq_work_func(kernel& k, rq& rq);

/// The rt class's invariants on one CPU (the kernel's check_rq() calls it).
void check_rt_rq(const kernel& k, const rq& rq, std::string& errs);

} // namespace schedlab
