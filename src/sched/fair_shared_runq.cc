// SPDX-License-Identifier: GPL-2.0-only
/*
 * SHARED_RUNQ, David Vernet's per-LLC shared runqueue (2023), as posted in
 * v3 (9 Aug 2023, base tip 88c56cfeaec4) and v4 (11 Dec 2023), never merged
 * (20230809221218.163894-1-void@manifault.com, 20231212003141.216236-1-void@manifault.com).
 * The version, the "noopt" variant and the shard
 * size come from the kernel delta (kernel_behaviour).
 *
 * Each LLC has ceil(llc_size / shard_size) shards; CPU c uses shard
 * (c >> 1) % nr_shards on the machine's real numbering. A shard lists the
 * runnable-but-not-running unpinned fair tasks of its CPUs in the order they
 * entered their cfs_rq tree: pushed in __enqueue_entity (v4: not when the rq
 * was empty), seen by other CPUs once the pushing CPU has reached the push,
 * unlinked in __dequeue_entity. A CPU about to go idle pops the
 * first allowed head across its LLC's shards and moves that task to itself.
 * Every push, removal and pop takes the shard's spinlock, and a pull takes
 * the source rq's lock: all contended resources of the cost model. Each
 * shard lock is taken with an rq's lock held, which is held across it.
 */
#include "sched/fair_shared_runq.h"

#include "sched/core.h"

#include "sim/bug.h"

#include <algorithm>
#include <initializer_list>
#include <iterator>

