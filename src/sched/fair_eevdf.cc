// SPDX-License-Identifier: GPL-2.0-only
/*
 * EEVDF, as first merged in v6.6 (v6.6 fair.c; docs/kernel-map.md).
 *
 * Virtual time V is the load-weighted average vruntime of the queued
 * entities (curr included when on_rq):
 *
 *   V = v0 + sum((v_i - v0) * w_i) / sum(w_i),  v0 = min_vruntime
 *
 * An entity is eligible when its lag V - v_i >= 0, i.e. it has received less
 * service than it is due. Among eligible entities the one with the earliest
 * virtual deadline vd_i = ve_i + r_i / w_i runs.
 */
#include "sched/core.h"

#include "sim/bug.h"

#include <fmt/format.h>

#include <algorithm>

namespace schedlab {

namespace {
inline s64 entity_key(const cfs_rq& cfs, const sched_entity& se)
{
    return static_cast<s64>(se.vruntime - cfs.min_vruntime);
}
} // namespace

// kernel: kernel/sched/fair.c avg_vruntime_add(), 6.6.
void avg_vruntime_add(cfs_rq& cfs, const sched_entity& se)
{
    const s64 w = se.load.weight;
    cfs.avg_vruntime += entity_key(cfs, se) * w;
    cfs.avg_load += static_cast<u64>(w);
}

// kernel: kernel/sched/fair.c avg_vruntime_sub(), 6.6.
void avg_vruntime_sub(cfs_rq& cfs, const sched_entity& se)
{
    const s64 w = se.load.weight;
    cfs.avg_vruntime -= entity_key(cfs, se) * w;
    cfs.avg_load -= static_cast<u64>(w);
}

// kernel: kernel/sched/fair.c avg_vruntime(), 6.6: the division rounds towards -inf.
u64 avg_vruntime(const cfs_rq& cfs)
{
    const sched_entity* curr = cfs.curr;
    s64 avg = cfs.avg_vruntime;
    s64 load = static_cast<s64>(cfs.avg_load);
    if (curr && curr->on_rq) {
        const s64 w = curr->load.weight;
        avg += entity_key(cfs, *curr) * w;
        load += w;
    }
    if (load) {
        if (avg < 0)
            avg -= (load - 1); // sign flips effective floor / ceil
        avg /= load;
    }
    return cfs.min_vruntime + static_cast<u64>(avg);
}

// kernel: kernel/sched/fair.c entity_eligible(), 6.6: avg >= key * load, without the division.
bool entity_eligible(const cfs_rq& cfs, const sched_entity& se)
{
    const sched_entity* curr = cfs.curr;
    s64 avg = cfs.avg_vruntime;
    s64 load = static_cast<s64>(cfs.avg_load);
    if (curr && curr->on_rq) {
        const s64 w = curr->load.weight;
        avg += entity_key(cfs, *curr) * w;
        load += w;
    }
    return avg >= entity_key(cfs, se) * load;
}

// kernel: kernel/sched/fair.c entity_lag(), v6.9+ (6.6's update_entity_lag() inline): V - v
// clamped to max(2 slices, a tick) of virtual time, here at the given weight (reweight_eevdf()
// reads it before se's weight changes).
static s64 entity_lag(const kernel& k, u64 avruntime, const sched_entity& se, u32 weight)
{
    const s64 lag = static_cast<s64>(avruntime - se.vruntime);
    const s64 limit = static_cast<s64>(
        calc_delta_weight(std::max<u64>(2 * se.slice, k.config().params.tick_nsec()), weight));
    return std::clamp(lag, -limit, limit);
}

// kernel: kernel/sched/fair.c update_entity_lag(), 6.6: lag clamped to max(2 slice, tick) of virtual time.
void update_entity_lag(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    SIM_BUG_ON(!se.on_rq, "update_entity_lag on a dequeued entity (pid {})",
               se.owner ? se.owner->pid : -1);
    se.vlag = entity_lag(k, avg_vruntime(cfs), se, se.load.weight);
}

/*
 * kernel: kernel/sched/fair.c place_entity(), 6.6.
 * With PLACE_LAG the saved lag is inflated by (W + w) / W so that adding the
 * entity does not pull V towards it and shrink its lag; then
 * v = V - lag and vd = v + vslice (half a slice for a fork with
 * PLACE_DEADLINE_INITIAL); 6.12 with PLACE_REL_DEADLINE: vd = v + the relative
 * deadline a non-sleep dequeue kept (rel_deadline).
 */
void place_entity_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se, int flags)
{
    const u64 vruntime = avg_vruntime(cfs);
    s64 lag = 0;
    se.slice = k.tunables().base_slice;
    u64 vslice = calc_delta_fair(se.slice, se);

    if (sched_feat_of(k, PLACE_LAG) && cfs.nr_running) {
        const sched_entity* curr = cfs.curr;
        s64 load = static_cast<s64>(cfs.avg_load);
        if (curr && curr->on_rq)
            load += curr->load.weight;
        lag = se.vlag * (load + static_cast<s64>(se.load.weight));
        if (!load)
            load = 1;
        lag /= load; // div_s64 truncates towards zero
    }
    se.vruntime = vruntime - static_cast<u64>(lag);

    // 6.12 PLACE_REL_DEADLINE: a migrated entity keeps the deadline it had, relative. 6.18
    // tests rel_deadline alone (its dequeue sets it only under the feature, its
    // reweight_entity() always).
    if (se.rel_deadline &&
        (sched_feat_of(k, PLACE_REL_DEADLINE) ||
         k.config().behaviour.eevdf_reweight == eevdf_reweight_form::place_entity)) {
        se.deadline += se.vruntime;
        se.rel_deadline = false;
        return;
    }

    if (sched_feat_of(k, PLACE_DEADLINE_INITIAL) && (flags & ENQUEUE_INITIAL))
        vslice /= 2;
    se.deadline = se.vruntime + vslice;
}

