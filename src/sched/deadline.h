// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The deadline class's data (include/linux/sched.h struct sched_dl_entity,
 * kernel/sched/sched.h struct dl_rq, struct dl_bw, kernel/sched/cpudeadline.h
 * struct cpudl), included by sched.h: a task holds its sched_dl_entity (p->dl),
 * the rq its dl_rq (rq->dl) and, in profiles with one, the fair server
 * (rq->fair_server), the root domain the bandwidth (rd->dl_bw), the cpudl and
 * the DL-overload mask. The class itself is deadline.cc, whose functions are
 * declared at the end of this file.
 *
 * Not modelled: GRUB (SCHED_FLAG_RECLAIM) and with it the active utilization
 * (running_bw, this_bw, the inactive timer); priority inheritance (pi_se is
 * the entity itself); SCHED_FLAG_DL_OVERRUN; the DL PELT signal; capacity
 * fitness on asymmetric machines; changing a task's policy after creation.
 */
#include "machine/cpumask.h"
#include "sim/event_queue.h"
#include "sim/time.h"

#include <map>
#include <string>
#include <vector>

namespace schedlab {

class kernel;
struct rq;
struct task_struct;

/// include/linux/sched/deadline.h: MAX_DL_PRIO; a DL task's p->prio is MAX_DL_PRIO - 1.
constexpr int MAX_DL_PRIO = 0;
/// kernel/sched/sched.h: BW_SHIFT (bandwidths are fractions of 1 << 20), DL_SCALE.
constexpr int BW_SHIFT = 20;
constexpr int DL_SCALE = 10;

/// struct sched_dl_entity: a task's (p->dl) or a server's (rq->fair_server).
struct sched_dl_entity {
    /* the parameters (sched_setattr()) */
    u64 dl_runtime = 0;  ///< maximum runtime per instance
    u64 dl_deadline = 0; ///< relative deadline
    u64 dl_period = 0;   ///< separation of two instances
    u64 dl_bw = 0;       ///< dl_runtime / dl_period, << BW_SHIFT
    u64 dl_density = 0;  ///< dl_runtime / dl_deadline, << BW_SHIFT
    /* the current instance */
    s64 runtime = 0;  ///< remaining runtime
    u64 deadline = 0; ///< absolute deadline
    bool dl_throttled = false;
    bool dl_yielded = false;
    /* the dl_server's (v6.12, a110a81c52a9 "sched/deadline: Deferrable dl server") */
    bool dl_server = false;
    bool dl_server_active = false;
    bool dl_defer = false;
    bool dl_defer_armed = false;
    bool dl_defer_running = false;

    bool on_rq = false; ///< on_dl_rq(): in its dl_rq's tree
    std::multimap<u64, sched_dl_entity*>::iterator rb_node; ///< position in dl_rq->root
    bool on_pushable = false;
    std::multimap<u64, task_struct*>::iterator pushable_node; ///< p->pushable_dl_tasks
    event_id dl_timer; ///< the replenishment (or deferral) timer
    task_struct* owner = nullptr; ///< dl_task_of(); null for a server
    rq* rq_ = nullptr;            ///< a server's rq (dl_se->rq)
    u64 nr_throttled = 0;         ///< model: times throttled at runtime exhaustion
};

/// struct dl_rq: the rq's EDF queue (an rbtree by absolute deadline; a multimap here,
/// FIFO among equal deadlines as the kernel's rb_add_cached() inserts to the right).
struct dl_rq {
    std::multimap<u64, sched_dl_entity*> root;
    unsigned dl_nr_running = 0; ///< queued entities, a server's too (rq->nr_running counts tasks only)
    struct {
        u64 curr = 0; ///< earliest queued deadline (0: none)
        u64 next = 0; ///< earliest pushable one
    } earliest_dl;
    unsigned dl_nr_migratory = 0; ///< <= v6.6
    bool overloaded = false;      ///< this CPU is in rd->dlo_mask
    std::multimap<u64, task_struct*> pushable_dl_tasks_root;
};

/// struct dl_bw: the root domain's admission state.
struct dl_bw {
    s64 bw = 0;       ///< the limit per CPU (-1: none), << BW_SHIFT
    u64 total_bw = 0; ///< admitted bandwidth, << BW_SHIFT
};

/// struct cpudl: per CPU the earliest deadline queued there (a max-heap in the kernel),
/// and the CPUs without DL tasks.
struct cpudl {
    std::vector<u64> dl;
    std::vector<bool> valid;
    cpumask free_cpus;
};

/// SCHED_DEADLINE parameters as sched_setattr() takes them (ns; period 0: = deadline).
struct sched_dl_attr {
    u64 sched_runtime = 0;
    u64 sched_deadline = 0;
    u64 sched_period = 0;
};

/*
 * The kernel-wide state of the deadline class, owned by the kernel (kernel::dl()):
 * the timers' event handler, cpumask_any_and_distribute()'s state lives in the
 * kernel already.
 */
class dl_state final : public event_handler {
public:
    explicit dl_state(kernel& k) : k_(k) {}
    void fire(u64 arg) override;
    u64 dl_pushes = 0;   ///< DL tasks moved by push_dl_task()
    u64 dl_pulls = 0;    ///< ... and by pull_dl_task()
    u64 fair_server_runs = 0; ///< model: times the fair server picked a fair task
    static constexpr u64 SERVER_BIT = 1ULL << 32;

private:
    kernel& k_;
};

/* ---- deadline.cc ---- */
/// kernel: kernel/sched/sched.h to_ratio(): runtime / period << BW_SHIFT.
u64 to_ratio(u64 period, u64 runtime);
/// init_dl_rq(), init_dl_bw(), cpudl_init() and, in profiles with it, the fair servers.
void init_dl(kernel& k);
/// sched_setattr()'s checks and admission for a new SCHED_DEADLINE task (p's
/// affinity set): "" and p's parameters set and its bandwidth added, or the error
/// ("-EINVAL: ...", "-EPERM: ...", "-EBUSY: ...").
std::string sched_dl_setattr(kernel& k, task_struct& p, const sched_dl_attr& attr);
/// Runs every invariant of rq->dl; appends what is wrong to errs.
void check_dl_rq(const kernel& k, const rq& r, std::string& errs);
/* The fair server (v6.12+, kernel_behaviour::fair_server): the fair class's calls. */
/// enqueue_task_fair(): the first fair task of the rq starts the server (idle time first).
void dl_server_start(kernel& k, rq& r);
/// dequeue_task_fair(): the last one leaving stops it.
void dl_server_stop(kernel& k, rq& r);
/// update_curr(): fair runtime, run on behalf of the server or not, is charged to it.
void dl_server_update(kernel& k, rq& r, s64 delta_exec);
/// put_prev_task_idle(): idle time counts as the server's background time.
void dl_server_update_idle_time(kernel& k, rq& r, task_struct& p);

} // namespace schedlab
