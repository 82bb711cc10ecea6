// SPDX-License-Identifier: GPL-2.0-only
/*
 * PELT as the fair class drives it (kernel/sched/fair.c, 6.6): entity and
 * cfs_rq averages updated at enqueue, dequeue, pick, put and tick; load
 * attached and detached on migration, with the "removed" accumulator for
 * tasks that migrate while asleep; util_est; and the readers the placement
 * and balancing code uses (cpu_load, cpu_util_cfs, ...). The arithmetic is
 * in pelt.cc.
 *
 * Task groups: every benchmark task belongs to one autogroup (the session's,
 * as when a benchmark is started from one shell with autogroup on), which
 * is the only task in the root group. Scheduling inside one group is the
 * same as flat scheduling, so the model keeps one cfs_rq per CPU and tracks
 * the group only where it matters: tg->load_avg and its update rule
 * (update_tg_load_avg), each write a transfer of one contended cache line,
 * and its readers (update_cfs_group), who pay for the line when it moved.
 * Differs: task_h_load() is the task's own load (the group's share of the
 * root is not applied), so absolute load figures are per-task, not scaled by
 * the group's shares. Nor is it only a scale: the kernel's cpu_load() reads
 * the root cfs_rq, whose load is the group entity's (weighted by
 * calc_group_shares(), averaged while that entity is runnable), not the sum of
 * the CPU's task loads, so wake_affine_weight()'s two sides compare differently
 * (a CPU full of blocked tasks weighs the sum of their loads here): where the
 * replays of the messaging traces gather their groups (docs/replay.md, "Where
 * replayed wakeups land").
 */
#include "sched/core.h"

#include <algorithm>

namespace schedlab {

namespace {
template <typename T> void lsub_positive(T& v, T sub) { v = v > sub ? v - sub : 0; }
} // namespace

unsigned long capacity_of(const kernel& k, int cpu) { return k.mach().cpus[cpu].capacity; }
unsigned long cpu_load(const rq& r) { return r.cfs.avg.load_avg; }
unsigned long cpu_runnable(const rq& r) { return r.cfs.avg.runnable_avg; }

// kernel: kernel/sched/fair.c cpu_util_cfs() -> cpu_util(cpu, NULL, -1, 0), 6.6.
unsigned long cpu_util_cfs(const kernel& k, int cpu)
{
    const cfs_rq& cfs = k.cpu_rq(cpu).cfs;
    unsigned long util = cfs.avg.util_avg;
    if (sched_feat_of(k, UTIL_EST))
        util = std::max<unsigned long>(util, cfs.avg.util_est_.enqueued);
    return std::min<unsigned long>(util, capacity_of(k, cpu));
}

// kernel: kernel/sched/fair.c cpu_util_cfs_boost() -> cpu_util(cpu, NULL, -1, 1), 6.5+ ("runnable boosting").
unsigned long cpu_util_cfs_boost(const kernel& k, int cpu)
{
    const cfs_rq& cfs = k.cpu_rq(cpu).cfs;
    unsigned long util = std::max<unsigned long>(cfs.avg.util_avg, cfs.avg.runnable_avg);
    if (sched_feat_of(k, UTIL_EST))
        util = std::max<unsigned long>(util, cfs.avg.util_est_.enqueued);
    return std::min<unsigned long>(util, capacity_of(k, cpu));
}

// kernel: kernel/sched/fair.c cpu_load_without(), 6.6.
unsigned long cpu_load_without(const rq& r, const task_struct& p)
{
    if (r.cpu != p.cpu || !p.se.avg.last_update_time)
        return cpu_load(r);
    unsigned long load = r.cfs.avg.load_avg;
    lsub_positive(load, task_h_load(p));
    return load;
}

// kernel: kernel/sched/fair.c cpu_runnable_without(), 6.6.
unsigned long cpu_runnable_without(const rq& r, const task_struct& p)
{
    if (r.cpu != p.cpu || !p.se.avg.last_update_time)
        return cpu_runnable(r);
    unsigned long runnable = r.cfs.avg.runnable_avg;
    lsub_positive(runnable, p.se.avg.runnable_avg);
    return runnable;
}

// kernel: kernel/sched/fair.c cpu_util_without() -> cpu_util(cpu, p, -1, 0), 6.6.
unsigned long cpu_util_without(const kernel& k, int cpu, const task_struct& p)
{
    if (cpu != p.cpu || !p.se.avg.last_update_time)
        return cpu_util_cfs(k, cpu);
    const cfs_rq& cfs = k.cpu_rq(cpu).cfs;
    unsigned long util = cfs.avg.util_avg;
    lsub_positive(util, task_util(p.se.avg));
    if (sched_feat_of(k, UTIL_EST)) {
        unsigned long estimated = cfs.avg.util_est_.enqueued;
        if (task_on_rq_queued(p) || p.on_cpu)
            lsub_positive(estimated, _task_util_est(p.se.avg));
        util = std::max(util, estimated);
    }
    return std::min<unsigned long>(util, capacity_of(k, cpu));
}

// kernel: kernel/sched/fair.c task_h_load(), 6.6 - root group only (see the file comment).
unsigned long task_h_load(const task_struct& p) { return p.se.avg.load_avg; }

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
void update_tg_load_avg(kernel& k, cfs_rq& cfs, int cpu)
{
    if (!cfs.tg)
        return;
    for (const auto hook : k.patches().update_tg_load_avg) // the v6.7 ratelimit
        if (hook(k, cfs))
            return;
    const long delta = static_cast<long>(cfs.avg.load_avg) - cfs.tg_load_avg_contrib;
    if (std::abs(delta) > cfs.tg_load_avg_contrib / 64) {
        cfs.tg->load_avg += delta;
        cfs.tg->load_avg_updates++;
        // atomic_long_add() on the group's shared line: its transfer is the contention.
        k.charges().lock_and_charge(cfs.tg->load_avg_line, cpu, k.charges().params().atomic_op);
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
    u64& seen = k.cpu_rq(cpu).cfs.tg_load_avg_seen; // this CPU's cached copy
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
            k.charges().charge_cpu(r, wait, ACCT_LOCK_SPIN);
        }
        k.charges().charge_cpu(r, k.charges().params().line_llc, ACCT_LOCK_HOLD);
        return;
    }
    const sim_dur wait = line.busy_until > t ? line.busy_until - t : 0;
    const sim_dur transfer = k.charges().cm().line_cost(line.last_cpu, cpu);
    line.busy_until = t + wait + transfer;
    llc.version = line.acquisitions;
    llc.ready = line.busy_until;
    if (wait > 0) {
        tg.load_avg_read_wait += wait;
        k.charges().charge_cpu(r, wait, ACCT_LOCK_SPIN);
    }
    k.charges().charge_cpu(r, transfer, ACCT_LOCK_HOLD);
}