/*
 * kernel: kernel/sched/fair.c did_preempt_short(), 6.12 (wishday/linux-6.12.y ff9796ed9e8b,
 * 6.12.10): with PREEMPT_SHORT, a curr whose RUN_TO_PARITY stash no longer matches its
 * deadline (its deadline moved since the pick, and it was picked again as prev without
 * set_next_entity()) reschedules at update_curr() once it is not eligible. Not slice-length
 * dependent: it acts with every task on base_slice.
 */
bool did_preempt_short(kernel& k, cfs_rq& cfs, const sched_entity& curr)
{
    if (!sched_feat_of(k, PREEMPT_SHORT))
        return false;
    if (curr.vlag == static_cast<s64>(curr.deadline))
        return false;
    return !entity_eligible(cfs, curr);
}

/*
 * kernel: kernel/sched/fair.c update_deadline(), 6.6: once an entity's
 * vruntime reaches its deadline it gets a new request of base_slice and, if
 * others are queued, the CPU is asked to reschedule. This replaces CFS's
 * check_preempt_tick(). 6.18 (gfunkmonk/linux-6.18.2 57dc26c98e5e) asks in update_curr(),
 * with resched_curr_lazy(): TIF_NEED_RESCHED_LAZY under preempt=lazy, and also whenever
 * curr is no longer protected (!protect_slice(), v6.17), e.g. a curr picked again
 * without set_next_entity() after its deadline moved; 6.12 (update_curr() of v6.12)
 * also when did_preempt_short(). Both return first with one entity queued (6.6: ask
 * only with more than one).
 */
