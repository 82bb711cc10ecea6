// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * PELT, per-entity load tracking (kernel/sched/pelt.c, pelt.h, sched-pelt.h
 * and the util_est helpers of kernel/sched/fair.c, v6.6), as a self-contained
 * arithmetic module.
 *
 * Model:
 * - Time. `now` and sched_avg::last_update_time are nanoseconds. As in the
 *   kernel, deltas are shifted right by 10, so the accumulation unit is 1024 ns
 *   ("~1 us") and a PELT period is 1024 such units = 1024 * 1024 ns
 *   (1.048576 ms). period_contrib counts the 1024-ns units already spent in the
 *   current, unfinished period (0..1023).
 * - Decay. A contribution n periods old is weighted by y^n, y^32 = 1/2
 *   (LOAD_AVG_PERIOD = 32, half-life ~33.5 ms of wall time).
 * - No frequency or CPU-capacity invariance: both scale factors are 1024, so
 *   the kernel's rq_clock_pelt() is just rq_clock_task(); `now` is used as is.
 * - Weights are already "scaled down" (nice 0 = 1024): scale_load_down() and
 *   se_weight() are the identity here.
 * - Only integer arithmetic runs in the update path. The decay table is built
 *   at compile time with integer fixed-point arithmetic (see pelt_detail
 *   below) and checked against the kernel's published entries in pelt_test.cc.
 *
 * Not here (fair.c or not modelled): init_entity_runnable_average() /
 * post_init_entity_util_avg() for new tasks, attach/detach/removed-load
 * propagation, update_tg_load_avg(), the rt/dl/irq/thermal PELT signals,
 * util_est of a cfs_rq's ewma (the kernel does not maintain it either).
 */
#include "sim/time.h"

#include <array>

