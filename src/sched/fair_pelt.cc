// SPDX-License-Identifier: GPL-2.0-only
/*
 * PELT as the fair class drives it (kernel/sched/fair.c, 6.6): entity and
 * cfs_rq averages updated at enqueue, dequeue, pick, put and tick; load
 * attached and detached on migration, with the "removed" accumulator for
 * tasks that migrate while asleep; util_est; and the readers the placement
 * and balancing code uses (cpu_load, cpu_util_cfs, ...). The arithmetic is
 * in pelt.cc.
 *
 * Task groups: every task belongs to its session's autogroup
 * (task_struct::sched_task_group; a benchmark started from one shell is one
 * session, a daemon that called setsid() another), one level under the root.
 * Each autogroup has a cfs_rq per CPU (tg->cfs_rq[cpu], where its tasks queue
 * and pick; the first autogroup's is rq::cfs) and an entity per CPU on the
 * root cfs_rq (tg->se[cpu], rq::root_cfs; the first autogroup's is rq::tg_se).
 * The group entities queue, are placed, picked and preempt on the root by the
 * same code as task entities (fair.c's enqueue_entity(), dequeue_entity(),
 * set_next_entity(), put_prev_entity(), pick_next_entity() of the policy,
 * fair.cc); this file keeps what is the group entity's own: its weight
 * (calc_group_shares() from tg->load_avg, reweight_entity()), its PELT and the
 * root's (update_load_avg() of the group entity, with the group's
 * attach/detach/removed load propagated by propagate_entity_load_avg()), and
 * h_load (update_cfs_rq_h_load()). So cpu_load(), cpu_runnable() and
 * cpu_util_cfs() read the root, and task_h_load() scales a task's load by its
 * group's h_load, as the kernel's do under CONFIG_FAIR_GROUP_SCHED.
 * model: the hierarchy is one level deep (autogroups under the root, no
 * cgroups). 6.12+ can leave a group entity queued, delayed, with its cfs_rq
 * empty (fair.cc dequeue_task_group_level()); its PELT counts it as queued, not
 * runnable (se_runnable()). With autogroup off (rq::cfs.tg == nullptr) rq::cfs is the root and
 * none of this runs.
 * tg->load_avg is written by update_tg_load_avg() (each write a transfer of
 * one contended cache line) and read by update_cfs_group(), who pays for the
 * line when it moved.
 * The runnable counts leave sched_delayed tasks out (cfs_h_nr_runnable(), se_runnable():
 * 6.12.10's h_nr_running - h_nr_delayed, 6.18.2's h_nr_runnable; no delayed task before
 * 6.12). The group is never throttled (no bandwidth).
 */
#include "sched/core.h"

#include <algorithm>