void update_deadline(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    const bool resched = static_cast<s64>(se.vruntime - se.deadline) >= 0;
    if (resched) {
        se.slice = k.tunables().base_slice;
        se.deadline = se.vruntime + calc_delta_fair(se.slice, se);
    }
    if (k.config().behaviour.eevdf_protect_slice) {
        // 6.18 update_curr(): `if (cfs_rq->nr_queued == 1) return;`
        if (cfs.nr_running == 1 || !(resched || !protect_slice(se)))
            return;
    } else if (k.config().has_feature(__SCHED_FEAT_PREEMPT_SHORT)) {
        // 6.12 update_curr() (85e511df3cec's form): also did_preempt_short()
        if (cfs.nr_running == 1 || !(resched || did_preempt_short(k, cfs, se)))
            return;
    } else if (!resched || cfs.nr_running <= 1) {
        return;
    }
    k.resched_curr_lazy(*cfs.rq_); // 6.18: update_curr()'s resched_curr_lazy()
    clear_buddies(cfs, se);
}

namespace {
// kernel: kernel/sched/fair.c cfs_rq_min_slice(), 6.18: the smallest slice of curr (if
// queued) and the tree's entities (the tree's min_slice augmentation; a scan here).
u64 cfs_rq_min_slice(const cfs_rq& cfs)
{
    u64 min_slice = ~0ULL;
    if (cfs.curr && cfs.curr->on_rq)
        min_slice = cfs.curr->slice;
    for (const sched_entity* se : cfs.tasks_timeline)
        min_slice = std::min(min_slice, se->slice);
    return min_slice;
}
} // namespace

/*
 * kernel: kernel/sched/fair.c set_protect_slice(), 6.18 (v6.17): at the pick, the vruntime
 * up to which curr is not preempted by a pick: its deadline, or with RUN_TO_PARITY the
 * smallest slice queued, without it the normalised base slice (a minimum quantum), when
 * shorter than its own.
 */
void set_protect_slice(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    u64 slice = k.config().params.base_slice_ns; // normalized_sysctl_sched_base_slice
    u64 vprot = se.deadline;
    if (sched_feat_of(k, RUN_TO_PARITY))
        slice = cfs_rq_min_slice(cfs);
    slice = std::min(slice, se.slice);
    if (slice != se.slice) {
        const u64 end = se.vruntime + calc_delta_fair(slice, se);
        if (static_cast<s64>(end - vprot) < 0) // min_vruntime()
            vprot = end;
    }
    se.vprot = vprot;
}

// kernel: kernel/sched/fair.c protect_slice(), 6.18: curr has not reached vprot yet.
bool protect_slice(const sched_entity& se)
{
    return static_cast<s64>(se.vprot - se.vruntime) > 0;
}

// kernel: kernel/sched/fair.c cancel_protect_slice(), 6.18.
void cancel_protect_slice(sched_entity& se)
{
    if (protect_slice(se))
        se.vprot = se.vruntime;
}

/*
 * kernel: kernel/sched/fair.c pick_eevdf(), 6.6.
 * Differs: a linear walk of the vruntime-ordered tree instead of the
 * min_deadline-augmented heap search. Eligibility is monotone in vruntime,
 * so the eligible entities are a prefix of the tree; the earliest deadline
 * among them wins, the leftmost on ties. curr wins only with a strictly
 * earlier deadline, and with RUN_TO_PARITY while it still holds the deadline
 * it was picked with. 6.18 (v6.17's __pick_eevdf(cfs_rq, protect)): an eligible curr
 * still short of its vprot wins, whatever RUN_TO_PARITY says (set_protect_slice()).
 */
