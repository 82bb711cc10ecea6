// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fair class shell: what CFS (<= 6.5) and EEVDF (>= 6.6) share, and the
 * class hooks core.cc calls. Policy-specific parts are in fair_cfs.cc and
 * fair_eevdf.cc, behind the hooks of fair_policy.h, called (policy()) where the
 * two kernels' versions of a function differ.
 *
 * PELT is driven from here and fair_pelt.cc. Task groups: autogroups one
 * level under the root (fair_pelt.cc); the entity-level functions here serve a
 * task's entity on its group's cfs_rq and a group's entity on the root alike,
 * as the kernel's do (entity_is_task()). Not modelled: deeper hierarchies,
 * bandwidth control.
 */
#include "sched/core.h"

#include "sim/bug.h"

namespace schedlab {

// kernel: kernel/sched/fair.c calc_delta_fair(), 6.6. Exact division instead of
// __calc_delta()'s 32-bit inverse-weight fixed point (differs in the last ns).
u64 calc_delta_fair(u64 delta, const sched_entity& se)
{
    return calc_delta_weight(delta, se.load.weight);
}

// calc_delta_fair() for an entity of the given weight (reweight_eevdf()'s lag at the old one).
u64 calc_delta_weight(u64 delta, u32 weight)
{
    if (weight == NICE_0_LOAD)
        return delta;
    // model: none (the simulator's speed): while delta * NICE_0_LOAD fits in 64 bits (delta
    // under 2^54 ns, 208 days) the 64-bit division gives the same quotient as the 128-bit
    // one, without the library call (__udivti3) a group entity's few-unit weight made hot.
    if (delta <= ~0ULL / NICE_0_LOAD)
        return delta * NICE_0_LOAD / weight;
    return static_cast<u64>(static_cast<unsigned __int128>(delta) * NICE_0_LOAD / weight);
}

sched_entity* __pick_first_entity(const cfs_rq& cfs)
{
    return cfs.tasks_timeline.empty() ? nullptr : *cfs.tasks_timeline.begin();
}

/*
 * kernel: kernel/sched/fair.c __enqueue_entity(), 6.6 (6.5: no avg_vruntime). Ordered set, not
 * an rbtree; the node is the one the last dequeue on any CPU extracted (rq::fair_spares:
 * the kernel's rb_node is part of the entity, so enqueueing allocates nothing), a new one
 * only when there is none. The node goes where a new one would: the position follows
 * from the key alone.
 */
void __enqueue_entity(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    if (k.policy().timeline_add)
        k.policy().timeline_add(k, cfs, se);
    se.tree_seq = ++cfs.tree_seq;
    std::vector<entity_timeline::node_type>& spare = cfs.rq_->fair_spares->run_nodes;
    bool inserted;
    if (spare.empty()) {
        inserted = cfs.tasks_timeline.insert(&se).second;
    } else {
        entity_timeline::node_type& node = spare.back();
        node.value() = &se;
        inserted = cfs.tasks_timeline.insert(std::move(node)).inserted;
        spare.pop_back();
    }
    SIM_BUG_ON(!inserted, "entity of pid {} inserted twice", se.owner ? se.owner->pid : -1);
    if (se.owner)
        for (const auto hook : k.patches().enqueue_entity) // patch sets: SHARED_RUNQ's push
            hook(k, *cfs.rq_, *se.owner);
}

// kernel: kernel/sched/fair.c __dequeue_entity(), 6.6. The set's node is kept for the next
// enqueue on any CPU (rq::fair_spares).
void __dequeue_entity(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    entity_timeline::node_type node = cfs.tasks_timeline.extract(&se);
    SIM_BUG_ON(node.empty(), "entity of pid {} not in the tree", se.owner ? se.owner->pid : -1);
    cfs.rq_->fair_spares->run_nodes.push_back(std::move(node));
    if (se.owner)
        for (const auto hook : k.patches().dequeue_entity) // patch sets: SHARED_RUNQ's unlink
            hook(k, *se.owner);
    if (k.policy().timeline_sub)
        k.policy().timeline_sub(k, cfs, se);
}

/*
 * kernel: kernel/sched/fair.c update_min_vruntime(), 6.6 (== 6.5 for the value).
 * min_vruntime follows the smaller of curr and the leftmost entity and never
 * decreases; EEVDF shifts the avg_vruntime sum by the same amount (avg_vruntime_update(),
 * the policy's min_vruntime_advanced).
 */
void update_min_vruntime(kernel& k, cfs_rq& cfs)
{
    sched_entity* se = __pick_first_entity(cfs);
    sched_entity* curr = cfs.curr;
    u64 vruntime = cfs.min_vruntime;
    if (curr) {
        if (curr->on_rq)
            vruntime = curr->vruntime;
        else
            curr = nullptr;
    }
    if (se) {
        if (!curr)
            vruntime = se->vruntime;
        else if (static_cast<s64>(se->vruntime - vruntime) < 0)
            vruntime = se->vruntime;
    }
    // __update_min_vruntime(): max_vruntime(min_vruntime, vruntime)
    const s64 delta = static_cast<s64>(vruntime - cfs.min_vruntime);
    if (delta > 0) {
        if (k.policy().min_vruntime_advanced)
            k.policy().min_vruntime_advanced(cfs, delta);
        cfs.min_vruntime = vruntime;
    }
}

// kernel: kernel/sched/fair.c update_curr(), 6.6 (6.5: without update_deadline), of a task's
// or a group's entity; 6.12 charges the fair server for a task's runtime only
// (entity_is_task()). No bandwidth.
void update_curr(kernel& k, cfs_rq& cfs)
{
    sched_entity* curr = cfs.curr;
    if (!curr)
        return;
    const u64 now_task = cfs.rq_->clock_task;
    const s64 delta_exec = static_cast<s64>(now_task - curr->exec_start);
    if (delta_exec <= 0)
        return;
    curr->exec_start = now_task;
    curr->sum_exec_runtime += static_cast<u64>(delta_exec);
    curr->vruntime += calc_delta_fair(static_cast<u64>(delta_exec), *curr);
    if (k.policy().update_curr)
        k.policy().update_curr(k, cfs, *curr); // 6.6: update_deadline()
    update_min_vruntime(k, cfs);
    if (k.config().behaviour.fair_server && curr->owner) // 6.12: on the server's behalf or not
        dl_server_update(k, *cfs.rq_, delta_exec);
}

// kernel: rq->cfs.h_nr_runnable (v6.14+, read at 6.18.2: update_sg_lb_stats(),
// update_sg_wakeup_stats(), sched_balance_find_src_rq()), h_nr_running before.
unsigned cfs_h_nr_counted(const kernel& k, const rq& r)
{
    const cfs_rq& root = rq_root_cfs(r);
    return k.config().behaviour.lb_counts_runnable ? cfs_h_nr_runnable(root) : root.h_nr_running;
}

// kernel: kernel/sched/fair.c set_delayed() / clear_delayed(), 6.12.10 and 6.18.2: every level
// of the task's hierarchy (for_each_sched_entity()); enqueue_task_fair() and
// dequeue_entities() move a migrating delayed task's count the same way.
void account_h_nr_delayed(rq& r, cfs_rq& cfs, int delta)
{
    cfs.h_nr_delayed += static_cast<unsigned>(delta);
    cfs_rq& root = rq_root_cfs(r);
    if (&root != &cfs)
        root.h_nr_delayed += static_cast<unsigned>(delta);
}

/*
 * kernel: kernel/sched/fair.c clear_buddies() + __clear_buddies_last/next/skip(), 6.5
 * (6.6 keeps only next; the others are never set there). A buddy that is se on its
 * cfs_rq is cleared there and up the hierarchy (for_each_sched_entity()) for as long as
 * each level's buddy is se's ancestor: a task's group entity on the root.
 */
void clear_buddies(cfs_rq& cfs, sched_entity& se)
{
    sched_entity* gse = parent_entity(cfs);
    for (sched_entity* cfs_rq::*buddy : {&cfs_rq::last, &cfs_rq::next, &cfs_rq::skip}) {
        if (cfs.*buddy != &se)
            continue;
        cfs.*buddy = nullptr;
        if (gse && gse->cfs_rq_->*buddy == gse)
            gse->cfs_rq_->*buddy = nullptr;
    }
}

// kernel: kernel/sched/fair.c account_entity_enqueue(), 6.6: a task's entity also joins
// rq->cfs_tasks (entity_is_task()); idle_nr_running counts se_is_idle() entities (5.16+; a
// SCHED_IDLE task: the model has no idle task groups).
void account_entity_enqueue(cfs_rq& cfs, sched_entity& se)
{
    cfs.load.weight += se.load.weight;
    cfs.nr_running++;
    if (!se.owner)
        return;
    task_struct& p = *se.owner;
    if (p.policy == SCHED_IDLE)
        cfs.idle_nr_running++;
    // list_add(&se->group_node, &rq->cfs_tasks): the node the last dequeue on any CPU took
    // off (rq::fair_spares; no allocation), a new one only when there is none
    rq& r = *cfs.rq_;
    p.group_node =
        list_add_spare_node(r.cfs_tasks, r.cfs_tasks.begin(), r.fair_spares->group_nodes, &p);
    p.on_cfs_tasks = true;
}

// kernel: kernel/sched/fair.c account_entity_dequeue(), 6.6.
void account_entity_dequeue(cfs_rq& cfs, sched_entity& se)
{
    cfs.load.weight -= se.load.weight;
    cfs.nr_running--;
    if (!se.owner)
        return;
    task_struct& p = *se.owner;
    if (p.policy == SCHED_IDLE)
        cfs.idle_nr_running--;
    if (p.on_cfs_tasks) {
        // list_del_init(&se->group_node): the node is kept for the next enqueue (rq::fair_spares)
        std::list<task_struct*>& spare = cfs.rq_->fair_spares->group_nodes;
        spare.splice(spare.begin(), cfs.rq_->cfs_tasks, p.group_node);
        p.on_cfs_tasks = false;
    }
}

/*
 * kernel: kernel/sched/fair.c enqueue_entity(), 6.6 and 6.5: the policy's
 * (fair_eevdf.cc: placed by its lag; fair_cfs.cc: renormalised, with the
 * sleeper credit).
 */
void enqueue_entity(kernel& k, cfs_rq& cfs, sched_entity& se, int flags)
{
    k.policy().enqueue_entity(k, cfs, se, flags);
}

/*
 * kernel: kernel/sched/fair.c dequeue_entity(), 6.6 and 6.5.
 * 6.6 records the lag (update_entity_lag); 6.5 makes a non-sleep dequeue's
 * vruntime relative to min_vruntime so it can be renormalised elsewhere (a
 * group entity's dequeue is always a sleep: dequeue_task_fair() adds
 * DEQUEUE_SLEEP above the task's level).
 */
void dequeue_entity(kernel& k, cfs_rq& cfs, sched_entity& se, int flags)
{
    update_curr(k, cfs);
    update_load_avg(k, cfs, se,
                    UPDATE_TG | (se.owner && se.owner->on_rq == TASK_ON_RQ_MIGRATING ? DO_DETACH
                                                                                   : 0));
    if (se.my_q) // a group entity's (a call that returns at once for a task's)
        se_update_runnable(se);
    clear_buddies(cfs, se);
    if (k.policy().dequeue_lag)
        k.policy().dequeue_lag(k, cfs, se, flags);
    if (&se != cfs.curr)
        __dequeue_entity(k, cfs, se);
    se.on_rq = false;
    account_entity_dequeue(cfs, se);
    if (k.policy().dequeue_renorm)
        k.policy().dequeue_renorm(cfs, se, flags);
    if (se.my_q)
        update_cfs_group_se(k, se, k.smp_processor_id());
    // A task's group entity's level follows in dequeue_task_fair().
    if ((flags & (DEQUEUE_SAVE | DEQUEUE_MOVE)) != DEQUEUE_SAVE)
        update_min_vruntime(k, cfs);
}

// kernel: kernel/sched/fair.c set_next_entity(), 6.6 (6.5: without the RUN_TO_PARITY stash):
// first clear_buddies(cfs_rq, se) (6.5, 6.1-rc7 and 5.15.0, lane cfsaudit; 6.6.87, 6.12.10
// and 6.18.2, lane eevdf1), then the policy's hook (EEVDF's stash).
void set_next_entity(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    clear_buddies(cfs, se);
    if (se.on_rq) {
        __dequeue_entity(k, cfs, se);
        update_load_avg(k, cfs, se, UPDATE_TG);
        if (k.policy().set_next_entity)
            k.policy().set_next_entity(k, cfs, se); // 6.6: the RUN_TO_PARITY stash
    }
    se.exec_start = cfs.rq_->clock_task; // update_stats_curr_start()
    cfs.curr = &se;
    se.prev_sum_exec_runtime = se.sum_exec_runtime;
}

// kernel: kernel/sched/fair.c put_prev_entity(), 6.6.
void put_prev_entity(kernel& k, cfs_rq& cfs, sched_entity& prev)
{
    if (prev.on_rq) {
        update_curr(k, cfs);
        __enqueue_entity(k, cfs, prev);
        update_load_avg(k, cfs, prev, 0);
    }
    cfs.curr = nullptr;
}

// kernel: kernel/sched/fair.c put_prev_task_fair(), 6.6: the task, then its group entity.
void put_prev_task_fair(kernel& k, rq& r, task_struct& prev)
{
    cfs_rq& cfs = task_cfs_rq(r, prev);
    if (cfs.curr == &prev.se)
        put_prev_entity(k, cfs, prev.se);
    put_prev_group_entity(k, r); // for_each_sched_entity(): the group entity on the root
}

/*
 * kernel: kernel/sched/fair.c put_prev_entity(&rq->cfs, se) of the root's curr, 6.6:
 * the group entity that was running stops being the root's curr (a task of another
 * class or idle follows, or a task of another group: pick_next_task_fair()).
 */
void put_prev_group_entity(kernel& k, rq& r)
{
    if (!r.cfs.tg || !r.root_cfs.curr)
        return;
    put_prev_entity(k, r.root_cfs, *r.root_cfs.curr);
}

/*
 * kernel: kernel/sched/fair.c set_next_entity(&rq->cfs, tg->se[cpu]), 6.6, in
 * pick_next_task_fair(): the group entity of the task picked becomes the
 * root's curr, after the group entity that was (put_prev_entity() at the
 * common ancestor, the root). Nothing if it is curr already (a pick inside
 * the group) or with autogroup off.
 */
void set_next_group_entity(kernel& k, rq& r, cfs_rq& gcfs)
{
    sched_entity* gse = parent_entity(gcfs);
    if (!gse || r.root_cfs.curr == gse)
        return;
    put_prev_group_entity(k, r);
    set_next_entity(k, r.root_cfs, *gse);
}

/*
 * kernel: kernel/sched/fair.c set_next_buddy(), 6.6 (6.5 the same): the wakee's
 * entity is the next buddy on every level, unless it is an idle entity
 * (se_is_idle()). The task's level is set by the policy's check_preempt_wakeup();
 * this sets the group entity's on the root (an autogroup is never idle).
 */
void set_next_buddy(cfs_rq& cfs, sched_entity& se)
{
    if (se.owner && se.owner->policy == SCHED_IDLE)
        return;
    if (sched_entity* gse = parent_entity(cfs))
        gse->cfs_rq_->next = gse;
}

// kernel: kernel/sched/fair.c pick_next_entity(), 6.6 / 6.5: the policy's.
sched_entity* pick_next_entity(kernel& k, cfs_rq& cfs, sched_entity* curr)
{
    return k.policy().pick_next_entity(k, cfs, curr);
}

/* ---- class hooks ---- */

/*
 * kernel: kernel/sched/fair.c enqueue_task_fair(), 6.6, above the task's level of a
 * depth-1 hierarchy: the group entity is enqueued on the root if it was not queued
 * (enqueue_entity() with ENQUEUE_WAKEUP, as every level above the task's), else the
 * second loop's update_load_avg(UPDATE_TG), se_update_runnable(), update_cfs_group(),
 * after requeue_delayed_entity() of an entity left delayed (6.12.10, 6.18.2); then the
 * root's h_nr_running (and idle_h_nr_running).
 */
static void enqueue_task_group_level(kernel& k, rq& r, cfs_rq& gcfs, bool idle, bool delayed)
{
    sched_entity& gse = gcfs.my_se->se;
    cfs_rq& root = r.root_cfs;
    if (!gse.on_rq) {
        enqueue_entity(k, root, gse, ENQUEUE_WAKEUP);
    } else {
        if (gse.sched_delayed) // 6.12+: "if (se->on_rq) { if (se->sched_delayed) requeue..."
            requeue_delayed_entity(k, root, gse);
        update_load_avg(k, root, gse, UPDATE_TG);
        se_update_runnable(gse);
        update_cfs_group_se(k, gse, k.smp_processor_id());
    }
    root.h_nr_running++;
    if (idle)
        root.idle_h_nr_running++;
    if (delayed) // enqueue_task_fair()'s h_nr_delayed, level by level
        root.h_nr_delayed++;
}

/*
 * kernel: kernel/sched/fair.c enqueue_task_fair(), 6.6: the task's entity on its
 * group's cfs_rq (task_cfs_rq()), then the group's entity on the root;
 * 6.12: a delayed entity's wakeup (ENQUEUE_DELAYED) only requeues it in place, and a
 * delayed task's utilisation estimate stays out of the rq's while it moves.
 * util_est is the root's (kept in rq::cfs whatever the task's group).
 */
void enqueue_task_fair(kernel& k, rq& r, task_struct& p, int flags)
{
    k.lb().lb_stats_changed(r.cpu);
    if (sched_feat_of(k, UTIL_EST) &&
        !(p.se.sched_delayed && (p.on_rq == TASK_ON_RQ_MIGRATING || (flags & ENQUEUE_RESTORE))))
        util_est_enqueue(r.cfs.avg.util_est_, p.se.avg);
    cfs_rq& cfs = task_cfs_rq(r, p);
    if (flags & ENQUEUE_DELAYED) {
        requeue_delayed_entity(k, cfs, p.se);
        return;
    }
    enqueue_entity(k, cfs, p.se, flags);
    cfs.h_nr_running++;
    const bool delayed = p.se.sched_delayed; // the balancer moved it here; it stays delayed
    if (delayed)
        cfs.h_nr_delayed++;
    if (p.policy == SCHED_IDLE)
        cfs.idle_h_nr_running++;
    if (cfs.my_se) // the group's entity on the root
        enqueue_task_group_level(k, r, cfs, p.policy == SCHED_IDLE, delayed);
    if (k.config().behaviour.fair_server && rq_root_cfs(r).h_nr_running == 1) // 6.12: the first
        dl_server_start(k, r);                                                 // fair task
    add_nr_running(r, 1);
    idle_gap_note(k, r); // counting only
}

// kernel: kernel/sched/fair.c pick_next_entity() -> dequeue_entities(DEQUEUE_DELAYED) and
// core.c __block_task(), 6.12: a delayed task that is picked leaves the runqueue.
void block_delayed_task(kernel& k, rq& r, task_struct& p)
{
    SIM_BUG_ON(!p.se.sched_delayed || p.__state == TASK_RUNNING,
               "pid {} picked as delayed but delayed={} state {:#x}", p.pid, p.se.sched_delayed,
               p.__state);
    dequeue_task_fair(k, r, p, DEQUEUE_SLEEP | DEQUEUE_DELAYED | DEQUEUE_NOCLOCK);
    p.on_rq = 0;
    p.sched_info_.last_queued = NOT_QUEUED; // set if a balancer moved it while delayed
}

/*
 * kernel: kernel/sched/fair.c requeue_delayed_entity(), 6.12: a delayed entity (a task, or
 * a group entity whose group gets a task again) woken before it was picked stays where it
 * is in the tree, except that with
 * DELAY_ZERO a positive lag it built up meanwhile is dropped (placed at the
 * 0-lag point again).
 */
void requeue_delayed_entity(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    SIM_BUG_ON(!se.sched_delayed || !se.on_rq, "requeue of pid {}: delayed {} on_rq {}",
               se.owner ? se.owner->pid : -1, se.sched_delayed, se.on_rq);
    if (sched_feat_of(k, DELAY_ZERO)) {
        update_entity_lag(k, cfs, se);
        if (se.vlag > 0) {
            cfs.nr_running--;
            if (&se != cfs.curr)
                __dequeue_entity(k, cfs, se);
            se.vlag = 0;
            place_entity_eevdf(k, cfs, se, 0);
            if (&se != cfs.curr)
                __enqueue_entity(k, cfs, se);
            cfs.nr_running++;
        }
    }
    update_load_avg(k, cfs, se, 0);
    se.sched_delayed = false; // clear_delayed(): a task's count (6.12.14+, 6.18: not a group's)
    if (se.owner)
        account_h_nr_delayed(*cfs.rq_, cfs, -1);
}

/*
 * kernel: kernel/sched/fair.c dequeue_entities(rq, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED) of a
 * group entity, 6.12.10 and 6.18.2 (pick_next_entity() picked it, delayed, its group empty):
 * dequeue_entity() takes it off the root; finish_delayed_dequeue_entity() clears the flag
 * (no task count: clear_delayed() returns for a group entity, 6.12.14+ and 6.18) and, with
 * DELAY_ZERO, a positive lag. Nothing above the root; no task leaves (h_nr_running 0).
 */
void dequeue_delayed_group_entity(kernel& k, cfs_rq& cfs, sched_entity& se)
{
    SIM_BUG_ON(!se.my_q || !se.sched_delayed || se.my_q->load.weight,
               "cpu{}: a delayed group entity's dequeue, delayed {} group load {}", cfs.rq_->cpu,
               se.sched_delayed, se.my_q ? se.my_q->load.weight : 0);
    dequeue_entity(k, cfs, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED);
    se.sched_delayed = false;
    if (sched_feat_of(k, DELAY_ZERO) && se.vlag > 0)
        se.vlag = 0;
}

/*
 * kernel: kernel/sched/fair.c dequeue_task_fair(), 6.6, above the task's level of a
 * depth-1 hierarchy: the group entity leaves the root when its cfs_rq has no
 * load.weight left (dequeue_entity() with DEQUEUE_SLEEP, as every level above the
 * task's), else the second loop's update_load_avg(UPDATE_TG), se_update_runnable(),
 * update_cfs_group(); then the root's h_nr_running. Not for a task that stays queued
 * as delayed (6.12: dequeue_entities() returns before this level). 6.12.10 and 6.18.2
 * (DELAY_DEQUEUE): the group entity's dequeue_entity() is a sleep whatever the task's was
 * (a migration, a pick of a delayed task, a DEQUEUE_SAVE), so an ineligible one stays
 * queued, delayed (delay_group_entity_eevdf()), until picked or requeued.
 * When the group stays queued and the task went to sleep, its group entity becomes the
 * root's next buddy ("Bias pick_next to pick a task from this cfs_rq": set_next_buddy(),
 * read in 6.6.87 and 6.18.2 by lane eevdf1, in 6.5, 6.1-rc7 and 5.15.0 by the lead; an
 * autogroup's entity is never idle). 6.18's pick reads it (PICK_BUDDY), 6.6's and 6.12's
 * only with NEXT_BUDDY (off), and the CFS pick_next_entity() of 5.15-6.5 without a feature
 * test: it runs the next buddy unless it is more than a wakeup granularity right of the
 * leftmost (wakeup_preempt_entity() < 1).
 */
static void dequeue_task_group_level(kernel& k, rq& r, cfs_rq& gcfs, bool idle, bool task_sleep,
                                     bool delayed)
{
    sched_entity& gse = gcfs.my_se->se;
    cfs_rq& root = r.root_cfs;
    if (gcfs.load.weight == 0 && gse.on_rq && !delay_group_entity_eevdf(k, root, gse)) {
        dequeue_entity(k, root, gse, DEQUEUE_SLEEP);
    } else if (gcfs.load.weight == 0 && gse.on_rq) {
        // delayed: dequeue_entities()'s second loop starts at the group entity itself
        update_load_avg(k, root, gse, UPDATE_TG);
        se_update_runnable(gse);
        update_cfs_group_se(k, gse, k.smp_processor_id());
    } else {
        if (task_sleep)
            root.next = &gse; // set_next_buddy(parent_entity(se))
        update_load_avg(k, root, gse, UPDATE_TG);
        se_update_runnable(gse);
        update_cfs_group_se(k, gse, k.smp_processor_id());
    }
    root.h_nr_running--;
    if (idle)
        root.idle_h_nr_running--;
    if (delayed) // dequeue_entities()'s h_nr_delayed of a migrating delayed task
        root.h_nr_delayed--;
}

/*
 * kernel: kernel/sched/fair.c dequeue_task_fair(), 6.6: the task's entity, then its
 * group's on the root.
 * SIS_SHORT v6 1/2 (Chen Yu, Feb 2023) adds dur_avg: on a sleep, the CPU time
 * since the previous sleep enters a 1/8 EWMA (update_avg), whatever the feature bit.
 * 6.12 DELAY_DEQUEUE (dequeue_entity()): a task that sleeps while not eligible
 * stays queued, sched_delayed, to burn off its negative lag; it leaves when
 * picked (pick_next_entity(): DEQUEUE_DELAYED, DELAY_ZERO drops a positive
 * lag) or is requeued in place when woken first. Returns false then, as
 * the kernel's does, and the task stays on_rq. Not for a dying task
 * (DEQUEUE_SPECIAL).
 */
bool dequeue_task_fair(kernel& k, rq& r, task_struct& p, int flags)
{
    const bool task_sleep = flags & DEQUEUE_SLEEP;
    cfs_rq& cfs = task_cfs_rq(r, p);
    k.lb().lb_stats_changed(r.cpu);
    if (sched_feat_of(k, UTIL_EST) && !p.se.sched_delayed)
        util_est_dequeue(r.cfs.avg.util_est_, p.se.avg); // the root's (kept in rq::cfs)
    if (task_sleep && !(flags & (DEQUEUE_DELAYED | DEQUEUE_SPECIAL)) &&
        k.policy().delay_dequeue && k.policy().delay_dequeue(k, r, p))
        return false;
    const bool was_delayed = p.se.sched_delayed;
    dequeue_entity(k, cfs, p.se, flags);
    // It leaves this rq. Picked: clear_delayed() at the end of its dequeue_entity(), every
    // level; moved by the balancer: dequeue_entities()'s h_nr_delayed, level by level.
    const bool migrating_delayed = was_delayed && !(flags & DEQUEUE_DELAYED);
    if (was_delayed && !migrating_delayed)
        account_h_nr_delayed(r, cfs, -1);
    else if (migrating_delayed)
        cfs.h_nr_delayed--;
    if (flags & DEQUEUE_DELAYED) {
        // finish_delayed_dequeue_entity()
        SIM_BUG_ON(!was_delayed, "DEQUEUE_DELAYED of pid {}, which is not delayed", p.pid);
        p.se.sched_delayed = false;
        if (sched_feat_of(k, DELAY_ZERO) && p.se.vlag > 0)
            p.se.vlag = 0;
    }
    cfs.h_nr_running--;
    if (p.policy == SCHED_IDLE)
        cfs.idle_h_nr_running--;
    if (cfs.my_se) // the group's entity on the root
        dequeue_task_group_level(k, r, cfs, p.policy == SCHED_IDLE, task_sleep, migrating_delayed);
    sub_nr_running(r, 1);
    idle_gap_note(k, r); // counting only
    if (k.config().behaviour.fair_server && !rq_root_cfs(r).h_nr_running) // 6.12: the last
        dl_server_stop(k, r);                                              // fair task
    if (sched_feat_of(k, UTIL_EST) && !was_delayed)
        util_est_update(p.se.avg.util_est_, p.se.avg, task_sleep, capacity_of(k, r.cpu),
                        sched_feat_of(k, UTIL_EST_FASTUP) ||
                            k.config().behaviour.util_est_fastup_always);
    if (task_sleep && !(flags & DEQUEUE_DELAYED)) {
        const u64 dur = p.se.sum_exec_runtime - p.se.prev_sleep_sum_runtime;
        p.se.prev_sleep_sum_runtime = p.se.sum_exec_runtime;
        const s64 diff = static_cast<s64>(dur) - static_cast<s64>(p.se.dur_avg);
        p.se.dur_avg = static_cast<u64>(static_cast<s64>(p.se.dur_avg) + diff / 8);
    }
    return true;
}

/*
 * kernel: kernel/sched/fair.c pick_next_task_fair(), 6.6, the
 * CONFIG_FAIR_GROUP_SCHED path distribution kernels run: from the root down,
 * each level's curr stays cfs_rq->curr during the pick (update_curr() first;
 * so RUN_TO_PARITY and the CFS curr comparison see it) and the policy's
 * pick_next_entity() chooses there, a group entity's pick continuing in its
 * cfs_rq (group_cfs_rq()). If the task differs from prev, prev's entities are
 * put back and the new ones set up to their common ancestor: prev's task
 * entity, then (another group's task) prev's group entity on the root and the
 * new one; the new task's entity last.
 * When nothing is runnable it runs sched_balance_newidle() and retries.
 * Differs: the walk's order puts prev's task entity back before setting the
 * new group entity, where the kernel sets the new task's entity first; the
 * two levels' state is disjoint, so the outcome is the same.
 */
task_struct* pick_next_task_fair(kernel& k, rq& r, task_struct* prev)
{
    cfs_rq& top = rq_root_cfs(r);
    int retries = 0;
    bool restarted = false;       // a newly-idle pass returned < 0 (RETRY_TASK)
    bool no_more_newidle = false; // balance_fair()'s pass after the restart ran
    for (;;) {
        if (top.nr_running) {
            cfs_rq* cfs = &top;
            sched_entity* se = nullptr;
            for (;;) {
                sched_entity* curr = cfs->curr;
                if (curr) {
                    if (curr->on_rq)
                        update_curr(k, *cfs);
                    else
                        curr = nullptr;
                }
                se = pick_next_entity(k, *cfs, curr);
                SIM_BUG_ON(!se, "cpu{}: nr_running {} but nothing to pick", r.cpu,
                           cfs->nr_running);
                if (!se->my_q || se->sched_delayed)
                    break;
                cfs = se->my_q; // group_cfs_rq(se)
            }
            if (se->sched_delayed && se->my_q) {
                // 6.12+ pick_next_entity(): a delayed group entity that wins the pick
                // leaves (dequeue_entities(DEQUEUE_SLEEP | DEQUEUE_DELAYED)); pick again.
                dequeue_delayed_group_entity(k, *cfs, *se);
                continue;
            }
            if (se->sched_delayed) {
                // 6.12: a delayed entity that wins the pick leaves instead; pick again.
                block_delayed_task(k, r, k.task_of(*se));
                continue;
            }
            task_struct& p = k.task_of(*se);
            if (&p != prev) {
                if (prev) {
                    cfs_rq& pcfs = task_cfs_rq(r, *prev);
                    if (pcfs.curr == &prev->se)
                        put_prev_entity(k, pcfs, prev->se);
                }
                set_next_group_entity(k, r, *cfs); // its group entity first, if not the root's curr
                set_next_entity(k, *cfs, *se);
            }
            // Keep cfs_tasks most-recently-run first (detach_tasks() takes from the tail).
            if (p.on_cfs_tasks)
                r.cfs_tasks.splice(r.cfs_tasks.begin(), r.cfs_tasks, p.group_node);
            return &p;
        }
        // idle: put prev back first (it is not on the rq any more), then try to pull.
        if (prev) {
            cfs_rq& pcfs = task_cfs_rq(r, *prev);
            if (pcfs.curr == &prev->se)
                put_prev_entity(k, pcfs, prev->se);
        }
        prev = nullptr;
        // Returning NULL, __pick_next_task() puts prev's whole hierarchy (put_prev_task()):
        // the group entity leaves the root's curr then, after the newly-idle balance.
        if (no_more_newidle) {
            put_prev_group_entity(k, r);
            return nullptr;
        }
        const int new_tasks = sched_balance_newidle(k, r);
        if (new_tasks == 0) {
            put_prev_group_entity(k, r);
            return nullptr;
        }
        /*
         * > 0: pulled, pick again. < 0 (SHARED_RUNQ v3: a pop that did not move a
         * task): pick_next_task_fair() returns RETRY_TASK and __pick_next_task()
         * restarts: put_prev_task_balance() -> balance_fair() goes newly idle once
         * more, then the class picks take what is queued (pick_next_task_fair(rq,
         * NULL, NULL) does not balance again): the CPU goes idle after that second pass.
         */
        if (restarted)
            no_more_newidle = true;
        else if (new_tasks < 0)
            restarted = true;
        SIM_BUG_ON(++retries > 100000, "cpu{}: the newly-idle pick retried forever", r.cpu);
    }
}

// kernel: kernel/sched/fair.c check_preempt_wakeup() (wakeup_preempt_fair from 6.7), 6.6 / 6.5.
void check_preempt_wakeup_fair(kernel& k, rq& r, task_struct& p, int wake_flags)
{
    k.policy().check_preempt_wakeup(k, r, p, wake_flags);
}

/*
 * kernel: kernel/sched/fair.c migrate_task_rq_fair(), 6.6 / 6.5.
 * 6.5 makes a waking task's vruntime relative to the old min_vruntime; both
 * forget cache hotness (exec_start = 0). A sleeping task's load is left
 * for removal from the old cfs_rq (remove_entity_load_avg), a queued one's
 * is detached by the dequeue; either way it attaches on the new CPU.
 */
void migrate_task_rq_fair(kernel& k, task_struct& p, int /*new_cpu*/)
{
    if (k.policy().migrate_task_rq)
        k.policy().migrate_task_rq(k, p);
    if (p.on_rq != TASK_ON_RQ_MIGRATING)
        remove_entity_load_avg(k, p.se); // asleep: leave the load behind for removal
    p.se.avg.last_update_time = 0;    // tell the new CPU to attach it
    p.se.exec_start = 0;              // no longer cache hot
}

// kernel: kernel/sched/fair.c task_tick_fair() -> entity_tick(), 6.6 / 6.5 (no hrtick).
void task_tick_fair(kernel& k, rq& r, task_struct& curr)
{
    cfs_rq& cfs = task_cfs_rq(r, curr);
    SIM_BUG_ON(cfs.curr != &curr.se, "cpu{}: tick for pid {} which is not cfs_rq->curr", r.cpu,
               curr.pid);
    update_curr(k, cfs);
    update_load_avg(k, cfs, curr.se, UPDATE_TG);
    if (k.policy().entity_tick)
        k.policy().entity_tick(k, cfs, curr.se);
    // for_each_sched_entity(): the group entity's entity_tick() on the root (update_curr(),
    // update_load_avg(UPDATE_TG), update_cfs_group(), the policy's tick check)
    if (sched_entity* gse = parent_entity(cfs)) {
        cfs_rq& root = r.root_cfs;
        SIM_BUG_ON(root.curr != gse, "cpu{}: tick for pid {} whose group is not the root's curr",
                   r.cpu, curr.pid);
        update_curr(k, root);
        update_load_avg_tg_se(cfs, UPDATE_TG);
        update_cfs_group_se(k, *gse, r.cpu);
        if (k.policy().entity_tick)
            k.policy().entity_tick(k, root, *gse);
    }
}

/*
 * kernel: kernel/sched/fair.c task_fork_fair(), 6.6 / 6.5.
 * The child is placed on the forking CPU's cfs_rq (the parent's, or the
 * spawning CPU's for tasks created by the harness); 6.5 then makes its
 * vruntime relative for the renormalisation in enqueue_entity().
 */
void task_fork_fair(kernel& k, task_struct& p)
{
    rq& r = k.cpu_rq(p.cpu);
    cfs_rq& cfs = task_cfs_rq(r, p);
    k.update_rq_clock(r);
    sched_entity* curr = cfs.curr;
    if (curr)
        update_curr(k, cfs);
    sched_entity& se = p.se;
    se.vruntime = 0;
    se.vlag = 0;
    se.slice = k.tunables().base_slice;
    se.sum_exec_runtime = se.prev_sum_exec_runtime = 0;
    k.policy().task_fork(k, cfs, se, curr);
}

// kernel: kernel/sched/fair.c yield_task_fair(), 6.6 (EEVDF: deadline += slice) / 6.5 (skip buddy).
void yield_task_fair(kernel& k, rq& r)
{
    cfs_rq& cfs = task_cfs_rq(r, *r.curr);
    if (r.nr_running == 1 || !cfs.curr)
        return;
    k.update_rq_clock(r);
    update_curr(k, cfs);
    k.policy().yield_task(k, cfs);
}

/*
 * kernel: kernel/sched/fair.c DEFINE_SCHED_CLASS(fair), 6.6: the hooks the core
 * calls through p->sched_class, each the kernel member of the same name.
 */
const sched_class fair_sched_class = {
    .name = "fair",
    .order = 3,
    .policies = (1u << SCHED_NORMAL) | (1u << SCHED_BATCH) | (1u << SCHED_IDLE),
    .enqueue_task = enqueue_task_fair,
    .dequeue_task = dequeue_task_fair,
    .yield_task = yield_task_fair,
    .wakeup_preempt = check_preempt_wakeup_fair,
    // pick_next_task_fair()'s simple path when prev is of another class.
    .pick_next_task = [](kernel& k, rq& r, task_struct* prev) {
        return pick_next_task_fair(k, r, prev && prev->sched_class == &fair_sched_class ? prev
                                                                                       : nullptr);
    },
    .select_task_rq = select_task_rq_fair,
    .migrate_task_rq = migrate_task_rq_fair,
    .task_tick = [](kernel& k, rq& r, task_struct& curr, int /*queued*/) {
        task_tick_fair(k, r, curr);
    },
    .task_fork = task_fork_fair,
    .put_prev_task = put_prev_task_fair,
};

} // namespace schedlab