namespace schedlab {

namespace {
template <typename T> void lsub_positive(T& v, T sub) { v = v > sub ? v - sub : 0; }
// kernel: kernel/sched/fair.c add_positive(): add a signed delta, 0 if it would wrap below 0.
template <typename T> void pelt_add_positive(T& v, long delta)
{
    const T res = static_cast<T>(v + static_cast<T>(delta));
    v = (delta < 0 && res > v) ? 0 : res;
}
// rq->cfs, the root cfs_rq: the model's root_cfs with autogroup on, else rq::cfs itself.
const sched_avg& root_cfs_avg(const rq& r) { return rq_root_cfs(r).avg; }
} // namespace

unsigned long capacity_of(const kernel& k, int cpu) { return k.mach().cpus[cpu].capacity; }
// kernel: kernel/sched/fair.c cpu_load() = cfs_rq_load_avg(&rq->cfs), 6.6: the root's.
unsigned long cpu_load(const rq& r) { return root_cfs_avg(r).load_avg; }
// kernel: kernel/sched/fair.c cpu_runnable() = cfs_rq_runnable_avg(&rq->cfs), 6.6: the root's.
unsigned long cpu_runnable(const rq& r) { return root_cfs_avg(r).runnable_avg; }

// kernel: kernel/sched/fair.c cpu_util_cfs() -> cpu_util(cpu, NULL, -1, 0), 6.6.
// util_avg is the root's; util_est is rq->cfs's too, kept in rq::cfs.avg (the
// kernel's util_est_enqueue() adds every task's to the root's, whatever its group).
unsigned long cpu_util_cfs(const kernel& k, int cpu)
{
    const cfs_rq& cfs = k.cpu_rq(cpu).cfs;
    unsigned long util = root_cfs_avg(k.cpu_rq(cpu)).util_avg;
    if (sched_feat_of(k, UTIL_EST))
        util = std::max<unsigned long>(util, cfs.avg.util_est_.enqueued);
    return std::min<unsigned long>(util, capacity_of(k, cpu));
}

// kernel: kernel/sched/fair.c cpu_util_cfs_boost() -> cpu_util(cpu, NULL, -1, 1), 6.5+ ("runnable boosting").
unsigned long cpu_util_cfs_boost(const kernel& k, int cpu)
{
    const cfs_rq& cfs = k.cpu_rq(cpu).cfs;
    const sched_avg& root = root_cfs_avg(k.cpu_rq(cpu));
    unsigned long util = std::max<unsigned long>(root.util_avg, root.runnable_avg);
    if (sched_feat_of(k, UTIL_EST))
        util = std::max<unsigned long>(util, cfs.avg.util_est_.enqueued);
    return std::min<unsigned long>(util, capacity_of(k, cpu));
}

// kernel: kernel/sched/fair.c cpu_load_without(), 6.6.
unsigned long cpu_load_without(kernel& k, const rq& r, const task_struct& p)
{
    if (r.cpu != p.cpu || !p.se.avg.last_update_time)
        return cpu_load(r);
    unsigned long load = cpu_load(r);
    lsub_positive(load, task_h_load(k, p));
    return load;
}

// kernel: kernel/sched/fair.c cpu_runnable_without(), 6.6.
unsigned long cpu_runnable_without(const rq& r, const task_struct& p)
{
    if (r.cpu != p.cpu || !p.se.avg.last_update_time)
        return cpu_runnable(r);
    unsigned long runnable = cpu_runnable(r);
    lsub_positive(runnable, p.se.avg.runnable_avg);
    return runnable;
}

// kernel: kernel/sched/fair.c cpu_util_without() -> cpu_util(cpu, p, -1, 0), 6.6.
unsigned long cpu_util_without(const kernel& k, int cpu, const task_struct& p)
{
    if (cpu != p.cpu || !p.se.avg.last_update_time)
        return cpu_util_cfs(k, cpu);
    const cfs_rq& cfs = k.cpu_rq(cpu).cfs;
    unsigned long util = root_cfs_avg(k.cpu_rq(cpu)).util_avg;
    lsub_positive(util, task_util(p.se.avg));
    if (sched_feat_of(k, UTIL_EST)) {
        unsigned long estimated = cfs.avg.util_est_.enqueued;
        if (task_on_rq_queued(p) || p.on_cpu)
            lsub_positive(estimated, _task_util_est(p.se.avg));
        util = std::max(util, estimated);
    }
    return std::min<unsigned long>(util, capacity_of(k, cpu));
}

/*
 * kernel: kernel/sched/fair.c update_cfs_rq_h_load(), 6.6 (== 6.18): a group's
 * h_load on one CPU, the root's load_avg times the group entity's share of it,
 * computed at most once a jiffy (the root's h_load too, from its load_avg).
 */
void update_cfs_rq_h_load(kernel& k, cfs_rq& gcfs)
{
    cfs_rq& root = gcfs.rq_->root_cfs;
    const u64 now = jiffies(k);
    if (gcfs.last_h_load_update == now)
        return;
    if (root.last_h_load_update != now) {
        root.h_load = root.avg.load_avg;
        root.last_h_load_update = now;
    }
    gcfs.h_load = static_cast<unsigned long>(static_cast<u64>(root.h_load) *
                                             gcfs.my_se->avg.load_avg / (root.avg.load_avg + 1));
    gcfs.last_h_load_update = now;
}

/*
 * kernel: kernel/sched/fair.c task_h_load(), 6.6 (== 6.18) under
 * CONFIG_FAIR_GROUP_SCHED: the task's load times its group's h_load over the
 * group's load (task_cfs_rq(p): p's autogroup's on its CPU); with autogroup off
 * (no group) the task's own load.
 */
unsigned long task_h_load(kernel& k, const task_struct& p)
{
    rq& r = k.cpu_rq(p.cpu);
    if (!r.cfs.tg)
        return p.se.avg.load_avg;
    cfs_rq& gcfs = task_cfs_rq(r, p);
    update_cfs_rq_h_load(k, gcfs);
    return static_cast<unsigned long>(static_cast<u64>(p.se.avg.load_avg) * gcfs.h_load /
                                      (gcfs.avg.load_avg + 1));
}

unsigned long task_util_est(const task_struct& p)
{
    return schedlab::task_util_est(p.se.avg);
}

// update_load_avg()'s flags (UPDATE_TG, SKIP_AGE_LOAD, DO_ATTACH, DO_DETACH): fair_policy.h.

// The copy of tg->load_avg's line that cpu's LLC holds (task_group::load_avg_llc).
static task_group::llc_copy& tg_llc_copy(kernel& k, task_group& tg, int cpu)
{
    if (tg.load_avg_llc.empty())
        tg.load_avg_llc.resize(static_cast<std::size_t>(k.nr_cpu_ids()));
    return tg.load_avg_llc[static_cast<std::size_t>(k.topology().cpu(cpu).sd_llc_id)];
}

/*
 * kernel: kernel/sched/fair.c update_tg_load_avg(), 6.6: fold this CPU's
 * change into the group's global load_avg when it moved by more than 1/64.
 * Aaron Lu's ratelimit (v6.7: at most once per ms per cfs_rq) is a patch set
 * hooked in on entry (fair_tg_ratelimit.cc).
 */
void update_tg_load_avg(kernel& k, cfs_rq& cfs, int cpu, tg_write_site site)
{
    if (!cfs.tg)
        return;
    for (const auto hook : k.patches().update_tg_load_avg) // the v6.7 ratelimit
        if (hook(k, cfs)) {
            cfs.tg->load_avg_ratelimited++;
            return;
        }
    cfs.tg->load_avg_site_calls[site]++;
    const long delta = static_cast<long>(cfs.avg.load_avg) - cfs.tg_load_avg_contrib;
    if (std::abs(delta) > cfs.tg_load_avg_contrib / 64) {
        cfs.tg->load_avg += delta;
        cfs.tg->load_avg_updates++;
        cfs.tg->load_avg_site_writes[site]++;
        // atomic_long_add() on the group's shared line: its transfer is the contention.
        k.charges().lock_line_and_charge(cfs.tg->load_avg_line, cpu,
                                         k.charges().params().atomic_op);
        // The writer's LLC holds the new version; every other LLC's copy is now stale.
        task_group::llc_copy& mine = tg_llc_copy(k, *cfs.tg, cpu);
        mine.version = cfs.tg->load_avg_line.acquisitions;
        mine.ready = cfs.tg->load_avg_line.busy_until; // once the write has the line
        cfs.tg_load_avg_contrib = static_cast<long>(cfs.avg.load_avg);
        cfs.last_update_tg_load_avg = cfs.rq_->clock_task;
    }
}

/*
 * kernel: kernel/sched/fair.c update_cfs_group() -> calc_group_shares(), 6.6:
 * the group entity's weight is recomputed from tg->load_avg at every enqueue,
 * dequeue and tick of a task in the group (the task's own entity returns at
 * once; the autogroup's entity on the root cfs_rq reads the line).
 * model: only the read of tg->load_avg is kept (the shares are not applied, see
 * the file comment). The read hits if no other CPU wrote the line since this
 * CPU last read it. Otherwise it misses, and where the current version comes
 * from depends on the reader's LLC:
 * - the LLC already holds it (a CPU of this LLC wrote it, or fetched it since
 *   the last write): the read is served inside the LLC, at line_llc, once that
 *   copy has arrived, without taking the line;
 * - else it is the LLC's first reader of this version: a coherence transaction
 *   on the line, serialised at the line's home like a write (it waits for those
 *   in flight and occupies the line for its transfer from the last writer, by
 *   distance); the version is then in this LLC for its other CPUs.
 * So after one write at most one reader per LLC queues at the line.
 * The reader is the CPU running the code (`cpu`, smp_processor_id()): a waker
 * enqueueing on another CPU's runqueue or a balancer detaching from one reads
 * the line into its own cache, so whether it hits is that CPU's history.
 * Why (Aaron Lu's ratelimit, 20230912065808.2530-2-aaron.lu@intel.com, on a
 * 2 x 56C Sapphire Rapids, the spr-2s preset): with netperf UDP_RR at 224
 * clients update_cfs_group() and update_load_avg() took ~25% and ~16% of the
 * cycles, ~90% of it on tg->load_avg (20230912065808.2530-1-aaron.lu@intel.com),
 * and limiting the writes to one per ms per cfs_rq made the run 2.9x faster
 * (9703 -> 28011 trans/s per client; 13779 -> 36105 at 168 clients) with the
 * cost of reading tg->load_avg "greatly reduced". With every read miss queued
 * at the line the model's counterpart (`--machine spr-2s --kernel tip-2023-08
 * -- netperf --instances 224 -t UDP_RR -l 1`) gained 57% (7118 -> 11206): its
 * ratelimited arm still waited 153 of 227 CPU-s for reads, ~34 queued misses
 * per write. With the LLC's copy it gains 312% (8125 -> 33472), at 168 clients
 * 210% (docs/validation.md, "The tg->load_avg line"). Which copy serves a
 * reader is the hardware's (the socket's L3 on Sapphire Rapids, the CCX's L3
 * on Zen); no vendor document read gives the latency of that case, so it is
 * line_llc, the preset's transfer within an LLC. Earlier variants: readers
 * sharing the line machine-wide (59854da; 9b3a406, reverted by 4b7104e).
 */
void update_cfs_group(kernel& k, cfs_rq& cfs, int cpu)
{
    if (!cfs.tg)
        return;
    task_group& tg = *cfs.tg;
    contended_lock& line = tg.load_avg_line;
    tg.load_avg_reads++;
    u64& seen = tg.cfs_rq_[static_cast<std::size_t>(cpu)]->tg_load_avg_seen; // this CPU's copy
    if (seen == line.acquisitions || line.last_cpu == cpu || line.last_cpu < 0)
        return;
    seen = line.acquisitions;
    tg.load_avg_read_misses++;
    const sim_time t = k.now();
    rq& r = k.cpu_rq(cpu);
    task_group::llc_copy& llc = tg_llc_copy(k, tg, cpu);
    if (llc.version == line.acquisitions) {
        // Another CPU of this LLC holds the current version (it fetched or wrote it
        // since the last write): served inside the LLC, once that copy has arrived.
        tg.load_avg_llc_hits++;
        const sim_dur wait = llc.ready > t ? llc.ready - t : 0;
        if (wait > 0) {
            tg.load_avg_read_wait += wait;
            k.charges().charge_line(r, wait, ACCT_LOCK_SPIN);
        }
        k.charges().charge_line(r, k.charges().params().line_llc, ACCT_LOCK_HOLD);
        return;
    }
    const sim_dur wait = line.busy_until > t ? line.busy_until - t : 0;
    const sim_dur transfer = k.charges().cm().line_cost(line.last_cpu, cpu);
    line.busy_until = t + wait + transfer;
    llc.version = line.acquisitions;
    llc.ready = line.busy_until;
    if (wait > 0) {
        tg.load_avg_read_wait += wait;
        k.charges().charge_line(r, wait, ACCT_LOCK_SPIN);
    }
    k.charges().charge_line(r, transfer, ACCT_LOCK_HOLD);
}

// kernel: kernel/sched/fair.c add_tg_cfs_propagate(), 6.6: load to push to the group entity.
static void add_tg_cfs_propagate(cfs_rq& cfs, long runnable_sum)
{
    if (!cfs.tg) // the root's: nothing above it reads it
        return;
    cfs.prop_runnable_sum += runnable_sum;
    cfs.propagate = true;
}

/*
 * kernel: kernel/sched/fair.c update_cfs_rq_load_avg(), 6.6: fold in the load
 * removed by tasks that migrated away while asleep (and, for a group's cfs_rq,
 * queue its unweighted sum for propagation), then decay. Returns "decayed".
 */
static bool update_cfs_rq_load_avg(u64 now, cfs_rq& cfs)
{
    bool decayed = false;
    if (cfs.removed.nr) {
        const u32 divider = get_pelt_divider(cfs.avg);
        auto& a = cfs.avg;
        lsub_positive(a.util_avg, cfs.removed.util_avg);
        a.util_sum = static_cast<u32>(std::max<u64>(
            a.util_sum > cfs.removed.util_avg * divider ? a.util_sum - cfs.removed.util_avg * divider : 0,
            static_cast<u64>(a.util_avg) * PELT_MIN_DIVIDER));
        lsub_positive(a.load_avg, cfs.removed.load_avg);
        a.load_sum = std::max<u64>(a.load_sum > cfs.removed.load_avg * divider
                                       ? a.load_sum - cfs.removed.load_avg * divider
                                       : 0,
                                   static_cast<u64>(a.load_avg) * PELT_MIN_DIVIDER);
        lsub_positive(a.runnable_avg, cfs.removed.runnable_avg);
        a.runnable_sum = std::max<u64>(a.runnable_sum > cfs.removed.runnable_avg * divider
                                           ? a.runnable_sum - cfs.removed.runnable_avg * divider
                                           : 0,
                                       static_cast<u64>(a.runnable_avg) * PELT_MIN_DIVIDER);
        // removed_runnable is the unweighted removed load: its sum estimates load_sum's.
        add_tg_cfs_propagate(cfs, (-static_cast<long>(cfs.removed.runnable_avg * divider)) >>
                                      SCHED_CAPACITY_SHIFT);
        cfs.removed = {};
        decayed = true;
    }
    decayed |= __update_load_avg_cfs_rq(now, cfs.avg, cfs.load.weight, cfs_h_nr_runnable(cfs),
                                        cfs.curr != nullptr);
    return decayed;
}

/*
 * kernel: kernel/sched/fair.c update_load_avg() with attach/detach_entity_load_avg()
 * and update_cfs_rq_load_avg(), 6.6, for a task's entity; a task of an
 * autogroup attaching or detaching queues its load for the group entity
 * (add_tg_cfs_propagate()). A group entity's: update_load_avg_tg_se() below.
 */
void update_load_avg(kernel& k, cfs_rq& cfs, sched_entity& se, int flags)
{
    if (se.my_q) {
        update_load_avg_tg_se(*se.my_q, flags);
        return;
    }
    const u64 now = cfs.rq_->clock_task;
    const bool running = cfs.curr == &se;
    k.lb().lb_stats_changed(cfs.rq_->cpu);
    if (se.avg.last_update_time && !(flags & SKIP_AGE_LOAD))
        __update_load_avg_se(now, se.avg, se.load.weight, se.on_rq, running,
                             se.on_rq && !se.sched_delayed ? 1 : 0); // se_runnable()

    const bool removed = cfs.removed.nr != 0; // for the statistics of update_tg_load_avg()
    const bool decayed = update_cfs_rq_load_avg(now, cfs);

    if (!se.avg.last_update_time && (flags & DO_ATTACH)) {
        // attach_entity_load_avg(): the entity starts at the cfs_rq's clock
        const u32 divider = get_pelt_divider(cfs.avg);
        se.avg.last_update_time = cfs.avg.last_update_time;
        se.avg.period_contrib = cfs.avg.period_contrib;
        se.avg.util_sum = static_cast<u32>(se.avg.util_avg * divider);
        se.avg.runnable_sum = se.avg.runnable_avg * divider;
        se.avg.load_sum = se.avg.load_avg * divider;
        if (se.load.weight < se.avg.load_sum)
            se.avg.load_sum /= se.load.weight;
        else
            se.avg.load_sum = 1;
        cfs.avg.load_avg += se.avg.load_avg;
        cfs.avg.load_sum += static_cast<u64>(se.load.weight) * se.avg.load_sum;
        cfs.avg.util_avg += se.avg.util_avg;
        cfs.avg.util_sum += se.avg.util_sum;
        cfs.avg.runnable_avg += se.avg.runnable_avg;
        cfs.avg.runnable_sum += se.avg.runnable_sum;
        add_tg_cfs_propagate(cfs, static_cast<long>(se.avg.load_sum));
        update_tg_load_avg(k, cfs, k.smp_processor_id(), TG_WRITE_ATTACH);
    } else if (flags & DO_DETACH) {
        // detach_entity_load_avg()
        lsub_positive(cfs.avg.load_avg, se.avg.load_avg);
        lsub_positive<u64>(cfs.avg.load_sum, static_cast<u64>(se.load.weight) * se.avg.load_sum);
        cfs.avg.load_sum = std::max<u64>(cfs.avg.load_sum, static_cast<u64>(cfs.avg.load_avg) * PELT_MIN_DIVIDER);
        lsub_positive(cfs.avg.util_avg, se.avg.util_avg);
        lsub_positive<u32>(cfs.avg.util_sum, se.avg.util_sum);
        cfs.avg.util_sum = std::max<u32>(cfs.avg.util_sum, static_cast<u32>(cfs.avg.util_avg * PELT_MIN_DIVIDER));
        lsub_positive(cfs.avg.runnable_avg, se.avg.runnable_avg);
        lsub_positive<u64>(cfs.avg.runnable_sum, se.avg.runnable_sum);
        cfs.avg.runnable_sum = std::max<u64>(cfs.avg.runnable_sum, static_cast<u64>(cfs.avg.runnable_avg) * PELT_MIN_DIVIDER);
        add_tg_cfs_propagate(cfs, -static_cast<long>(se.avg.load_sum));
        update_tg_load_avg(k, cfs, k.smp_processor_id(), TG_WRITE_DETACH);
    } else if (decayed && (flags & UPDATE_TG)) {
        update_tg_load_avg(k, cfs, k.smp_processor_id(), removed ? TG_WRITE_REMOVED : TG_WRITE_DECAY);
    }
}

/* ---- an autogroup's entity on the root cfs_rq (tg->se[cpu] on rq->cfs) ---- */

/*
 * kernel: kernel/sched/fair.c calc_group_shares(), 6.6 (== 6.18): the group's
 * shares (an autogroup's: nice 0, scale_load(NICE_0_LOAD); autogroup.c
 * autogroup_create() -> sched_create_group()) split by this CPU's group load
 * against tg->load_avg, this CPU's stale contribution there replaced by its
 * load now; in [MIN_SHARES, tg->shares], scaled (<< 10).
 */
long calc_group_shares(const cfs_rq& gcfs)
{
    constexpr long tg_shares = 1024L << 10; // tg->shares
    constexpr long min_shares = 2;          // MIN_SHARES
    const long load = std::max<long>(static_cast<long>(gcfs.load.weight),
                                     static_cast<long>(gcfs.avg.load_avg));
    long tg_weight = gcfs.tg->load_avg;
    tg_weight -= gcfs.tg_load_avg_contrib;
    tg_weight += load;
    long shares = tg_shares * load;
    if (tg_weight)
        shares /= tg_weight;
    return std::clamp(shares, min_shares, tg_shares);
}

/*
 * kernel: kernel/sched/fair.c reweight_entity(), 6.6 (6.18's PELT part is the
 * same), for a group entity on the root: a queued entity's weight leaves the
 * root's load (its runtime committed and, EEVDF, out of the avg_vruntime sums:
 * fair_policy_ops::reweight_dequeue; CFS: update_curr() of curr), its load_avg is
 * recomputed from its load_sum at the new weight, the policy adjusts its virtual
 * times and puts it back in the sums (fair_policy_ops::reweight_entity).
 */
static void reweight_tg_se(kernel& k, tg_sched_entity& tse, long shares)
{
    cfs_rq& root = tse.se.cfs_rq_->rq_->root_cfs;
    sched_entity& se = tse.se;
    u64 avruntime = 0;
    if (se.on_rq) {
        if (k.policy().reweight_dequeue)
            avruntime = k.policy().reweight_dequeue(k, root, se);
        else if (root.curr == &se)
            update_curr(k, root);
        root.load.weight -= se.load.weight;
    }
    // dequeue_load_avg()
    lsub_positive(root.avg.load_avg, tse.avg.load_avg);
    lsub_positive<u64>(root.avg.load_sum, static_cast<u64>(tse.weight()) * tse.avg.load_sum);
    root.avg.load_sum = std::max<u64>(root.avg.load_sum,
                                      static_cast<u64>(root.avg.load_avg) * PELT_MIN_DIVIDER);
    const u32 old_weight = se.load.weight;
    tse.shares = static_cast<unsigned long>(shares);
    se.load.weight = static_cast<u32>(std::max<unsigned long>(2, tse.shares >> 10)); // scale_load_down()
    tse.avg.load_avg = static_cast<unsigned long>(static_cast<u64>(tse.weight()) * tse.avg.load_sum /
                                                  get_pelt_divider(tse.avg));
    // enqueue_load_avg()
    root.avg.load_avg += tse.avg.load_avg;
    root.avg.load_sum += static_cast<u64>(tse.weight()) * tse.avg.load_sum;
    // model: the virtual times after the PELT part (the kernel's EEVDF part is before and
    // after it; the two touch disjoint fields)
    if (k.policy().reweight_entity)
        k.policy().reweight_entity(k, root, se, old_weight, avruntime);
    if (se.on_rq)
        root.load.weight += se.load.weight;
}

/*
 * kernel: kernel/sched/fair.c update_cfs_group(), 6.6, of a group entity:
 * the read of tg->load_avg (update_cfs_group() above: its line's cost), then
 * reweight_entity() if calc_group_shares() moved; 5.15.0-6.5 reweight whatever the
 * shares (kernel_behaviour::reweight_unchanged_shares: for a queued curr that commits
 * its runtime, update_curr()). 6.12+ (66951e4860d3, in 6.12.y and 6.13): an empty
 * group keeps its entity's weight, before the read.
 */
static void update_cfs_group_tg_se(kernel& k, cfs_rq& gcfs, int cpu)
{
    if (k.config().behaviour.empty_group_keeps_weight && gcfs.load.weight == 0)
        return;
    update_cfs_group(k, gcfs, cpu);
    const long shares = calc_group_shares(gcfs);
    if (static_cast<long>(gcfs.my_se->shares) != shares ||
        k.config().behaviour.reweight_unchanged_shares)
        reweight_tg_se(k, *gcfs.my_se, shares);
}

// kernel: kernel/sched/sched.h se_update_runnable(), 6.6: a group entity's runnable
// weight is its cfs_rq's h_nr_running; 6.12.10 (h_nr_running - h_nr_delayed) and 6.18.2
// (h_nr_runnable) leave the sched_delayed tasks out; nothing for a task's entity.
void se_update_runnable(sched_entity& se)
{
    if (se.my_q)
        se.my_q->my_se->runnable_weight = cfs_h_nr_runnable(*se.my_q);
}

// kernel: kernel/sched/fair.c update_cfs_group(se), 6.6: nothing for a task's entity, a
// group entity's weight from its group's shares (update_cfs_group_tg_se()).
void update_cfs_group_se(kernel& k, sched_entity& se, int cpu)
{
    if (se.my_q)
        update_cfs_group_tg_se(k, *se.my_q, cpu);
}

/*
 * kernel: kernel/sched/fair.c update_tg_cfs_util(), update_tg_cfs_runnable(),
 * update_tg_cfs_load(), 6.6 (== 6.18): the group entity takes its cfs_rq's
 * util and runnable averages as they are; its load follows the propagated
 * load_sum (an attach adds to the entity's runnable share, a detach or removal
 * takes the group's per-weight load_sum as the estimate), at its own weight.
 */
static void update_tg_cfs_util(cfs_rq& root, tg_sched_entity& se, const cfs_rq& gcfs)
{
    const long delta_avg = static_cast<long>(gcfs.avg.util_avg) - static_cast<long>(se.avg.util_avg);
    if (!delta_avg)
        return;
    const u32 divider = get_pelt_divider(root.avg);
    se.avg.util_avg = gcfs.avg.util_avg;
    const u32 new_sum = static_cast<u32>(se.avg.util_avg * divider);
    const long delta_sum = static_cast<long>(new_sum) - static_cast<long>(se.avg.util_sum);
    se.avg.util_sum = new_sum;
    pelt_add_positive(root.avg.util_avg, delta_avg);
    pelt_add_positive(root.avg.util_sum, delta_sum);
    root.avg.util_sum = std::max<u32>(root.avg.util_sum, static_cast<u32>(root.avg.util_avg * PELT_MIN_DIVIDER));
}

static void update_tg_cfs_runnable(cfs_rq& root, tg_sched_entity& se, const cfs_rq& gcfs)
{
    const long delta_avg =
        static_cast<long>(gcfs.avg.runnable_avg) - static_cast<long>(se.avg.runnable_avg);
    if (!delta_avg)
        return;
    const u32 divider = get_pelt_divider(root.avg);
    se.avg.runnable_avg = gcfs.avg.runnable_avg;
    const u32 new_sum = static_cast<u32>(se.avg.runnable_avg * divider);
    const long delta_sum = static_cast<long>(new_sum) - static_cast<long>(se.avg.runnable_sum);
    se.avg.runnable_sum = new_sum;
    pelt_add_positive(root.avg.runnable_avg, delta_avg);
    pelt_add_positive(root.avg.runnable_sum, delta_sum);
    root.avg.runnable_sum = std::max<u32>(static_cast<u32>(root.avg.runnable_sum),
                                          static_cast<u32>(root.avg.runnable_avg * PELT_MIN_DIVIDER));
}

static void update_tg_cfs_load(cfs_rq& root, tg_sched_entity& se, cfs_rq& gcfs)
{
    long runnable_sum = gcfs.prop_runnable_sum;
    if (!runnable_sum)
        return;
    gcfs.prop_runnable_sum = 0;
    const u32 divider = get_pelt_divider(root.avg);
    if (runnable_sum >= 0) {
        runnable_sum += static_cast<long>(se.avg.load_sum);
        runnable_sum = std::min<long>(runnable_sum, divider);
    } else {
        u64 load_sum = 0;
        if (gcfs.load.weight)
            load_sum = gcfs.avg.load_sum / gcfs.load.weight;
        runnable_sum = static_cast<long>(std::min<u64>(se.avg.load_sum, load_sum));
    }
    const long running_sum = static_cast<long>(se.avg.util_sum >> SCHED_CAPACITY_SHIFT);
    runnable_sum = std::max(runnable_sum, running_sum);
    const u64 load_sum = static_cast<u64>(se.weight()) * static_cast<u64>(runnable_sum);
    const unsigned long load_avg = static_cast<unsigned long>(load_sum / divider);
    const long delta_avg = static_cast<long>(load_avg) - static_cast<long>(se.avg.load_avg);
    if (!delta_avg)
        return;
    const long delta_sum =
        static_cast<long>(load_sum) - static_cast<long>(static_cast<u64>(se.weight()) * se.avg.load_sum);
    se.avg.load_sum = static_cast<u64>(runnable_sum);
    se.avg.load_avg = load_avg;
    pelt_add_positive(root.avg.load_avg, delta_avg);
    pelt_add_positive(root.avg.load_sum, delta_sum);
    root.avg.load_sum = std::max<u32>(static_cast<u32>(root.avg.load_sum),
                                      static_cast<u32>(root.avg.load_avg * PELT_MIN_DIVIDER));
}

// kernel: kernel/sched/fair.c propagate_entity_load_avg(), 6.6 (== 6.18), of a group entity.
static bool propagate_entity_load_avg(cfs_rq& gcfs)
{
    if (!gcfs.propagate)
        return false;
    gcfs.propagate = false;
    // add_tg_cfs_propagate(&rq->cfs, ...): the root has no entity above it to read it.
    cfs_rq& root = gcfs.rq_->root_cfs;
    update_tg_cfs_util(root, *gcfs.my_se, gcfs);
    update_tg_cfs_runnable(root, *gcfs.my_se, gcfs);
    update_tg_cfs_load(root, *gcfs.my_se, gcfs);
    return true;
}

/*
 * kernel: kernel/sched/fair.c update_load_avg(&rq->cfs, tg->se[cpu], flags), 6.6:
 * the group entity's PELT (queued while its group has an entity queued,
 * running while it is the root's curr, runnable by its runnable_weight, at its
 * weight), the root's (its queued entities' weight, h_nr_running, curr), then
 * the group's propagated load. A group entity is attached once, when the group
 * is created (never here), and update_tg_load_avg() of the root returns at once.
 */
void update_load_avg_tg_se(cfs_rq& gcfs, int flags)
{
    cfs_rq& root = gcfs.rq_->root_cfs;
    tg_sched_entity& se = *gcfs.my_se;
    const u64 now = gcfs.rq_->clock_task;
    if (se.avg.last_update_time && !(flags & SKIP_AGE_LOAD))
        __update_load_avg_se(now, se.avg, se.weight(), se.se.on_rq, root.curr == &se.se,
                             se.se.sched_delayed ? 0 : se.runnable_weight); // se_runnable()
    __update_load_avg_cfs_rq(now, root.avg, root.load.weight, cfs_h_nr_runnable(root),
                             root.curr != nullptr);
    propagate_entity_load_avg(gcfs);
}

/*
 * kernel: kernel/sched/fair.c update_blocked_averages() -> __update_blocked_fair(),
 * 6.6 (6.5, 6.1-rc7 and 5.15.0 the same in these steps, lane peltaudit): decay the
 * blocked load of a CPU's cfs_rqs, each by update_cfs_rq_load_avg(), which first
 * folds in the load of tasks that left while asleep (removed). Autogroup off: the
 * root only (rq->cfs, the leaf list's one cfs_rq; update_tg_load_avg() returns for
 * the root group). Autogroup on: each group's cfs_rq (removed load, decay,
 * update_tg_load_avg()), its entity unless it has nothing to carry
 * (skip_blocked_update()), then the root.
 * It stamps the jiffy (update_blocked_load_tick()) and, when no cfs_rq of the CPU has
 * load_avg or util_avg left (cfs_rq_has_blocked(); no RT, DL or IRQ signals are modelled,
 * so others_have_blocked() is false), clears rq->has_blocked_load
 * (update_blocked_load_status()); the same in 5.15.0, 6.1.0, 6.6.87, 6.12.y and 6.18.2
 * (sched_balance_update_blocked_averages() from 6.10; lane nohzcost).
 * model: every autogroup's cfs_rq in the order the groups were created (the
 * kernel walks its leaf list, which holds those with load, children first). The rq lock it
 * takes is charged by its callers that the model prices (fair_balance.cc
 * update_blocked_averages_locked()).
 */
void update_blocked_averages(kernel& k, int cpu)
{
    rq& r = k.cpu_rq(cpu);
    r.last_blocked_load_update_tick = jiffies(k);
    k.update_rq_clock(r);
    cfs_rq& cfs = r.cfs;
    k.lb().lb_stats_changed(cpu);
    auto has_blocked = [](const cfs_rq& c) { return c.avg.load_avg || c.avg.util_avg; };
    // No update_curr(): curr's runtime waits for its next update_curr() (the kernel's
    // update_blocked_averages() takes the rq lock and the clock, not curr's accounting).
    if (!cfs.tg) {
        update_cfs_rq_load_avg(r.clock_task, cfs);
        if (!has_blocked(cfs))
            r.has_blocked_load = false;
        return;
    }
    bool blocked = false;
    for (task_group* tg : k.task_groups()) {
        cfs_rq& gcfs = *tg->cfs_rq_[static_cast<std::size_t>(cpu)];
        if (update_cfs_rq_load_avg(r.clock_task, gcfs))
            update_tg_load_avg(k, gcfs, k.smp_processor_id(), TG_WRITE_BLOCKED);
        const tg_sched_entity& se = *gcfs.my_se;
        if (se.avg.load_avg || se.avg.util_avg || gcfs.propagate)
            update_load_avg_tg_se(gcfs, UPDATE_TG);
        blocked = blocked || has_blocked(gcfs);
    }
    cfs_rq& root = r.root_cfs;
    __update_load_avg_cfs_rq(r.clock_task, root.avg, root.load.weight, cfs_h_nr_runnable(root),
                             root.curr != nullptr);
    if (!blocked && !has_blocked(root))
        r.has_blocked_load = false;
}

/*
 * kernel: kernel/sched/fair.c remove_entity_load_avg(), 6.6: a task leaving
 * this CPU while asleep is synced to the cfs_rq's last update and its load
 * queued for removal at the next update there.
 */
void remove_entity_load_avg(kernel& k, sched_entity& se)
{
    cfs_rq& cfs = task_cfs_rq(k.cpu_rq(se.owner->cpu), *se.owner);
    __update_load_avg_blocked_se(cfs.avg.last_update_time, se.avg, se.load.weight);
    cfs.removed.nr++;
    cfs.removed.util_avg += se.avg.util_avg;
    cfs.removed.load_avg += se.avg.load_avg;
    cfs.removed.runnable_avg += se.avg.runnable_avg;
}

/*
 * kernel: kernel/sched/fair.c init_entity_runnable_average() +
 * post_init_entity_util_avg(), 6.6: a new task starts with its full weight
 * as load, and half the CPU's spare capacity scaled by its weight share as
 * util.
 */
void post_init_entity_util_avg(kernel& k, task_struct& p)
{
    sched_entity& se = p.se;
    se.avg = sched_avg{};
    se.avg.load_avg = se.load.weight;
    cfs_rq& cfs = task_cfs_rq(k.cpu_rq(p.cpu), p); // cfs_rq_of(se)
    const long cap =
        (static_cast<long>(capacity_of(k, p.cpu)) - static_cast<long>(cpu_util_cfs(k, p.cpu))) / 2;
    if (cap > 0) {
        if (cfs.avg.util_avg != 0) {
            se.avg.util_avg = cfs.avg.util_avg * se.load.weight / (cfs.avg.load_avg + 1);
            if (se.avg.util_avg > static_cast<unsigned long>(cap))
                se.avg.util_avg = static_cast<unsigned long>(cap);
        } else {
            se.avg.util_avg = static_cast<unsigned long>(cap);
        }
    }
    se.avg.runnable_avg = se.avg.util_avg;
}

} // namespace schedlab