sched_entity* pick_eevdf(kernel& k, cfs_rq& cfs)
{
    sched_entity* curr = cfs.curr;
    if (curr && (!curr->on_rq || !entity_eligible(cfs, *curr)))
        curr = nullptr;
    if (k.config().behaviour.eevdf_protect_slice) {
        if (curr && protect_slice(*curr))
            return curr;
    } else if (sched_feat_of(k, RUN_TO_PARITY) && curr &&
               curr->vlag == static_cast<s64>(curr->deadline)) {
        return curr;
    }

    sched_entity* best = nullptr;
    for (sched_entity* se : cfs.tasks_timeline) {
        if (!entity_eligible(cfs, *se))
            break;
        if (!best || static_cast<s64>(se->deadline - best->deadline) < 0)
            best = se;
    }
    if (!best || (curr && static_cast<s64>(best->deadline - curr->deadline) > 0))
        best = curr;
    if (!best) {
        // The kernel prints "EEVDF scheduling fail, picking leftmost" here.
        best = __pick_first_entity(cfs);
        SIM_BUG_ON(best == nullptr && cfs.curr == nullptr, "pick_eevdf on an empty cfs_rq");
    }
    return best;
}

/*
 * kernel: kernel/sched/fair.c check_preempt_wakeup(), v6.6.0 naming (later
 * 6.6 stable: check_preempt_wakeup_fair; read at 6.6.87, 6.12.10, 6.18.2). After
 * the next buddy and the need_resched test, nothing without WAKEUP_PREEMPTION; then
 * find_matching_se() takes curr's and the wakee's entities to the cfs_rq where their
 * hierarchies meet: their own if they share a group, else the root, between their
 * group entities, which are never idle (an autogroup's is not), so SCHED_IDLE decides
 * only between tasks of one group. Preempt iff pick_eevdf() would choose the wakee now. 6.18's check_preempt_wakeup_fair() (gfunkmonk/linux-6.18.2
 * 57dc26c98e5e) asks with resched_curr_lazy(), also for a SCHED_IDLE curr, and returns
 * early on test_tsk_need_resched(), the full bit only; the same under every model but lazy.
 */
void check_preempt_wakeup_eevdf(kernel& k, rq& r, task_struct& p, int wake_flags)
{
    task_struct& curr = *r.curr;
    cfs_rq& cfs = task_cfs_rq(r, curr);
    cfs_rq& pcfs = task_cfs_rq(r, p);
    sched_entity* se = &curr.se;
    sched_entity* pse = &p.se;
    if (se == pse)
        return;
    // 6.12+: not for a delayed wakee (none in 6.6)
    if (sched_feat_of(k, NEXT_BUDDY) && !(wake_flags & WF_FORK) && !pse->sched_delayed) {
        pcfs.next = pse; // set_next_buddy(): every level
        set_next_buddy(pcfs, *pse);
    }
    // test_tsk_need_resched(): TIF_NEED_RESCHED only (6.18: not the lazy bit).
    if (r.need_resched && !r.resched_lazy)
        return;
    if (!sched_feat_of(k, WAKEUP_PREEMPTION))
        return;
    cfs_rq* match = &cfs;
    if (&cfs != &pcfs) { // find_matching_se(): one level up, to the root
        se = parent_entity(cfs);
        pse = parent_entity(pcfs);
        match = &r.root_cfs;
    }
    // se_is_idle() of the matched entities: a task's SCHED_IDLE; a group entity's
    // cfs_rq_is_idle(), never for an autogroup's.
    const bool cse_is_idle = se->owner && curr.policy == SCHED_IDLE;
    const bool pse_is_idle = pse->owner && p.policy == SCHED_IDLE;
    if (cse_is_idle && !pse_is_idle) {
        // 6.18: "don't give idle entity slice protection": cancel_protect_slice(se)
        if (k.config().behaviour.eevdf_protect_slice)
            cancel_protect_slice(*se);
        k.resched_curr_lazy(r); // 6.18: `goto preempt`, resched_curr_lazy() too
        return;
    }
    if (cse_is_idle != pse_is_idle)
        return;
    // Batch and idle tasks do not preempt non-idle tasks (that's what they're for).
    if (p.policy != SCHED_NORMAL)
        return;
    update_curr(k, *match);
    if (pick_eevdf(k, *match) == pse)
        k.resched_curr_lazy(r);
}

