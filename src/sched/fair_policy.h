// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * The fair class's two policies: EEVDF (fair_eevdf.cc, v6.6 on) and CFS
 * (fair_cfs.cc, v6.5 and before), behind one table of hooks. The fair class's
 * mechanism (fair.cc: the timeline, update_curr, the class hooks; PELT,
 * placement and balancing) calls kernel::policy() where the two kernels'
 * versions of a function differ; the profile chooses the table once, in the
 * kernel's constructor (kernel_config::params.policy). Hooks marked optional
 * are null where that kernel has nothing at the call site.
 */
#include "sim/time.h"

#include <string>

namespace schedlab {

class kernel;
struct rq;
struct cfs_rq;
struct sched_entity;
struct task_struct;

/* kernel: fair.c update_load_avg() flags */
enum : int { UPDATE_TG = 0x1, SKIP_AGE_LOAD = 0x2, DO_ATTACH = 0x4, DO_DETACH = 0x8 };

struct fair_policy_ops {
    const char* name; ///< "EEVDF" or "CFS", for the state dump

    /* entity placement */
    /// enqueue_entity(): place se (by its lag, or by min_vruntime with the sleeper credit).
    void (*enqueue_entity)(kernel& k, cfs_rq& cfs, sched_entity& se, int flags);
    /// dequeue_entity(), before se leaves the timeline: keep its lag (and, 6.12's
    /// PLACE_REL_DEADLINE, a non-sleep dequeue's relative deadline) (optional).
    void (*dequeue_lag)(kernel& k, cfs_rq& cfs, sched_entity& se, int flags);
    /// dequeue_entity(), after the accounting: a relative vruntime for a
    /// dequeue that is not a sleep, renormalised where se is enqueued again (optional).
    void (*dequeue_renorm)(cfs_rq& cfs, sched_entity& se, int flags);
    /// task_fork_fair(): a new task's place on its parent's cfs_rq.
    void (*task_fork)(kernel& k, cfs_rq& cfs, sched_entity& se, sched_entity* curr);
    /// migrate_task_rq_fair(): before p leaves its CPU (optional).
    void (*migrate_task_rq)(kernel& k, task_struct& p);
    /// __enqueue_entity() / __dequeue_entity(): se enters or leaves the timeline (optional).
    void (*timeline_add)(kernel& k, cfs_rq& cfs, const sched_entity& se);
    void (*timeline_sub)(kernel& k, cfs_rq& cfs, const sched_entity& se);
    /// update_min_vruntime(): min_vruntime moved forward by delta (optional).
    void (*min_vruntime_advanced)(cfs_rq& cfs, s64 delta);
    /// reweight_entity() of a queued se, before its weight changes (optional; without it only
    /// curr's runtime is committed): commit the runtime, take se out of the timeline's sums,
    /// keep what the re-placement reads; returns V for reweight_entity().
    u64 (*reweight_dequeue)(kernel& k, cfs_rq& cfs, sched_entity& se);
    /// reweight_entity(): se's load.weight has just changed from old_weight: adjust its
    /// virtual times and, if queued, put it back in the timeline's sums (optional; a group
    /// entity's only). avruntime: what reweight_dequeue() returned (0 if se is not queued).
    void (*reweight_entity)(kernel& k, cfs_rq& cfs, sched_entity& se, u32 old_weight,
                            u64 avruntime);

    /* pick */
    /// pick_next_task_fair(): the entity to run (curr: cfs_rq->curr if still queued).
    sched_entity* (*pick_next_entity)(kernel& k, cfs_rq& cfs, sched_entity* curr);
    /// set_next_entity(): se, still queued, becomes cfs_rq->curr (optional; EEVDF's
    /// RUN_TO_PARITY stash; clear_buddies() is fair.cc's, every profile's).
    void (*set_next_entity)(kernel& k, cfs_rq& cfs, sched_entity& se);
    /// yield_task_fair().
    void (*yield_task)(kernel& k, cfs_rq& cfs);
    /// dequeue_task_fair() of a sleeping task: true to keep it queued, delayed (optional).
    bool (*delay_dequeue)(kernel& k, rq& rq, task_struct& p);

    /* preemption check */
    /// check_preempt_wakeup_fair(): may p, just woken onto rq, preempt rq->curr?
    void (*check_preempt_wakeup)(kernel& k, rq& rq, task_struct& p, int wake_flags);

    /* tick */
    /// update_curr(): after curr's vruntime advanced (optional).
    void (*update_curr)(kernel& k, cfs_rq& cfs, sched_entity& curr);
    /// entity_tick(): after the tick's update_curr and PELT update (optional).
    void (*entity_tick)(kernel& k, cfs_rq& cfs, sched_entity& curr);

    /* checks and the state dump (debug.cc) */
    /// check_rq(): the policy's own sums over the timeline; appends errors (optional).
    void (*check_cfs_rq)(const kernel& k, const cfs_rq& cfs, std::string& errs);
    /// print_cfs_rq(): the policy's cfs_rq fields (optional).
    void (*print_cfs_rq)(const kernel& k, const cfs_rq& cfs, std::string& out);
    /// print_rq()'s eligible column: "yes", "no" or "-".
    const char* (*eligible)(const kernel& k, const cfs_rq& cfs, const sched_entity& se);
};

extern const fair_policy_ops eevdf_policy; ///< fair_eevdf.cc
extern const fair_policy_ops cfs_policy;   ///< fair_cfs.cc

} // namespace schedlab
