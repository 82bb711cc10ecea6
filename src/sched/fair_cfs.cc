// SPDX-License-Identifier: GPL-2.0-only
/*
 * CFS, as in v6.5 and earlier (docs/kernel-map.md): vruntime ordered
 * timeline, min_vruntime placement with sleeper credit, NEXT/LAST buddies,
 * wakeup granularity and tick preemption against the ideal slice.
 */
#include "sched/core.h"

#include "sim/bug.h"

#include <algorithm>

namespace schedlab {

namespace {
inline bool entity_before(const sched_entity& a, const sched_entity& b)
{
    return static_cast<s64>(a.vruntime - b.vruntime) < 0;
}
} // namespace

/*
 * kernel: kernel/sched/fair.c sched_slice() + __sched_period(), 6.5.
 * period = latency for up to nr_latency tasks, else nr * min_granularity;
 * slice = period * w / W at each level up to the root (W counting the entity
 * if it is not queued yet; for_each_sched_entity(): a task of an autogroup,
 * then its group entity on the root); with BASE_SLICE at least min_granularity, or
 * for an idle entity (se_is_idle(): SCHED_IDLE) on a cfs_rq that also holds non-idle
 * ones (!sched_idle_cfs_rq()) at least sysctl_sched_idle_min_granularity, 0.75 ms unscaled
 * (6.1-rc7 and 6.5, krr-io/linux-6.1.0 2a410d07ec5e and sndrzt/linux-6.5 f5744aac0f31;
 * not in 5.15.0, sndrzt/linux-5.15 75c6ad16ec64). The test reads the task's own cfs_rq:
 * the walk up the levels uses a cfs_rq of its own (qcfs_rq).
 */
u64 sched_slice(const kernel& k, const cfs_rq& cfs, const sched_entity& se)
{
    unsigned nr_running = cfs.nr_running;
    if (sched_feat_of(k, ALT_PERIOD))
        nr_running = rq_root_cfs(*cfs.rq_).h_nr_running;
    nr_running += se.on_rq ? 0 : 1;
    u64 slice = nr_running > k.tunables().nr_latency ? nr_running * k.tunables().min_granularity
                                                     : k.tunables().latency;

    const cfs_rq* q = &cfs;
    for (const sched_entity* s = &se; s; s = parent_entity(*q), q = &q->rq_->root_cfs) {
        u64 load = q->load.weight;
        if (!s->on_rq)
            load += s->load.weight;
        if (load)
            slice = static_cast<u64>(static_cast<unsigned __int128>(slice) * s->load.weight / load);
    }
    if (sched_feat_of(k, BASE_SLICE)) {
        const bool idle_se =
            k.config().behaviour.cfs_idle_entity_gran && se.owner && se.owner->policy == SCHED_IDLE;
        const bool sched_idle_cfs_rq = cfs.nr_running && cfs.nr_running == cfs.idle_nr_running;
        const u64 min_gran = idle_se && !sched_idle_cfs_rq ? k.tunables().idle_min_granularity
                                                           : k.tunables().min_granularity;
        slice = std::max<u64>(slice, min_gran);
    }
    return slice;
}

// kernel: kernel/sched/fair.c sched_vslice(), 6.5.
u64 sched_vslice(const kernel& k, const cfs_rq& cfs, const sched_entity& se)
{
    return calc_delta_fair(sched_slice(k, cfs, se), se);
}

/*
 * kernel: kernel/sched/fair.c place_entity(), 6.5.
 * A fork starts a vslice after min_vruntime (START_DEBIT); a wakeup gets up to
 * latency (halved by GENTLE_FAIR_SLEEPERS) of credit below min_vruntime, but
 * never moves backwards - unless it slept so long that its vruntime is stale
 * (entity_is_long_sleeper(), new in 6.5: about 104 days of vruntime).
 * 6.1 and 6.5 (not 5.15): an idle entity's threshold is min_granularity instead of
 * latency (se_is_idle(): a SCHED_IDLE task; an autogroup's entity is never idle).
 */
void place_entity_cfs(kernel& k, cfs_rq& cfs, sched_entity& se, bool initial)
{
    u64 vruntime = cfs.min_vruntime;
    if (initial && sched_feat_of(k, START_DEBIT))
        vruntime += sched_vslice(k, cfs, se);
    if (!initial) {
        const bool idle = k.config().behaviour.cfs_idle_entity_gran && se.owner &&
                          se.owner->policy == SCHED_IDLE;
        u64 thresh = idle ? k.tunables().min_granularity : k.tunables().latency;
        if (sched_feat_of(k, GENTLE_FAIR_SLEEPERS))
            thresh >>= 1;
        vruntime -= thresh;
    }
    // entity_is_long_sleeper(): 1 << 63 / NICE_0_LOAD ns of vruntime since exec_start.
    constexpr u64 sleep_time_limit = (1ULL << 63) / NICE_0_LOAD;
    const bool long_sleeper =
        se.exec_start != 0 && cfs.rq_->clock_task - se.exec_start > sleep_time_limit;
    if (long_sleeper || static_cast<s64>(vruntime - se.vruntime) > 0)
        se.vruntime = vruntime;
}

/*
 * kernel: kernel/sched/fair.c wakeup_gran(), 6.5: wakeup_granularity in se's
 * virtual time. Patch sets may scale it by curr (the stacking series'
 * SCALE_WAKEUP_GRAN, fair_stacking.cc: the patch passed curr in, as here).
 */
u64 wakeup_gran(const kernel& k, const sched_entity& curr, const sched_entity& se)
{
    u64 gran = k.tunables().wakeup_granularity;
    for (const auto hook : k.patches().wakeup_gran)
        gran = hook(k, curr, gran);
    return calc_delta_fair(gran, se);
}

/*
 * kernel: kernel/sched/fair.c wakeup_preempt_entity(), 6.5.
 * -1 if se is not ahead of curr, 1 if it is more than a wakeup granularity
 * ahead (should preempt), 0 in between. pick_next_entity_cfs() passes a buddy
 * as curr, so SCALE_WAKEUP_GRAN then tests the buddy's last run length.
 */
int wakeup_preempt_entity(const kernel& k, const sched_entity& curr, const sched_entity& se)
{
    const s64 vdiff = static_cast<s64>(curr.vruntime - se.vruntime);
    if (vdiff <= 0)
        return -1;
    if (vdiff > static_cast<s64>(wakeup_gran(k, curr, se)))
        return 1;
    return 0;
}

/*
 * kernel: kernel/sched/fair.c check_preempt_tick(), 6.5 (ideal capped at
 * sched_latency, as 6.5 does; 6.1 and 5.15 do not).
 */
void check_preempt_tick(kernel& k, cfs_rq& cfs, sched_entity& curr)
{
    u64 ideal_runtime = sched_slice(k, cfs, curr);
    if (k.config().behaviour.cfs_tick_ideal_capped)
        ideal_runtime = std::min(ideal_runtime, k.tunables().latency);
    const u64 delta_exec = curr.sum_exec_runtime - curr.prev_sum_exec_runtime;
    if (delta_exec > ideal_runtime) {
        k.resched_curr(*cfs.rq_);
        clear_buddies(cfs, curr);
        return;
    }
    if (delta_exec < k.tunables().min_granularity)
        return;
    const sched_entity* se = __pick_first_entity(cfs);
    if (!se)
        return;
    const s64 delta = static_cast<s64>(curr.vruntime - se->vruntime);
    if (delta < 0)
        return;
    if (static_cast<u64>(delta) > ideal_runtime)
        k.resched_curr(*cfs.rq_);
}

/*
 * kernel: kernel/sched/fair.c pick_next_entity(), 6.5.
 * The leftmost (or curr if it is further left), overridden by the skip, next
 * and last buddies when they are within a wakeup granularity of it.
 */
sched_entity* pick_next_entity_cfs(kernel& k, cfs_rq& cfs, sched_entity* curr)
{
    sched_entity* left = __pick_first_entity(cfs);
    if (!left || (curr && entity_before(*curr, *left)))
        left = curr;
    sched_entity* se = left;

    if (cfs.skip && cfs.skip == se) {
        sched_entity* second = nullptr;
        if (se == curr) {
            second = __pick_first_entity(cfs);
        } else {
            auto it = cfs.tasks_timeline.find(se);
            if (it != cfs.tasks_timeline.end() && ++it != cfs.tasks_timeline.end())
                second = *it;
            if (!second || (curr && entity_before(*curr, *second)))
                second = curr;
        }
        if (second && wakeup_preempt_entity(k, *second, *left) < 1)
            se = second;
    }
    if (cfs.next && wakeup_preempt_entity(k, *cfs.next, *left) < 1)
        se = cfs.next;
    else if (cfs.last && wakeup_preempt_entity(k, *cfs.last, *left) < 1)
        se = cfs.last;
    return se;
}

/*
 * kernel: kernel/sched/fair.c check_preempt_wakeup(), 6.5. The wakee
 * preempts when curr's vruntime is more than wakeup_gran ahead of it; it
 * then becomes the next buddy and curr the last buddy (when >= nr_latency
 * tasks are queued).
 */
void check_preempt_wakeup_cfs(kernel& k, rq& r, task_struct& p, int wake_flags)
{
    task_struct& curr = *r.curr;
    cfs_rq& cfs = task_cfs_rq(r, curr);
    cfs_rq& pcfs = task_cfs_rq(r, p);
    if (&curr.se == &p.se)
        return;
    const bool scale = cfs.nr_running >= k.tunables().nr_latency;
    bool next_buddy_marked = false;
    if (sched_feat_of(k, NEXT_BUDDY) && scale && !(wake_flags & WF_FORK)) {
        if (p.policy != SCHED_IDLE) // set_next_buddy(): every level, none for an idle entity
            pcfs.next = &p.se;
        set_next_buddy(pcfs, p.se);
        next_buddy_marked = true;
    }
    if (r.need_resched)
        return;
    if (curr.policy == SCHED_IDLE && p.policy != SCHED_IDLE) {
        k.resched_curr(r);
        return;
    }
    if (p.policy != SCHED_NORMAL || !sched_feat_of(k, WAKEUP_PREEMPTION))
        return;
    // find_matching_se(): curr's and p's entities on the cfs_rq their hierarchies share
    sched_entity* se = &curr.se;
    sched_entity* pse = &p.se;
    cfs_rq* match = &cfs;
    if (&cfs != &pcfs) {
        se = parent_entity(cfs);
        pse = parent_entity(pcfs);
        match = &r.root_cfs;
    }
    update_curr(k, *match);
    if (wakeup_preempt_entity(k, *se, *pse) != 1)
        return;
    if (!next_buddy_marked) { // set_next_buddy(pse): from the matched level up
        match->next = pse;
        if (match == &pcfs)
            set_next_buddy(pcfs, *pse);
    }
    k.resched_curr(r);
    if (!se->on_rq)
        return;
    if (sched_feat_of(k, LAST_BUDDY) && scale && se->owner) { // set_last_buddy(): a task's,
        cfs.last = se;                                        // every level
        if (sched_entity* gse = parent_entity(cfs))
            r.root_cfs.last = gse;
    }
}

/*
 * kernel: kernel/sched/fair.c enqueue_entity(), 6.5: a migrated or non-wakeup
 * entity's relative vruntime is renormalised to this cfs_rq's min_vruntime
 * (curr before update_curr(), the others after it); a wakeup then gets the
 * sleeper credit (place_entity()).
 */
void enqueue_entity_cfs(kernel& k, cfs_rq& cfs, sched_entity& se, int flags)
{
    const bool curr = cfs.curr == &se;
    se.cfs_rq_ = &cfs;
    const bool renorm = !(flags & ENQUEUE_WAKEUP) || (flags & ENQUEUE_MIGRATED);
    if (renorm && curr)
        se.vruntime += cfs.min_vruntime;
    update_curr(k, cfs);
    if (renorm && !curr)
        se.vruntime += cfs.min_vruntime;
    update_load_avg(k, cfs, se, UPDATE_TG | DO_ATTACH);
    if (se.my_q) { // a group entity's (calls that return at once for a task's)
        se_update_runnable(se);
        update_cfs_group_se(k, se, k.smp_processor_id());
    }
    account_entity_enqueue(cfs, se);
    if (flags & ENQUEUE_WAKEUP)
        place_entity_cfs(k, cfs, se, false);
    if (!curr)
        __enqueue_entity(k, cfs, se);
    se.on_rq = true;
    // A task's group entity's level follows in enqueue_task_fair().
}

/*
 * CFS as the fair class's policy (fair_policy.h), v6.5 and before: relative
 * vruntimes renormalised on enqueue, the sleeper credit, buddies, wakeup
 * granularity and tick preemption against the ideal slice.
 */
const fair_policy_ops cfs_policy = {
    .name = "CFS",
    .enqueue_entity = [](kernel& k, cfs_rq& cfs, sched_entity& se, int flags) {
        enqueue_entity_cfs(k, cfs, se, flags);
    },
    // kernel: kernel/sched/fair.c dequeue_entity(), 6.5: "Normalize after
    // update_curr(); which will also have moved min_vruntime if !(flags & DEQUEUE_SLEEP)".
    .dequeue_renorm = [](cfs_rq& cfs, sched_entity& se, int flags) {
        if (!(flags & DEQUEUE_SLEEP))
            se.vruntime -= cfs.min_vruntime;
    },
    // kernel: kernel/sched/fair.c task_fork_fair(), 6.5: curr's vruntime, START_DEBIT,
    // then relative for the renormalisation in enqueue_entity().
    .task_fork = [](kernel& k, cfs_rq& cfs, sched_entity& se, sched_entity* curr) {
        if (curr)
            se.vruntime = curr->vruntime;
        place_entity_cfs(k, cfs, se, true);
        se.vruntime -= cfs.min_vruntime;
    },
    // kernel: kernel/sched/fair.c migrate_task_rq_fair(), 6.5: a waking task's vruntime
    // becomes relative to the old min_vruntime.
    .migrate_task_rq = [](kernel& k, task_struct& p) {
        if (p.__state == TASK_WAKING)
            p.se.vruntime -= task_cfs_rq(k.cpu_rq(p.cpu), p).min_vruntime;
    },
    // kernel: kernel/sched/fair.c pick_next_entity(), 6.5 (5.15 and 6.1 the same): it
    // clears no buddy; set_next_entity() does, so a pick that keeps prev (no
    // set_next_entity() at that level) leaves prev's buddies set.
    .pick_next_entity = [](kernel& k, cfs_rq& cfs, sched_entity* curr) {
        return pick_next_entity_cfs(k, cfs, curr);
    },
    // set_next_entity(): 6.5's (5.15 and 6.1 the same) is fair.cc's, whose first step,
    // clear_buddies(cfs_rq, se), is every profile's: no CFS hook.
    .set_next_entity = nullptr,
    // kernel: kernel/sched/fair.c yield_task_fair(), 6.5 (5.15 and 6.1 the same):
    // clear_buddies() of curr, then the skip buddy on every level (set_skip_buddy(): the
    // task's group entity on the root too). update_curr() is the caller's (skipped by
    // the kernel for SCHED_BATCH, whose vruntime the pick's update_curr() then catches up).
    .yield_task = [](kernel& /*k*/, cfs_rq& cfs) {
        clear_buddies(cfs, *cfs.curr);
        cfs.skip = cfs.curr;
        if (sched_entity* gse = parent_entity(cfs))
            gse->cfs_rq_->skip = gse;
    },
    .check_preempt_wakeup = [](kernel& k, rq& r, task_struct& p, int wake_flags) {
        check_preempt_wakeup_cfs(k, r, p, wake_flags);
    },
    // kernel: kernel/sched/fair.c entity_tick(), 6.5.
    .entity_tick = [](kernel& k, cfs_rq& cfs, sched_entity& curr) {
        if (cfs.nr_running > 1)
            check_preempt_tick(k, cfs, curr);
    },
    .eligible = [](const kernel& /*k*/, const cfs_rq& /*cfs*/, const sched_entity& /*se*/) {
        return "-";
    },
};

} // namespace schedlab