// kernel: kernel/sched/fair.c pick_next_entity(), 6.6: an eligible next buddy
// (NEXT_BUDDY is off by default), else pick_eevdf(). 6.18 (and 6.12.13+): the pick asks
// PICK_BUDDY (on) instead, so a next buddy set without NEXT_BUDDY (dequeue_task_fair()'s
// set_next_buddy() of a sleeping task's group entity) is taken.
sched_entity* pick_next_entity_eevdf(kernel& k, cfs_rq& cfs)
{
    const bool buddy = k.config().has_feature(__SCHED_FEAT_PICK_BUDDY)
                           ? sched_feat_of(k, PICK_BUDDY)
                           : sched_feat_of(k, NEXT_BUDDY);
    if (buddy && cfs.next && entity_eligible(cfs, *cfs.next))
        return cfs.next;
    return pick_eevdf(k, cfs);
}

/*
 * kernel: kernel/sched/fair.c enqueue_entity(), 6.6: every enqueued entity is
 * placed by its lag (place_entity()), curr before update_curr() and the others
 * after the PELT update.
 */
void enqueue_entity_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se, int flags)
{
    const bool curr = cfs.curr == &se;
    se.cfs_rq_ = &cfs;
    if (curr)
        place_entity_eevdf(k, cfs, se, flags);
    update_curr(k, cfs);
    update_load_avg(k, cfs, se, UPDATE_TG | DO_ATTACH);
    if (se.my_q) { // a group entity's (calls that return at once for a task's)
        se_update_runnable(se);
        update_cfs_group_se(k, se, k.smp_processor_id());
    }
    if (!curr)
        place_entity_eevdf(k, cfs, se, flags);
    account_entity_enqueue(cfs, se);
    if (!curr)
        __enqueue_entity(k, cfs, se);
    se.on_rq = true;
    // A task's group entity's level follows in enqueue_task_fair().
}

/*
 * kernel: kernel/sched/fair.c dequeue_entity()'s DELAY_DEQUEUE branch, 6.12: a
 * task that sleeps while not eligible stays queued, sched_delayed, to burn off
 * its negative lag (see dequeue_task_fair()); util_est is updated at the delay.
 */
bool delay_dequeue_eevdf(kernel& k, rq& r, task_struct& p)
{
    if (!sched_feat_of(k, DELAY_DEQUEUE))
        return false;
    cfs_rq& cfs = task_cfs_rq(r, p);
    update_curr(k, cfs);
    if (entity_eligible(cfs, p.se))
        return false;
    if (cfs.next == &p.se)
        cfs.next = nullptr;
    update_load_avg(k, cfs, p.se, 0);
    p.se.sched_delayed = true; // set_delayed()
    account_h_nr_delayed(r, cfs, 1);
    if (sched_feat_of(k, UTIL_EST))
        util_est_update(p.se.avg.util_est_, p.se.avg, true, capacity_of(k, r.cpu),
                        sched_feat_of(k, UTIL_EST_FASTUP) ||
                            k.config().behaviour.util_est_fastup_always);
    return true;
}

/*
 * kernel: kernel/sched/fair.c reweight_entity() of a queued entity, up to its weight
 * change; the form is the profile's (eevdf_reweight_form). v6.6.0: update_curr() of curr,
 * a non-curr se out of the sums. v6.8 (eab03c23c2a1, 5068d84054b7): the same, then V
 * without se (avg_vruntime() after __dequeue_entity(); with se curr, V includes it).
 * 6.12.10 (v6.9's fixes): update_curr() whoever curr is, V with se, then out of the sums.
 * 6.18.2: update_curr(), update_entity_lag(), the deadline made relative (rel_deadline),
 * nr_queued--, out of the sums. Returns V (0 where the form reads none).
 */