namespace schedlab {

bool shared_runq_active(const kernel& k)
{
    return k.config().behaviour.shared_runq_version > 0 && sched_feat_of(k, SHARED_RUNQ);
}

/*
 * kernel: the shared runqueues' allocation at boot (v3 5/7, v4 5/8: one per LLC,
 * owned by its first CPU, sd_llc_id), split into shards of shared_runq_shard_size.
 */
void shared_runq_init(kernel& k)
{
    std::vector<shared_runq*> by_leader(static_cast<std::size_t>(k.mach().nr_cpus()), nullptr);
    const int shard_size = std::max(1, k.config().behaviour.shared_runq_shard_size);
    for (int cpu = 0; cpu < k.mach().nr_cpus(); ++cpu) {
        const cpu_sched_domains& cd = k.topology().cpu(cpu);
        if (!cd.sd_llc)
            continue;
        shared_runq*& srq = by_leader[static_cast<std::size_t>(cd.sd_llc_id)];
        if (!srq) {
            k.srq().shared_runqs.push_back(std::make_unique<shared_runq>());
            srq = k.srq().shared_runqs.back().get();
            srq->shards.resize(static_cast<std::size_t>((cd.sd_llc_size + shard_size - 1) / shard_size));
        }
        rq& r = k.cpu_rq(cpu);
        r.srq = srq;
        r.shard_idx = (cpu >> 1) % static_cast<int>(srq->shards.size());
    }
}

namespace {
/*
 * kernel: raw_spin_lock(&shard->lock) in shared_runq_push_task(), _pop_task() and
 * shared_runq_dequeue_task() (v3 6/7-7/7, v4 6/8). `struct shared_runq_shard { struct
 * list_head list; raw_spinlock_t lock; } ____cacheline_aligned;`: the list head and the
 * lock share one line, so the head's reads and writes under the lock cost nothing more.
 * model: the hold (shard_lock_hold) is charged with the lock's line, by distance from its
 * last holder (cpu_charges::lock_shard_and_charge(), counted as the CPU's shard time); what
 * the list operation then writes in other lines is shard_write_nodes()'s.
 */
void shard_lock_and_charge(kernel& k, shared_runq_shard& shard, int cpu)
{
    shared_runq_stats& st = k.srq().stats;
    if (shard.lock.last_cpu != cpu)
        st.lock_line_ns += k.charges().cm().line_cost(shard.lock.last_cpu, cpu);
    k.charges().lock_shard_and_charge(shard.lock, cpu, k.charges().params().shard_lock_hold);
    st.hold_ns += k.charges().params().shard_lock_hold;
}

/*
 * kernel: the list nodes a shard's list operation writes under its lock (include/linux/
 * list.h, v6.5, sndrzt/linux-6.5 4f5cdb332210): list_add_tail() writes the new node, the
 * old tail's `next` and the head's `prev`; list_del_init() reads the node, writes
 * `prev->next` and `next->prev`, then the node itself (INIT_LIST_HEAD()). Each node is
 * p->shared_runq_node, inside its task's task_struct, last written by the CPU that last
 * linked or unlinked it or a node next to it: under a busy shard, another core's.
 * model: each of `nodes` (null: the head, on the lock's line) is a line with a last
 * writer (task_struct::shard_node_line): taken by distance (line_*) after any write still
 * in flight on it, one after the other (as wakeup_remote_lines: a core overlapping the
 * stores' misses would take less), by `cpu`, which holds the shard's lock (its last
 * holder): the hold is extended by that time, so the lock's waiters wait for it too, and
 * the time is charged to `cpu`. The unlocked list_empty() of shared_runq_dequeue_task(),
 * which reads p's node before the lock, is not separated: p's node is taken under it.
 */
void shard_write_nodes(kernel& k, shared_runq_shard& shard, int cpu,
                       std::initializer_list<task_struct*> nodes)
{
    sim_time t = shard.lock.busy_until; // the end of this CPU's hold (lock_and_charge())
    const sim_time from = t;
    shared_runq_stats& st = k.srq().stats;
    for (task_struct* node : nodes) {
        if (!node)
            continue;
        const auto [wait, transfer] =
            k.charges().cm().lock_acquire(node->shard_node_line, cpu, 0, t);
        if (wait + transfer > 0)
            st.node_lines++;
        t += wait + transfer;
    }
    if (t == from)
        return;
    shard.lock.busy_until = t;
    st.node_line_ns += t - from;
    st.hold_ns += t - from;
    k.charges().charge_shard(k.cpu_rq(cpu), t - from, ACCT_LOCK_HOLD);
}

/*
 * kernel: SHARED_RUNQ v3 6/7-7/7 (20230809221218.163894-7/-8-void@manifault.com, base tip
 * 88c56cfeaec4) and v4 6/8 (20231212003141.216236-7-void@manifault.com): the push runs
 * from __enqueue_entity() and the unlink from __dequeue_entity(), both with the lock of
 * the rq whose cfs_rq they change held (enqueue_task() and dequeue_task() are called
 * under it: the wakeup's ttwu_do_activate(), __schedule()'s deactivate and its pick's
 * set_next_entity() / put_prev_entity(), detach_task() and attach_task(),
 * move_queued_task()); shared_runq_pick_next_task() pops with this rq's lock held and
 * drops it only after the pop (raw_spin_rq_unlock()). So every wait for a shard's lock,
 * its hold and the lines written under it lengthen that rq lock's hold: a remote waker, a
 * balancer or a puller taking that rq's lock waits for them too.
 * model: `locked`'s lock, taken by `cpu` (still its last holder), is held across the shard
 * time charged to `cpu` since `shard_ns_before` (cpu_charges::hold_across_shard(), as the
 * tg->load_avg line time and the IPI's send are: hold_across_lines(), hold_across_send()).
 * Not if another CPU has taken that lock since `cpu` did (a direct activation deferred
 * past another CPU's hold, EV_TTWU_DIRECT): the model's holds are not nested.
 */
void hold_rq_across_shard(kernel& k, rq& locked, int cpu, u64 shard_ns_before)
{
    k.srq().stats.rq_hold_ns += k.charges().hold_across_shard(locked.lock, cpu, shard_ns_before);
}

/// The node before `pos` in a shard's list, null if that is the head.
task_struct* node_before(shared_runq_shard& shard, std::list<task_struct*>::iterator pos)
{
    return pos == shard.list.begin() ? nullptr : *std::prev(pos);
}

/// The node at `pos` in a shard's list, null if that is the head (the end).
task_struct* node_at(shared_runq_shard& shard, std::list<task_struct*>::iterator pos)
{
    return pos == shard.list.end() ? nullptr : *pos;
}
} // namespace

/*
 * kernel: shared_runq_enqueue_task() from __enqueue_entity() (SHARED_RUNQ v3
 * 6/7 and v4 6/8): push p at the tail of its rq's shard if it may run
 * elsewhere; v4 skips it when the rq was empty (p will run next anyway).
 * model: the enqueue's steps are one instant here, but the pushing CPU reaches
 * the push only after the work charged to it before it (in enqueue_entity():
 * update_load_avg()'s tg->load_avg write, and any work it still owed, such as
 * an idle CPU's sched_ttwu_pending() so far): other CPUs see p in the shard
 * from then (p->shard_visible; cpu_charges::owed_until()). The list stays in
 * the order the pushes happen, by that time.
 */
void shared_runq_enqueue_task(kernel& k, rq& r, task_struct& p)
{
    if (!shared_runq_active(k) || p.nr_cpus_allowed <= 1 || !r.srq || p.shard)
        return;
    if (k.config().behaviour.shared_runq_version >= 4 && r.nr_running < 1)
        return;
    shared_runq_shard& shard = r.srq->shards[static_cast<std::size_t>(r.shard_idx)];
    const int this_cpu = k.smp_processor_id();
    p.shard_visible = k.charges().owed_until(k.cpu_rq(this_cpu));
    const u64 shard_before = k.charges().shard_ns(this_cpu);
    shard_lock_and_charge(k, shard, this_cpu);
    auto pos = shard.list.end();
    while (pos != shard.list.begin() && (*std::prev(pos))->shard_visible > p.shard_visible)
        --pos;
    // list_add_tail(): p's node, the node before it (the old tail) and the one after it
    // (the head: the model lists a push not yet reached by its CPU after this one)
    shard_write_nodes(k, shard, this_cpu, {&p, node_before(shard, pos), node_at(shard, pos)});
    // the node this shard's last unlink or pop freed, if any (shared_runq_shard::spare)
    p.shard_node = list_add_spare_node(shard.list, pos, shard.spare, &p);
    p.shard = &shard;
    k.srq().stats.pushes++;
    hold_rq_across_shard(k, r, this_cpu, shard_before); // r's lock: __enqueue_entity()'s
}

/*
 * kernel: shared_runq_dequeue_task() from __dequeue_entity() (v3/v4): unlink p if still
 * listed, under task_rq(p)'s lock. model: p's CPU is task_rq(p)'s (__dequeue_entity() comes
 * before any set_task_cpu()).
 */
void shared_runq_dequeue_task(kernel& k, task_struct& p)
{
    if (!p.shard)
        return;
    shared_runq_shard& shard = *p.shard;
    const int this_cpu = k.smp_processor_id();
    const u64 shard_before = k.charges().shard_ns(this_cpu);
    shard_lock_and_charge(k, shard, this_cpu);
    // list_del_init(): p's node and its two neighbours
    shard_write_nodes(
        k, shard, this_cpu,
        {&p, node_before(shard, p.shard_node), node_at(shard, std::next(p.shard_node))});
    shard.spare.splice(shard.spare.begin(), shard.list, p.shard_node);
    p.shard = nullptr;
    k.srq().stats.removals++;
    hold_rq_across_shard(k, k.cpu_rq(p.cpu), this_cpu, shard_before); // task_rq(p)'s lock
}

/*
 * kernel: shared_runq_pick_next_task() (v3 6/7, v4 6/8): pop the first head
 * allowed on this CPU, starting at its own shard; then, under the task's rq
 * lock, move it here if it is still queued and not running there. Returns
 * 1 if moved; 0 if nothing was found; a popped task that could not be moved
 * returns -1 in v3 (the pick restarts) and 0 in v4. The pops are under
 * this rq's lock, held across them (hold_rq_across_shard()).
 * Differs: v3 and v4 drop this rq's lock after the pop and take it again
 * after the move (raw_spin_rq_unlock(), task_rq_lock(), move_queued_task());
 * the model's pull is one instant, so no other CPU takes this rq's lock in
 * that window (a waker enqueueing here meanwhile is not seen by the pick).
 */
int shared_runq_pick_next_task(kernel& k, rq& r)
{
    if (!r.srq)
        return 0;
    const int this_cpu = r.cpu;
    const std::size_t nr = r.srq->shards.size();
    const u64 shard_before = k.charges().shard_ns(this_cpu);
    task_struct* p = nullptr;
    for (std::size_t i = 0; i < nr && !p; ++i) {
        shared_runq_shard& shard = r.srq->shards[(static_cast<std::size_t>(r.shard_idx) + i) % nr];
        if (shard.list.empty() || shard.list.front()->shard_visible > k.now())
            continue; // the unlocked emptiness check (a push not yet reached is not there)
        shard_lock_and_charge(k, shard, this_cpu);
        task_struct* head = shard.list.front();
        if (head->cpus_mask.test(this_cpu)) {
            // list_del_init() of the first node: it and the one after it
            shard_write_nodes(k, shard, this_cpu,
                              {head, node_at(shard, std::next(shard.list.begin()))});
            shard.spare.splice(shard.spare.begin(), shard.list, shard.list.begin());
            head->shard = nullptr;
            p = head;
            k.srq().stats.pops++;
        } else {
            k.srq().stats.head_not_allowed++;
        }
    }
    hold_rq_across_shard(k, r, this_cpu, shard_before); // this rq's lock, dropped after the pop
    if (!p)
        return 0;

    // task_rq_lock(): the source rq's lock (this rq's was dropped meanwhile).
    rq& src = k.cpu_rq(p->cpu);
    k.charges().lock_and_charge(src.lock, this_cpu, k.charges().params().rq_lock_hold);
    const bool movable = task_on_rq_queued(*p) && src.curr != p && p->cpus_mask.test(this_cpu) &&
                         &src != &r;
    if (!movable) {
        k.srq().stats.pops_not_moved++;
        k.charges().lock_and_charge(r.lock, this_cpu, k.charges().params().rq_lock_hold);
        return k.config().behaviour.shared_runq_version >= 4 ? 0 : -1;
    }
    /*
     * kernel: move_queued_task() (kernel/sched/core.c; its 5.x-6.x copies read agree):
     * deactivate_task() under the source rq's lock, set_task_cpu(), rq_unlock() there,
     * rq_lock() here, activate_task() and the preemption check under this rq's lock (v3
     * re-pushes it); this rq stays locked for the pick. The dequeue writes tg->load_avg
     * (DO_DETACH) and the enqueue does (DO_ATTACH): model: each lock is held across the
     * line time of the path under it (cpu_charges::under_lock(), as detach_tasks_locked()
     * and attach_tasks_locked() do).
     */
    k.update_rq_clock(src);
    k.charges().under_lock(src.lock, this_cpu,
                           [&] { k.deactivate_task(src, *p, DEQUEUE_NOCLOCK); });
    k.set_task_cpu(*p, this_cpu);
    k.charges().lock_and_charge(r.lock, this_cpu, k.charges().params().rq_lock_hold);
    k.update_rq_clock(r);
    k.charges().under_lock(r.lock, this_cpu, [&] {
        k.activate_task(r, *p, ENQUEUE_NOCLOCK);
        k.wakeup_preempt(r, *p, 0);
    });
    k.srq().stats.pulls_moved++;
    if (k.decisions().on())
        k.decisions().log(k.now(), this_cpu, "shared_runq",
                          fmt::format("pulled pid {} from cpu{}", p->pid, src.cpu));
    return 1;
}

// kernel: shared_runq_drain() on the feature's disable path (v3/v4): unlink every entry.
void shared_runq_drain(kernel& k)
{
    for (auto& srq : k.srq().shared_runqs)
        for (auto& shard : srq->shards) {
            for (task_struct* p : shard.list)
                p->shard = nullptr;
            shard.list.clear();
        }
}

namespace {
/*
 * kernel: newidle_balance() as SHARED_RUNQ v3 edits it (5/7 places the call, 6/7 fills
 * it in; series 20230809221218.163894-1-void@manifault.com): shared_runq_pick_next_task()
 * on entry, after ttwu_pending and cpu_active(), before idle_stamp and every gate,
 * uncosted; its result is returned if nonzero, past the function's epilogue (no
 * next_balance update, idle_stamp left as it was). Re-read 2026-12-07 (lane hb8) against
 * 5/7 (-6-void@manifault.com), 6/7 and v6.5's newidle_balance() (sndrzt/linux-6.5
 * 4f5cdb332210): as modelled.
 */
int newidle_enter_v3(kernel& k, rq& this_rq)
{
    if (!shared_runq_active(k) || k.config().behaviour.shared_runq_version != 3)
        return 0;
    return shared_runq_pick_next_task(k, this_rq);
}

/*
 * kernel: v3's newidle_balance() gates the whole pass on the domain above the
 * LLC (20230809221218.163894-7-void@manifault.com), unless Gautham's "noopt"
 * variant reverted that: sd = sd_llc, then sd->parent if sd_llc exists, so
 * none (only rd->overload gates) when the LLC is the top domain or absent.
 * Only the gate's sd: the domain loop after it is for_each_domain(), which starts
 * again at rq->sd (K Prateek Nayak, 3e32bec6-5e59-c66a-7676-7d15df2c961c@amd.com), so
 * a pass past v3's gate balances SMT and the LLC before DIE as tip's does (test
 * v3_past_its_gate_walks_the_domains_from_rq_sd; v4 6/8 added the skip in the loop).
 */
sched_domain* newidle_gate_domain_v3(kernel& k, int this_cpu, sched_domain* sd)
{
    const kernel_behaviour& b = k.config().behaviour;
    if (!shared_runq_active(k) || b.shared_runq_version != 3 || b.shared_runq_noopt)
        return sd;
    sched_domain* llc = k.topology().cpu(this_cpu).sd_llc;
    return llc ? llc->parent : nullptr;
}

/*
 * kernel: newidle_balance() as SHARED_RUNQ v4 edits it (6/8, series
 * 20231212003141.216236-1-void@manifault.com): once the root domain is
 * overloaded, the shared queue first, regardless of avg_idle; a wakeup queued
 * for this CPU meanwhile ends the pass.
 */
int newidle_overloaded_v4(kernel& k, rq& this_rq)
{
    if (!shared_runq_active(k) || k.config().behaviour.shared_runq_version < 4)
        return 0;
    if (shared_runq_pick_next_task(k, this_rq) > 0)
        return 1;
    return this_rq.ttwu_pending ? -1 : 0;
}

// kernel: v4's newidle_balance() domain loop skips the SMT and LLC levels.
bool newidle_skip_domain_v4(kernel& k, const sched_domain& sd)
{
    return shared_runq_active(k) && k.config().behaviour.shared_runq_version >= 4 &&
           sd.has(SD_SHARE_LLC);
}
} // namespace

/*
 * SHARED_RUNQ as a registered patch set (patchset.h), for the deltas of group
 * "shared_runq" (shared_runq_v3, shared_runq_v3_noopt, shared_runq_v4).
 */
const sched_patchset shared_runq_patchset = {
    .group = "shared_runq",
    .init = shared_runq_init,
    .enqueue_entity = shared_runq_enqueue_task,
    .dequeue_entity = shared_runq_dequeue_task,
    // kernel: the SHARED_RUNQ feature's disable path drains the queues (v3/v4).
    .feat_set =
        [](kernel& k, sched_feat_id f, bool was, bool on) {
            if (f == __SCHED_FEAT_SHARED_RUNQ && was && !on)
                shared_runq_drain(k);
        },
    .newidle_enter = newidle_enter_v3,
    .newidle_gate_domain = newidle_gate_domain_v3,
    .newidle_overloaded = newidle_overloaded_v4,
    .newidle_skip_domain = newidle_skip_domain_v4,
};

} // namespace schedlab