namespace schedlab {

inline constexpr int LOAD_AVG_PERIOD = 32; ///< half-life, in periods
/// Max of a *_sum: 1024 * (1 + y + y^2 + ...), with the kernel's truncations (see below).
inline constexpr u32 LOAD_AVG_MAX = 47742;
inline constexpr u32 PELT_MIN_DIVIDER = LOAD_AVG_MAX - 1024;
inline constexpr u32 SCHED_CAPACITY_SHIFT = 10, SCHED_CAPACITY_SCALE = 1024;

/*
 * util_est, 6.6 layout (include/linux/sched.h): two fields; the 6.8 single-word
 * rework is not modelled. UTIL_AVG_UNCHANGED is kept where 6.6 keeps it: the
 * MSB of `enqueued` (0x80000000 since v5.13, commit 68d7a190682a; the kernel
 * comment that still says "LSB" is stale, 0x1 was the pre-5.13 value). It is
 * set by util_est_update() when it stores a sample and cleared by
 * cfs_se_util_change() on the next util_avg update of the task.
 */
inline constexpr u32 UTIL_EST_WEIGHT_SHIFT = 2;                    ///< EWMA weight 1/4
inline constexpr u32 UTIL_AVG_UNCHANGED = 0x80000000u;             ///< flag in util_est::enqueued
inline constexpr int UTIL_EST_MARGIN = SCHED_CAPACITY_SCALE / 100; ///< ~1% = 10

struct util_est {
    u32 enqueued = 0;
    u32 ewma = 0;
};

struct sched_avg {
    u64 last_update_time = 0; ///< ns, advanced in whole 1024-ns units
    u64 load_sum = 0;
    u64 runnable_sum = 0;
    u32 util_sum = 0;
    u32 period_contrib = 0; ///< 1024-ns units of the current partial period
    unsigned long load_avg = 0, runnable_avg = 0, util_avg = 0;
    util_est util_est_;
};

namespace pelt_detail {

/*
 * How the decay table is computed (all integer, all at compile time):
 *
 * 1. y = 2^(-1/32) is taken in Q63 fixed point (1.0 == 2^63) as five nested
 *    square roots of 0.5: sqrt(0.5) = 2^-1/2, then 2^-1/4, 2^-1/8, 2^-1/16,
 *    2^-1/32. A Q63 square root is isqrt(v << 63) on 128-bit integers
 *    (truncating; each step loses < 1 ulp = 2^-63).
 * 2. y^n (n = 0..31) is y^(n-1) * y >> 63, rounded to nearest; the error after
 *    31 steps is a few dozen ulps of 2^-63, i.e. < 2^-56 relative.
 * 3. runnable_avg_yN_inv[n] = floor((2^32 - 1) * y^n), the same definition the
 *    kernel's generator (Documentation/scheduler/sched-pelt.c) evaluates in
 *    double precision. Our error is ~2^-24 of one unit of the result, so an
 *    entry could differ from the kernel's only if the exact product lay within
 *    ~1e-7 of an integer; for all 32 entries the values were compared with the
 *    kernel's sched-pelt.h when this was written and all are identical.
 *    pelt_test.cc re-checks four of them.
 */
constexpr unsigned __int128 isqrt128(unsigned __int128 v)
{
    if (v == 0)
        return 0;
    /* Newton from above: start at a power of two >= sqrt(v). */
    int bits = 0;
    for (unsigned __int128 t = v; t != 0; t >>= 1)
        bits++;
    unsigned __int128 x = static_cast<unsigned __int128>(1) << ((bits + 1) / 2);
    for (;;) {
        unsigned __int128 next = (x + v / x) / 2;
        if (next >= x)
            return x;
        x = next;
    }
}

constexpr u64 q63_one = u64{1} << 63;

constexpr u64 q63_y()
{
    u64 v = q63_one / 2; /* 0.5 */
    for (int i = 0; i < 5; i++)
        v = static_cast<u64>(isqrt128(static_cast<unsigned __int128>(v) << 63));
    return v;
}

constexpr std::array<u32, LOAD_AVG_PERIOD> compute_runnable_avg_yN_inv()
{
    std::array<u32, LOAD_AVG_PERIOD> t{};
    const u64 y = q63_y();
    u64 yn = q63_one;
    for (int n = 0; n < LOAD_AVG_PERIOD; n++) {
        t[n] = static_cast<u32>((static_cast<unsigned __int128>(0xffffffffu) * yn) >> 63);
        yn = static_cast<u64>(
            (static_cast<unsigned __int128>(yn) * y + (static_cast<unsigned __int128>(1) << 62)) >>
            63);
    }
    return t;
}

/*
 * LOAD_AVG_MAX as the kernel's generator defines it: iterate
 * max = (max * y_inv >> 32) + 1024 with y_inv = floor((2^32 - 1) * y) until it
 * stops changing. (The exact 1024 / (1 - y) is ~47788; truncation in every step
 * makes the fixed point smaller.)
 */
constexpr u32 compute_load_avg_max(u32 y_inv)
{
    u64 max = 0, last = ~u64{0};
    while (max != last) {
        last = max;
        max = ((max * y_inv) >> 32) + 1024;
    }
    return static_cast<u32>(max);
}

} // namespace pelt_detail

/// y^n * 2^32 (saturated at 0xffffffff for n = 0), n = 0..31; see pelt_detail.
inline constexpr std::array<u32, LOAD_AVG_PERIOD> runnable_avg_yN_inv =
    pelt_detail::compute_runnable_avg_yN_inv();

static_assert(runnable_avg_yN_inv[0] == 0xffffffffu);
static_assert(pelt_detail::compute_load_avg_max(runnable_avg_yN_inv[1]) == LOAD_AVG_MAX,
              "the computed y must reproduce the kernel's LOAD_AVG_MAX");

u64 decay_load(u64 val, u64 n);
u32 __accumulate_pelt_segments(u64 periods, u32 d1, u32 d3);
u32 get_pelt_divider(const sched_avg& sa);

/// true if at least one period boundary was crossed (then call ___update_load_avg).
bool ___update_load_sum(u64 now, sched_avg& sa, unsigned long load, unsigned long runnable,
                        int running);
void ___update_load_avg(sched_avg& sa, unsigned long load);

/*
 * The pelt.c wrappers. For a task entity pass se_weight = its load weight
 * (1024 at nice 0) and runnable_weight = on_rq (se_runnable() of a task); a
 * group entity would pass its runnable_weight (group entities are not modelled).
 * For the root cfs_rq pass its load.weight, h_nr_running and curr != NULL.
 */
/// se_weight is needed: the kernel computes the blocked load_avg as se_weight(se) * load_sum /
/// divider.
bool __update_load_avg_blocked_se(u64 now, sched_avg& se_avg, unsigned long se_weight);
bool __update_load_avg_se(u64 now, sched_avg& se_avg, unsigned long se_weight, bool on_rq,
                          bool running, unsigned long runnable_weight);
bool __update_load_avg_cfs_rq(u64 now, sched_avg& cfs_avg, unsigned long cfs_load_weight,
                              unsigned long h_nr_running, bool curr_running);

/// Clears UTIL_AVG_UNCHANGED: "util_avg moved since the last util_est sample".
void cfs_se_util_change(sched_avg& avg);

/* util_est (kernel/sched/fair.c). The caller checks sched_feat(UTIL_EST). */
unsigned long task_util(const sched_avg& task_avg);      ///< util_avg
unsigned long _task_util_est(const sched_avg& task_avg); ///< max(ewma, enqueued & ~flag)
/// The kernel's task_util_est(): max(task_util, _task_util_est). NB: includes util_avg.
unsigned long task_util_est(const sched_avg& task_avg);
void util_est_enqueue(util_est& cfs_rq_ue, const sched_avg& task_avg);
void util_est_dequeue(util_est& cfs_rq_ue, const sched_avg& task_avg);
bool within_margin(int value, int margin);
/// fastup = sched_feat(UTIL_EST_FASTUP) (default on in 6.6);
/// cpu_capacity_orig = capacity_orig_of(task's CPU), 1024 without asymmetric capacities.
void util_est_update(util_est& task_ue, const sched_avg& task_avg, bool task_sleep,
                     unsigned long cpu_capacity_orig, bool fastup);

} // namespace schedlab