u64 reweight_dequeue_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    const bool curr = cfs.curr == &se;
    const eevdf_reweight_form form = k.config().behaviour.eevdf_reweight;
    u64 avruntime = 0;
    if (curr || form == eevdf_reweight_form::v_before_dequeue ||
        form == eevdf_reweight_form::place_entity)
        update_curr(k, cfs); // "commit outstanding execution time"
    if (form == eevdf_reweight_form::v_before_dequeue)
        avruntime = avg_vruntime(cfs);
    if (form == eevdf_reweight_form::place_entity) {
        update_entity_lag(k, cfs, se);
        se.deadline -= se.vruntime;
        se.rel_deadline = true;
        cfs.nr_running--; // cfs_rq->nr_queued--
    }
    if (!curr) {
        if (form == eevdf_reweight_form::keep_vruntime)
            avg_vruntime_sub(cfs, se); // v6.6.0: avg_vruntime_sub() only; the node stays
        else
            __dequeue_entity(k, cfs, se); // its vruntime moves: out of the ordered set
    }
    if (form == eevdf_reweight_form::v_after_dequeue)
        avruntime = avg_vruntime(cfs);
    return avruntime;
}

/*
 * kernel: kernel/sched/fair.c reweight_entity() after the weight change, and
 * reweight_eevdf(), in the profile's form (eevdf_reweight_form; old_weight is se's weight
 * before, avruntime what reweight_dequeue_eevdf() returned):
 * - not queued, every form: vlag = vlag * old / new (div_s64: truncated toward zero);
 *   6.18 also scales a relative deadline kept by a migration (rel_deadline).
 * - v6.6.0: the vruntime stays, deadline = vruntime + (deadline - vruntime) * old / new.
 * - v6.8 / 6.12.10 (reweight_eevdf()): unless se is at V, its lag V - v (6.12.10:
 *   entity_lag(), clamped to 2 slices or a tick at the old weight; v6.8: unclamped) scales
 *   by old / new and v = V - lag; the deadline scales about V: d = V + (d - V) * old / new.
 * - 6.18: vlag and the relative deadline scale by old / new, place_entity() re-places se
 *   (the lag inflated by its new weight, the deadline restored relative), nr_queued++.
 * Then a queued se returns to the sums, and v6.8+ update min_vruntime (5068d84054b7).
 */
void reweight_entity_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se, u32 old_weight,
                           u64 avruntime)
{
    const eevdf_reweight_form form = k.config().behaviour.eevdf_reweight;
    const s64 w_old = old_weight;
    const s64 w_new = se.load.weight;
    if (!se.on_rq || form == eevdf_reweight_form::place_entity) {
        se.vlag = se.vlag * w_old / w_new;
        if (form == eevdf_reweight_form::place_entity && se.rel_deadline)
            se.deadline = static_cast<u64>(static_cast<s64>(se.deadline) * w_old / w_new);
    }
    if (!se.on_rq)
        return;
    switch (form) {
    case eevdf_reweight_form::keep_vruntime: {
        const s64 rel = static_cast<s64>(se.deadline - se.vruntime);
        se.deadline = se.vruntime + static_cast<u64>(rel * w_old / w_new);
        break;
    }
    case eevdf_reweight_form::v_after_dequeue:
    case eevdf_reweight_form::v_before_dequeue: {
        if (avruntime != se.vruntime) {
            // 6.12.10: entity_lag() at the old weight; v6.8: unclamped
            s64 vlag = form == eevdf_reweight_form::v_before_dequeue
                           ? entity_lag(k, avruntime, se, old_weight)
                           : static_cast<s64>(avruntime - se.vruntime);
            vlag = vlag * w_old / w_new;
            se.vruntime = avruntime - static_cast<u64>(vlag);
        }
        const s64 vslice = static_cast<s64>(se.deadline - avruntime) * w_old / w_new;
        se.deadline = avruntime + static_cast<u64>(vslice);
        break;
    }
    case eevdf_reweight_form::place_entity:
        place_entity_eevdf(k, cfs, se, 0);
        cfs.nr_running++;
        break;
    }
    if (cfs.curr != &se) {
        if (form == eevdf_reweight_form::keep_vruntime)
            avg_vruntime_add(cfs, se);
        else
            __enqueue_entity(k, cfs, se);
    }
    if (form != eevdf_reweight_form::keep_vruntime)
        update_min_vruntime(k, cfs);
}

