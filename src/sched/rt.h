// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The rt class's data (kernel/sched/sched.h struct rt_rq, rt_prio_array,
 * include/linux/sched.h struct sched_rt_entity, kernel/sched/cpupri.h struct
 * cpupri), included by sched.h: the rq holds an rt_rq, a task its
 * sched_rt_entity, the root domain the cpupri and the RT-overload mask.
 * The class itself is rt.cc.
 *
 * Not modelled: RT task groups (CONFIG_RT_GROUP_SCHED: every RT task is on
 * the rq's root rt_rq), priority inheritance (p->prio == normal_prio), the
 * RT PELT signal (avg_rt) and with it the fair class's capacity reduction
 * for RT time (scale_rt_capacity), uclamp's capacity fitness.
 */
#include "machine/cpumask.h"
#include "sim/time.h"

#include <list>
#include <map>
#include <memory>
#include <vector>

namespace schedlab {

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

/// struct cpupri: per cpupri value, the CPUs whose highest RT priority it is.
struct cpupri {
    struct vec {
        int count = 0;
        cpumask mask;
    };
    std::vector<vec> pri_to_cpu;
    std::vector<int> cpu_to_pri;
};


} // namespace schedlab
