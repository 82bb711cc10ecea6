// SPDX-License-Identifier: GPL-2.0-only
/*
 * PELT arithmetic (see pelt.h for the model: ns clock >> 10, no invariance,
 * integer-only updates). No tracepoints (trace_pelt_*_tp, trace_sched_util_est_*)
 * and no READ_ONCE/WRITE_ONCE: the simulator is single-threaded.
 */
#include "sched/pelt.h"

#include <algorithm>

namespace schedlab {

// kernel: kernel/sched/pelt.c decay_load(), v6.6: same (mul_u64_u32_shr via __int128).
u64 decay_load(u64 val, u64 n)
{
    /* Beyond 63 half-lives every u64 has been shifted to zero. */
    if (n > static_cast<u64>(LOAD_AVG_PERIOD) * 63)
        return 0;
    /* y^n = (1/2)^(n / 32) * y^(n % 32): shift for whole half-lives, table for the rest. */
    if (n >= static_cast<u64>(LOAD_AVG_PERIOD)) {
        val >>= n / LOAD_AVG_PERIOD;
        n %= LOAD_AVG_PERIOD;
    }
    return static_cast<u64>((static_cast<unsigned __int128>(val) * runnable_avg_yN_inv[n]) >> 32);
}

// kernel: kernel/sched/pelt.c __accumulate_pelt_segments(), v6.6: same.
u32 __accumulate_pelt_segments(u64 periods, u32 d1, u32 d3)
{
    /*
     * The elapsed time is d1 (rest of the period that was open), then
     * periods - 1 full periods, then d3 (start of the now-open period).
     * d1 is weighted y^periods, the full periods 1024 * (y^1 + ... + y^(p-1)),
     * written as LOAD_AVG_MAX - LOAD_AVG_MAX * y^p - 1024 (sum from 0 to
     * infinity, minus the tail from p on, minus the n = 0 term), and d3 by 1.
     */
    const u32 c1 = static_cast<u32>(decay_load(d1, periods));
    const u32 c2 = LOAD_AVG_MAX - static_cast<u32>(decay_load(LOAD_AVG_MAX, periods)) - 1024;
    const u32 c3 = d3;
    return c1 + c2 + c3;
}

// kernel: kernel/sched/pelt.h get_pelt_divider(), v6.6: same.
u32 get_pelt_divider(const sched_avg& sa)
{
    return PELT_MIN_DIVIDER + sa.period_contrib;
}

namespace {

// kernel: kernel/sched/pelt.c accumulate_sum(), v6.6: same (invariance is in the clock).
u64 accumulate_sum(u64 delta, sched_avg& sa, unsigned long load, unsigned long runnable,
                   int running)
{
    u32 contrib = static_cast<u32>(delta); /* no boundary crossed: delta < 1024 */

    delta += sa.period_contrib;
    const u64 periods = delta / 1024;

    if (periods) {
        /* Step 1: age what was accumulated so far. */
        sa.load_sum = decay_load(sa.load_sum, periods);
        sa.runnable_sum = decay_load(sa.runnable_sum, periods);
        sa.util_sum = static_cast<u32>(decay_load(sa.util_sum, periods));

        /*
         * Step 2: the new contribution. With load == 0, runnable and running are
         * 0 too (___update_load_sum), so contrib is unused and not computed.
         */
        delta %= 1024;
        if (load)
            contrib = __accumulate_pelt_segments(periods, 1024 - sa.period_contrib,
                                                 static_cast<u32>(delta));
    }
    sa.period_contrib = static_cast<u32>(delta);

    if (load)
        sa.load_sum += static_cast<u64>(load) * contrib;
    if (runnable)
        sa.runnable_sum += (static_cast<u64>(runnable) * contrib) << SCHED_CAPACITY_SHIFT;
    if (running)
        sa.util_sum += contrib << SCHED_CAPACITY_SHIFT;

    return periods;
}

} // namespace

// kernel: kernel/sched/pelt.c ___update_load_sum(), v6.6: same, returns bool instead of int.
bool ___update_load_sum(u64 now, sched_avg& sa, unsigned long load, unsigned long runnable,
                        int running)
{
    u64 delta = now - sa.last_update_time;
    /* Time going backwards: resynchronise, accumulate nothing. */
    if (static_cast<s64>(delta) < 0) {
        sa.last_update_time = now;
        return false;
    }

    /* 1024 ns units; the sub-unit remainder stays in now - last_update_time. */
    delta >>= 10;
    if (!delta)
        return false;
    sa.last_update_time += delta << 10;

    /* running implies runnable implies load; an entity without load counts as idle. */
    if (!load)
        runnable = running = 0;

    return accumulate_sum(delta, sa, load, runnable, running) != 0;
}

// kernel: kernel/sched/pelt.c ___update_load_avg(), v6.6: same (no WRITE_ONCE needed).
void ___update_load_avg(sched_avg& sa, unsigned long load)
{
    const u32 divider = get_pelt_divider(sa);
    sa.load_avg = static_cast<unsigned long>(load * sa.load_sum / divider);
    sa.runnable_avg = static_cast<unsigned long>(sa.runnable_sum / divider);
    sa.util_avg = sa.util_sum / divider;
}

// kernel: kernel/sched/pelt.h cfs_se_util_change(), v6.6: no sched_feat(UTIL_EST) test.
void cfs_se_util_change(sched_avg& avg)
{
    /* Only util_est_update() sets the flag, so without UTIL_EST this is a no-op anyway. */
    if (!(avg.util_est_.enqueued & UTIL_AVG_UNCHANGED))
        return;
    avg.util_est_.enqueued &= ~UTIL_AVG_UNCHANGED;
}

// kernel: kernel/sched/pelt.c __update_load_avg_blocked_se(), v6.6: se_weight passed in.
bool __update_load_avg_blocked_se(u64 now, sched_avg& se_avg, unsigned long se_weight)
{
    if (___update_load_sum(now, se_avg, 0, 0, 0)) {
        ___update_load_avg(se_avg, se_weight);
        return true;
    }
    return false;
}

// kernel: kernel/sched/pelt.c __update_load_avg_se(), v6.6: the se/cfs_rq fields passed in.
bool __update_load_avg_se(u64 now, sched_avg& se_avg, unsigned long se_weight, bool on_rq,
                          bool running, unsigned long runnable_weight)
{
    /* load = !!on_rq, runnable = se_runnable(se), running = (cfs_rq->curr == se). */
    if (___update_load_sum(now, se_avg, on_rq ? 1 : 0, runnable_weight, running ? 1 : 0)) {
        ___update_load_avg(se_avg, se_weight);
        cfs_se_util_change(se_avg);
        return true;
    }
    return false;
}

// kernel: kernel/sched/pelt.c __update_load_avg_cfs_rq(), v6.6: the cfs_rq fields passed in.
bool __update_load_avg_cfs_rq(u64 now, sched_avg& cfs_avg, unsigned long cfs_load_weight,
                              unsigned long h_nr_running, bool curr_running)
{
    /* load = scale_load_down(load.weight) (weights are stored scaled down here). */
    if (___update_load_sum(now, cfs_avg, cfs_load_weight, h_nr_running, curr_running ? 1 : 0)) {
        ___update_load_avg(cfs_avg, 1);
        return true;
    }
    return false;
}

// kernel: kernel/sched/fair.c task_util(), v6.6: same (no uclamp).
unsigned long task_util(const sched_avg& task_avg)
{
    return task_avg.util_avg;
}

// kernel: kernel/sched/fair.c _task_util_est(), v6.6: same.
unsigned long _task_util_est(const sched_avg& task_avg)
{
    const util_est ue = task_avg.util_est_;
    return std::max<unsigned long>(ue.ewma, ue.enqueued & ~UTIL_AVG_UNCHANGED);
}

// kernel: kernel/sched/fair.c task_util_est(), v6.6: same.
unsigned long task_util_est(const sched_avg& task_avg)
{
    return std::max(task_util(task_avg), _task_util_est(task_avg));
}

// kernel: kernel/sched/fair.c util_est_enqueue(), v6.6: root cfs_rq; caller tests UTIL_EST.
void util_est_enqueue(util_est& cfs_rq_ue, const sched_avg& task_avg)
{
    u32 enqueued = cfs_rq_ue.enqueued;
    enqueued += static_cast<u32>(_task_util_est(task_avg));
    cfs_rq_ue.enqueued = enqueued;
}

// kernel: kernel/sched/fair.c util_est_dequeue(), v6.6: root cfs_rq; caller tests UTIL_EST.
void util_est_dequeue(util_est& cfs_rq_ue, const sched_avg& task_avg)
{
    u32 enqueued = cfs_rq_ue.enqueued;
    enqueued -= std::min(enqueued, static_cast<u32>(_task_util_est(task_avg)));
    cfs_rq_ue.enqueued = enqueued;
}

// kernel: kernel/sched/fair.c within_margin(), v6.6: same; true iff -margin < value < margin.
bool within_margin(int value, int margin)
{
    return static_cast<unsigned>(value + margin - 1) < static_cast<unsigned>(2 * margin - 1);
}

// kernel: kernel/sched/fair.c util_est_update(), v6.6: FASTUP, capacity_orig passed in.
void util_est_update(util_est& task_ue, const sched_avg& task_avg, bool task_sleep,
                     unsigned long cpu_capacity_orig, bool fastup)
{
    /* Only a completed activation (a sleep) gives a sample, not e.g. a migration. */
    if (!task_sleep)
        return;

    /* util_avg has not moved since the last sample: nothing new to learn. */
    util_est ue = task_ue;
    if (ue.enqueued & UTIL_AVG_UNCHANGED)
        return;

    long last_enqueued_diff = ue.enqueued;

    /* Increases are taken at once (fast-up); the EWMA only smooths decreases. */
    ue.enqueued = static_cast<u32>(task_util(task_avg));
    if (fastup && ue.ewma < ue.enqueued) {
        ue.ewma = ue.enqueued;
    } else {
        const long last_ewma_diff = static_cast<long>(ue.enqueued) - static_cast<long>(ue.ewma);
        last_enqueued_diff -= ue.enqueued;
        if (within_margin(static_cast<int>(last_ewma_diff), UTIL_EST_MARGIN)) {
            /* EWMA already within 1%: store the new `enqueued` only if it moved by >= 1%. */
            if (within_margin(static_cast<int>(last_enqueued_diff), UTIL_EST_MARGIN))
                return;
        } else {
            /* A task that does not fit the CPU leaves no idle time to measure its size. */
            if (task_util(task_avg) > cpu_capacity_orig)
                return;
            /*
             * ewma' = ewma + (sample - ewma) / 4, computed as
             * (4 * ewma + (sample - ewma)) >> 2 like the kernel; the sum is
             * 3 * ewma + sample >= 0, so the shift acts on a non-negative value.
             */
            const s64 e = (static_cast<s64>(ue.ewma) << UTIL_EST_WEIGHT_SHIFT) + last_ewma_diff;
            ue.ewma = static_cast<u32>(e >> UTIL_EST_WEIGHT_SHIFT);
        }
    }

    ue.enqueued |= UTIL_AVG_UNCHANGED;
    task_ue = ue;
}

} // namespace schedlab