/*
 * kernel: kernel/sched/fair.c dequeue_entity()'s DELAY_DEQUEUE branch for a group entity,
 * 6.12.10 and 6.18.2 (dequeue_entities() passes DEQUEUE_SLEEP above the task's level):
 * update_curr(), clear_buddies(), then if the entity is not eligible, update_load_avg()
 * and set_delayed() (the flag only: 6.12.14+ and 6.18 count no task for a group entity;
 * 6.12.10 counted it in h_nr_delayed, wishday/linux-6.12.y e7adeecd1 fixed that), and it
 * stays queued. false (dequeue it) without DELAY_DEQUEUE or when eligible.
 */
bool delay_group_entity_eevdf(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    if (!sched_feat_of(k, DELAY_DEQUEUE))
        return false;
    update_curr(k, cfs);
    clear_buddies(cfs, se);
    if (entity_eligible(cfs, se))
        return false;
    update_load_avg(k, cfs, se, 0);
    se.sched_delayed = true;
    return true;
}

namespace {

// model: check_rq()'s EEVDF part: the avg_vruntime sums equal the timeline's.
void check_cfs_rq_eevdf(const kernel& /*k*/, const cfs_rq& cfs, std::string& errs)
{
    s64 avg = 0;
    u64 avg_load = 0;
    for (const sched_entity* se : cfs.tasks_timeline) {
        avg += entity_key(cfs, *se) * se->load.weight;
        avg_load += se->load.weight;
    }
    if (avg != cfs.avg_vruntime || avg_load != cfs.avg_load)
        errs += fmt::format("cpu{}: avg_vruntime {} / avg_load {} but the tree sums to {} / {}\n",
                            cfs.rq_->cpu, cfs.avg_vruntime, cfs.avg_load, avg, avg_load);
    // h_nr_delayed counts the sched_delayed fair tasks (rq->cfs_tasks) below cfs: the
    // root's all of them, a group's its own.
    {
        const bool root = &cfs == &rq_root_cfs(*cfs.rq_);
        unsigned delayed = 0;
        for (const task_struct* p : cfs.rq_->cfs_tasks)
            delayed += p->se.sched_delayed && (root || p->se.cfs_rq_ == &cfs) ? 1 : 0;
        if (delayed != cfs.h_nr_delayed)
            errs += fmt::format("cpu{}: h_nr_delayed {} but {} delayed tasks are queued\n",
                                cfs.rq_->cpu, cfs.h_nr_delayed, delayed);
    }
}

} // namespace

/*
 * EEVDF as the fair class's policy (fair_policy.h), v6.6 on: placement by lag,
 * the avg_vruntime sums, pick_eevdf(), deadline-driven tick preemption.
 */