/*
 * kernel: kernel/sched/fair.c update_load_avg() with attach/detach_entity_load_avg()
 * and update_cfs_rq_load_avg(), 6.6 (no propagation: no group entities).
 */
void update_load_avg(kernel& k, cfs_rq& cfs, sched_entity& se, int flags)
{
    const u64 now = cfs.rq_->clock_task;
    const bool running = cfs.curr == &se;
    k.lb().lb_stats_changed(cfs.rq_->cpu);
    if (se.avg.last_update_time && !(flags & SKIP_AGE_LOAD))
        __update_load_avg_se(now, se.avg, se.load.weight, se.on_rq, running, se.on_rq ? 1 : 0);

    // update_cfs_rq_load_avg(): first fold in load removed by migrations
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
        cfs.removed = {};
        decayed = true;
    }
    decayed |= __update_load_avg_cfs_rq(now, cfs.avg, cfs.load.weight, cfs.h_nr_running,
                                        cfs.curr != nullptr);

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
        update_tg_load_avg(k, cfs, k.smp_processor_id());
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
        update_tg_load_avg(k, cfs, k.smp_processor_id());
    } else if (decayed && (flags & UPDATE_TG)) {
        update_tg_load_avg(k, cfs, k.smp_processor_id());
    }
}

/*
 * kernel: kernel/sched/fair.c update_blocked_averages(), 6.6: decay the
 * blocked load of an idle CPU's cfs_rq (root only).
 */
void update_blocked_averages(kernel& k, int cpu)
{
    rq& r = k.cpu_rq(cpu);
    k.update_rq_clock(r);
    cfs_rq& cfs = r.cfs;
    k.lb().lb_stats_changed(cpu);
    if (cfs.curr)
        update_curr(k, cfs);
    __update_load_avg_cfs_rq(r.clock_task, cfs.avg, cfs.load.weight, cfs.h_nr_running,
                             cfs.curr != nullptr);
}

/*
 * kernel: kernel/sched/fair.c remove_entity_load_avg(), 6.6: a task leaving
 * this CPU while asleep is synced to the cfs_rq's last update and its load
 * queued for removal at the next update there.
 */
void remove_entity_load_avg(kernel& k, sched_entity& se)
{
    cfs_rq& cfs = k.cpu_rq(se.owner->cpu).cfs;
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
    cfs_rq& cfs = k.cpu_rq(p.cpu).cfs;
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