const fair_policy_ops eevdf_policy = {
    .name = "EEVDF",
    .enqueue_entity = [](kernel& k, cfs_rq& cfs, sched_entity& se, int flags) {
        enqueue_entity_eevdf(k, cfs, se, flags);
    },
    /*
     * kernel: kernel/sched/fair.c dequeue_entity(), 6.12 (wishday/linux-6.12.y ff9796ed9e8b):
     * update_entity_lag(), then with PLACE_REL_DEADLINE a dequeue that is not a sleep (a
     * migration: the load balancer's detach, a pull, an affinity move) keeps the deadline
     * relative to the vruntime, and place_entity() on the new cfs_rq restores it.
     */
    .dequeue_lag = [](kernel& k, cfs_rq& cfs, sched_entity& se, int flags) {
        update_entity_lag(k, cfs, se);
        if (sched_feat_of(k, PLACE_REL_DEADLINE) && !(flags & DEQUEUE_SLEEP)) {
            se.deadline -= se.vruntime;
            se.rel_deadline = true;
        }
    },
    // kernel: kernel/sched/fair.c task_fork_fair(), 6.6: placed as ENQUEUE_INITIAL.
    .task_fork = [](kernel& k, cfs_rq& cfs, sched_entity& se, sched_entity* /*curr*/) {
        place_entity_eevdf(k, cfs, se, ENQUEUE_INITIAL);
    },
    .timeline_add = [](kernel& /*k*/, cfs_rq& cfs, const sched_entity& se) {
        avg_vruntime_add(cfs, se);
    },
    .timeline_sub = [](kernel& /*k*/, cfs_rq& cfs, const sched_entity& se) {
        avg_vruntime_sub(cfs, se);
    },
    // kernel: kernel/sched/fair.c avg_vruntime_update(), 6.6.
    .min_vruntime_advanced = [](cfs_rq& cfs, s64 delta) {
        cfs.avg_vruntime -= static_cast<s64>(cfs.avg_load) * delta;
    },
    .reweight_dequeue = reweight_dequeue_eevdf,
    .reweight_entity = reweight_entity_eevdf,
    .pick_next_entity = [](kernel& k, cfs_rq& cfs, sched_entity* /*curr*/) {
        return pick_next_entity_eevdf(k, cfs);
    },
    // kernel: kernel/sched/fair.c set_next_entity(), 6.6: "HACK, stash a copy of
    // deadline at the point of pick in vlag" (RUN_TO_PARITY); 6.18: set_protect_slice().
    .set_next_entity = [](kernel& k, cfs_rq& cfs, sched_entity& se) {
        if (k.config().behaviour.eevdf_protect_slice)
            set_protect_slice(k, cfs, se);
        else
            se.vlag = static_cast<s64>(se.deadline);
    },
    // kernel: kernel/sched/fair.c yield_task_fair(), 6.6: clear_buddies(), deadline +=
    // slice. 6.18 (gfunkmonk/linux-6.18.2 57dc26c98e5e): only an eligible curr yields,
    // its vruntime jumping to its deadline first ("Forfeit the remaining vruntime").
    .yield_task = [](kernel& k, cfs_rq& cfs) {
        sched_entity& se = *cfs.curr;
        clear_buddies(cfs, se);
        if (k.config().behaviour.yield_forfeits_vruntime) {
            if (entity_eligible(cfs, se)) {
                se.vruntime = se.deadline;
                se.deadline += calc_delta_fair(se.slice, se);
                update_min_vruntime(k, cfs);
            }
            return;
        }
        se.deadline += calc_delta_fair(se.slice, se);
    },
    .delay_dequeue = [](kernel& k, rq& r, task_struct& p) { return delay_dequeue_eevdf(k, r, p); },
    .check_preempt_wakeup = [](kernel& k, rq& r, task_struct& p, int wake_flags) {
        check_preempt_wakeup_eevdf(k, r, p, wake_flags);
    },
    .update_curr = update_deadline,
    .check_cfs_rq = check_cfs_rq_eevdf,
    // kernel: kernel/sched/debug.c print_cfs_rq(), 6.6: avg_vruntime's fields.
    .print_cfs_rq = [](const kernel& /*k*/, const cfs_rq& cfs, std::string& out) {
        out += fmt::format("  .avg_vruntime : {}\n  .avg_load : {}\n  V : {}\n", cfs.avg_vruntime,
                           cfs.avg_load, static_cast<s64>(avg_vruntime(cfs)));
    },
    .eligible = [](const kernel& /*k*/, const cfs_rq& cfs, const sched_entity& se) {
        return entity_eligible(cfs, se) ? "yes" : "no";
    },
};

} // namespace schedlab
