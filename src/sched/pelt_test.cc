// SPDX-License-Identifier: GPL-2.0-only
/*
 * PELT arithmetic against independently computed values. Expected numbers
 * come from the closed forms of the geometric decay (y = 0.5 ** (1/32)), from
 * hand arithmetic written next to each check, or from the kernel's published
 * sched-pelt.h entries; none is produced by the code under test. A "period" is
 * P = 1024 * 1024 ns.
 */
#include "sched/pelt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace schedlab {
namespace {

constexpr u64 P = 1024 * 1024; // one PELT period, ns

/* A task entity driven through run / wait / sleep phases, updated every `tick` ns. */
struct task_sim {
    sched_avg sa;
    u64 now = 0;
    unsigned long weight = 1024;
    u64 tick = 1'000'000;

    void phase(u64 ns, bool on_rq, bool running)
    {
        const u64 end = now + ns;
        while (now < end) {
            now = std::min(end, now + tick);
            __update_load_avg_se(now, sa, weight, on_rq, running, on_rq ? 1 : 0);
        }
    }
    void run(u64 ns) { phase(ns, true, true); }
    void wait(u64 ns) { phase(ns, true, false); }
    void sleep(u64 ns) { phase(ns, false, false); }
};

/* ---- decay_load and its table ---------------------------------------------------------- */

TEST(decay_load, table_entries_equal_the_kernels_published_values)
{
    /* kernel/sched/sched-pelt.h (v6.6), entries 0, 1, 16 and 31. */
    EXPECT_EQ(runnable_avg_yN_inv[0], 0xffffffffu);
    EXPECT_EQ(runnable_avg_yN_inv[1], 0xfa83b2dau);
    EXPECT_EQ(runnable_avg_yN_inv[16], 0xb504f333u); // 2^32 / sqrt(2), truncated
    EXPECT_EQ(runnable_avg_yN_inv[31], 0x82cd8698u);
    for (int n = 1; n < LOAD_AVG_PERIOD; n++)
        EXPECT_LT(runnable_avg_yN_inv[n], runnable_avg_yN_inv[n - 1]) << n;
}

TEST(decay_load, halves_every_32_periods)
{
    /*
     * n = 32k shifts by k and then multiplies by entry 0 = 2^32 - 1, i.e.
     * m * (2^32 - 1) >> 32 = m - 1 for 1 <= m <= 2^32: x/2^k less one unit of
     * truncation.
     */
    const u64 x = u64{1} << 30;
    EXPECT_EQ(decay_load(x, 0), x - 1);
    EXPECT_EQ(decay_load(x, 32), (x >> 1) - 1);
    EXPECT_EQ(decay_load(x, 64), (x >> 2) - 1);
    EXPECT_EQ(decay_load(x, 320), (x >> 10) - 1);
    EXPECT_EQ(decay_load(47742, 32), 23870u); // 23871 - 1
}

TEST(decay_load, matches_y_to_the_n_within_rounding)
{
    /* python3: [int((1 << 30) * 0.5 ** (n / 32)) for n in (1, 5, 16, 31, 45, 100)] */
    const u64 x = u64{1} << 30;
    EXPECT_NEAR(double(decay_load(x, 1)), 1050733750.0, 2.0);
    EXPECT_NEAR(double(decay_load(x, 5)), 963527097.0, 2.0);
    EXPECT_NEAR(double(decay_load(x, 16)), 759250124.0, 2.0);
    EXPECT_NEAR(double(decay_load(x, 31)), 548626854.0, 2.0);
    EXPECT_NEAR(double(decay_load(x, 45)), 405113241.0, 2.0);
    EXPECT_NEAR(double(decay_load(x, 100)), 123078199.0, 2.0);
    EXPECT_EQ(decay_load(x, 1000), 0u); // 2^30 * y^1000 = 0.42
}

TEST(decay_load, is_zero_beyond_63_half_lives_and_not_before)
{
    const u64 all = ~u64{0};
    EXPECT_EQ(decay_load(all, 32 * 63 + 1), 0u);
    EXPECT_EQ(decay_load(all, 32 * 64), 0u); // must not reach a 64-bit shift by 64
    EXPECT_EQ(decay_load(all, ~u64{0}), 0u);
    /* (2^64 - 1) >> 62 = 3; 3 * (2^32 - 1) >> 32 = 2 */
    EXPECT_EQ(decay_load(all, 32 * 62), 2u);
}

TEST(decay_load, load_avg_max_is_the_fixed_point_of_one_decayed_period_plus_1024)
{
    /*
     * LOAD_AVG_MAX is the limit of max = max * y + 1024 with the kernel's
     * truncations: 47742 * 0xfa83b2da >> 32 = 46718 (python3), + 1024 = 47742.
     * The untruncated limit 1024 / (1 - y) is 47788.08.
     */
    EXPECT_EQ(decay_load(LOAD_AVG_MAX, 1) + 1024, LOAD_AVG_MAX);
}

/* ---- __accumulate_pelt_segments ------------------------------------------------------------ */

TEST(__accumulate_pelt_segments, one_boundary_decays_only_the_first_segment)
{
    /* c1 = 500 * 0xfa83b2da >> 32 = 489 (python3), c2 = 47742 - 46718 - 1024 = 0, c3 = 300 */
    EXPECT_EQ(__accumulate_pelt_segments(1, 500, 300), 489u + 300u);
}

TEST(__accumulate_pelt_segments, full_periods_sum_to_1024_times_the_geometric_series)
{
    /*
     * 1024 * (y + ... + y^9), by the kernel's closed form
     * LOAD_AVG_MAX * (1 - y^10) - 1024 = 8273.99 (python3). The truncated
     * LOAD_AVG_MAX (47742 < 47788.08) puts it ~9 below the exact series
     * 1024 * sum(0.5 ** (k / 32) for k in range(1, 10)) = 8282.96, as in the kernel.
     */
    EXPECT_NEAR(double(__accumulate_pelt_segments(10, 0, 0)), 8273.99, 1.0);
    EXPECT_NEAR(double(__accumulate_pelt_segments(10, 0, 0)), 8282.96, 10.0);
    /* After more than 63 half-lives the series is complete: LOAD_AVG_MAX - 1024. */
    EXPECT_EQ(__accumulate_pelt_segments(3000, 1024, 7), 46718u + 7u);
}

/* ---- get_pelt_divider --------------------------------------------------------------------------
 */

TEST(get_pelt_divider, is_the_min_divider_plus_the_open_period)
{
    sched_avg sa;
    EXPECT_EQ(get_pelt_divider(sa), 46718u); // 47742 - 1024
    sa.period_contrib = 1023;
    EXPECT_EQ(get_pelt_divider(sa), 47741u);

    /* 1.5 periods = 1536 units of 1024 ns: one boundary, 512 units into the next period. */
    sched_avg s2;
    ___update_load_sum(P + P / 2, s2, 1, 1, 1);
    EXPECT_EQ(s2.period_contrib, 512u);
    EXPECT_EQ(get_pelt_divider(s2), 46718u + 512u);
}

/* ---- ___update_load_sum / ___update_load_avg --------------------------------------------------
 */

TEST(___update_load_sum, does_nothing_when_less_than_1024_ns_passed)
{
    sched_avg sa;
    sa.last_update_time = 1000;
    EXPECT_FALSE(___update_load_sum(1000 + 1023, sa, 1, 1, 1));
    EXPECT_EQ(sa.last_update_time, 1000u);
    EXPECT_EQ(sa.load_sum, 0u);
    EXPECT_EQ(sa.util_sum, 0u);
    EXPECT_EQ(sa.period_contrib, 0u);

    /* One unit: accounted, but no boundary crossed, so no new averages. */
    EXPECT_FALSE(___update_load_sum(1000 + 1024, sa, 1, 1, 1));
    EXPECT_EQ(sa.last_update_time, 1000u + 1024u);
    EXPECT_EQ(sa.load_sum, 1u);
    EXPECT_EQ(sa.runnable_sum, 1024u);
    EXPECT_EQ(sa.util_sum, 1024u);
    EXPECT_EQ(sa.period_contrib, 1u);
}

TEST(___update_load_sum, keeps_the_sub_microsecond_remainder_for_the_next_update)
{
    sched_avg sa;
    ___update_load_sum(1500, sa, 1, 1, 1); // 1 unit, 476 ns left over
    EXPECT_EQ(sa.last_update_time, 1024u);
    ___update_load_sum(2600, sa, 1, 1, 1); // 2600 - 1024 = 1576 ns: 1 more unit
    EXPECT_EQ(sa.last_update_time, 2048u);
    EXPECT_EQ(sa.load_sum, 2u);
}

TEST(___update_load_sum, reports_a_crossed_period_boundary_only)
{
    sched_avg sa;
    EXPECT_FALSE(___update_load_sum(1023 * 1024, sa, 1, 1, 1));
    EXPECT_EQ(sa.period_contrib, 1023u);
    EXPECT_TRUE(___update_load_sum(1024 * 1024, sa, 1, 1, 1));
    EXPECT_EQ(sa.period_contrib, 0u);
    /*
     * The 1024 units were accumulated as 1023 + 1, and on crossing the
     * boundary the whole first period decays once: (1023 + 1) * y, where
     * __accumulate_pelt_segments(1, 1, 0) = decay_load(1, 1) = 0 for the last unit.
     * python3: 1023 * 0xfa83b2da >> 32 = 1001
     */
    EXPECT_EQ(sa.load_sum, 1001u);
}

TEST(___update_load_sum, time_going_backwards_resynchronises_without_accumulating)
{
    sched_avg sa;
    sa.last_update_time = 10'000;
    EXPECT_FALSE(___update_load_sum(5'000, sa, 1, 1, 1));
    EXPECT_EQ(sa.last_update_time, 5'000u);
    EXPECT_EQ(sa.load_sum, 0u);
}

TEST(___update_load_sum, without_load_runnable_and_running_count_as_idle)
{
    sched_avg sa;
    EXPECT_TRUE(___update_load_sum(3 * P, sa, 0, 1, 1));
    EXPECT_EQ(sa.load_sum, 0u);
    EXPECT_EQ(sa.runnable_sum, 0u);
    EXPECT_EQ(sa.util_sum, 0u);
}

TEST(___update_load_sum, within_a_period_contributions_add_up_linearly)
{
    sched_avg sa;
    ___update_load_sum(100 * 1024, sa, 3, 2, 1);
    EXPECT_EQ(sa.load_sum, 300u);             // load * units
    EXPECT_EQ(sa.runnable_sum, 200u * 1024u); // runnable * units << 10
    EXPECT_EQ(sa.util_sum, 100u * 1024u);     // units << 10
}

TEST(___update_load_avg, divides_the_sums_by_the_divider)
{
    sched_avg sa;
    sa.period_contrib = 0; // divider 46718
    sa.load_sum = 23359;   // half of it
    sa.runnable_sum = 46718ull * 1536;
    sa.util_sum = 46718u * 512;
    ___update_load_avg(sa, 2048);
    EXPECT_EQ(sa.load_avg, 1024u); // 2048 * 23359 / 46718
    EXPECT_EQ(sa.runnable_avg, 1536u);
    EXPECT_EQ(sa.util_avg, 512u);
    sa.period_contrib = 1000; // divider 47718: 46718 * 512 / 47718 = 501.27
    ___update_load_avg(sa, 2048);
    EXPECT_EQ(sa.util_avg, 501u);
}

/* ---- __update_load_avg_se: whole trajectories ----------------------------------------------- */

TEST(__update_load_avg_se, an_always_running_task_converges_to_full_util_and_its_weight)
{
    /* Residual after 500 ms: 1024 * y ** (500e6 / P) = 0.03 (python3). */
    task_sim t;
    t.run(500'000'000);
    EXPECT_NEAR(double(t.sa.util_avg), 1024.0, 3.0);
    EXPECT_NEAR(double(t.sa.runnable_avg), 1024.0, 3.0);
    EXPECT_NEAR(double(t.sa.load_avg), 1024.0, 3.0);

    task_sim n5; // nice 5
    n5.weight = 335;
    n5.run(500'000'000);
    EXPECT_NEAR(double(n5.sa.load_avg), 335.0, 2.0);
    EXPECT_NEAR(double(n5.sa.util_avg), 1024.0, 3.0); // util does not depend on weight
}

TEST(__update_load_avg_se, util_reaches_half_after_one_half_life_from_zero)
{
    /*
     * 1024 * (1 - y ** p) after p periods: p = 16 -> 299.92, p = 32 -> 512,
     * and at 32 ms (30.52 periods) 495.29 (python3).
     */
    task_sim a;
    a.run(16 * P);
    EXPECT_NEAR(double(a.sa.util_avg), 299.92, 3.0);
    a.run(16 * P);
    EXPECT_NEAR(double(a.sa.util_avg), 512.0, 3.0);

    task_sim b;
    b.run(32'000'000);
    EXPECT_NEAR(double(b.sa.util_avg), 495.29, 6.0); // last boundary at 30 periods: +-1 period
    EXPECT_LT(b.sa.util_avg, 512u);
}

TEST(__update_load_avg_se, a_task_running_one_ms_in_four_converges_to_a_quarter)
{
    /*
     * Continuous model (python3), T = 4e6 / P, r = 1e6 / P periods:
     *   peak   = 1024 * (1 - y**r) / (1 - y**T)       = 263.99
     *   trough = peak * y ** (T - r)                  = 248.12
     *   mean   = 1024 * r / T                         = 256
     * PELT only decays at period boundaries, so the sampled extremes are
     * allowed a few units of slack (measured: 264, 248, 255.8).
     */
    task_sim t;
    for (int i = 0; i < 150; i++) { // 600 ms: long past convergence
        t.run(1'000'000);
        t.sleep(3'000'000);
    }
    unsigned long lo = ~0ul, hi = 0;
    u64 sum = 0, samples = 0;
    for (int i = 0; i < 50; i++) {
        t.run(1'000'000);
        hi = std::max(hi, t.sa.util_avg);
        lo = std::min(lo, t.sa.util_avg);
        sum += t.sa.util_avg, samples++;
        for (int ms = 0; ms < 3; ms++) {
            t.sleep(1'000'000);
            hi = std::max(hi, t.sa.util_avg);
            lo = std::min(lo, t.sa.util_avg);
            sum += t.sa.util_avg, samples++;
        }
    }
    EXPECT_NEAR(double(hi), 263.99, 4.0);
    EXPECT_NEAR(double(lo), 248.12, 4.0);
    EXPECT_NEAR(double(sum) / double(samples), 256.0, 2.0);
    EXPECT_NEAR(double(t.sa.load_avg), double(t.sa.util_avg), 2.0); // runnable == running here
}

TEST(__update_load_avg_se, a_waiting_task_has_load_and_runnable_but_no_util)
{
    task_sim t;
    t.wait(500'000'000);
    EXPECT_NEAR(double(t.sa.load_avg), 1024.0, 3.0);
    EXPECT_NEAR(double(t.sa.runnable_avg), 1024.0, 3.0);
    EXPECT_EQ(t.sa.util_avg, 0u);
}

TEST(__update_load_avg_se, clears_util_avg_unchanged_only_when_the_averages_are_updated)
{
    sched_avg sa;
    sa.util_est_.enqueued = 300 | UTIL_AVG_UNCHANGED;
    __update_load_avg_se(1000 * 1024, sa, 1024, true, true, 1); // no boundary
    EXPECT_EQ(sa.util_est_.enqueued, 300u | UTIL_AVG_UNCHANGED);
    __update_load_avg_se(P, sa, 1024, true, true, 1); // boundary
    EXPECT_EQ(sa.util_est_.enqueued, 300u);
}

/* ---- __update_load_avg_blocked_se
 * ---------------------------------------------------------------- */

TEST(__update_load_avg_blocked_se, a_blocked_entity_halves_in_32_periods)
{
    task_sim t;
    t.weight = 2048;
    t.tick = P; // stay on period boundaries
    t.run(500 * P);
    const sched_avg before = t.sa;
    ASSERT_EQ(before.period_contrib, 0u);

    EXPECT_TRUE(__update_load_avg_blocked_se(t.now + 32 * P, t.sa, 2048));
    /* Same divider, sums decayed by exactly one half-life (+-1 truncation). */
    EXPECT_NEAR(double(t.sa.util_avg), before.util_avg / 2.0, 1.0);
    EXPECT_NEAR(double(t.sa.load_avg), before.load_avg / 2.0, 1.0);
    EXPECT_NEAR(double(t.sa.runnable_avg), before.runnable_avg / 2.0, 1.0);
    EXPECT_GT(t.sa.load_avg, 1000u) << "blocked load_avg keeps the weight factor";
}

TEST(__update_load_avg_blocked_se, after_32_ms_a_bit_more_than_half_remains)
{
    /* python3: 0.5 ** (32e6 / P / 32) = 0.5163; 1024 * 0.5163 = 528.7 */
    task_sim t;
    t.tick = P;
    t.run(500 * P);
    __update_load_avg_blocked_se(t.now + 32'000'000, t.sa, 1024);
    /*
     * 32e6 ns = 31250 units = 30 periods + 530 units. The sums decay by y ** 30
     * (1024 * y ** 30 = 534.67, python3) and the divider grows by the 530 units
     * of the open period: 534.67 * 46718 / 47248 = 528.67.
     */
    EXPECT_NEAR(double(t.sa.util_avg), 528.67, 2.0);
    EXPECT_NEAR(double(t.sa.util_avg), 528.7, 10.0);
}

/* ---- __update_load_avg_cfs_rq ---------------------------------------------------------------- */

TEST(__update_load_avg_cfs_rq, two_alternating_tasks_sum_to_the_cfs_rq_averages)
{
    /*
     * Tasks a and b (nice 0) share one CPU, 4 ms each in turn. The cfs_rq sees
     * weight 2048, h_nr_running 2 and a running curr all the time: load 2048,
     * runnable 2048, util 1024. Each task: load 1024, runnable 1024, util ~512,
     * and the sums of the task averages match the cfs_rq's.
     */
    sched_avg a, b, rq;
    u64 now = 0;
    for (int slice = 0; slice < 125; slice++) { // 500 ms
        for (int ms = 0; ms < 4; ms++) {
            now += 1'000'000;
            const bool a_runs = slice % 2 == 0;
            __update_load_avg_se(now, a, 1024, true, a_runs, 1);
            __update_load_avg_se(now, b, 1024, true, !a_runs, 1);
            __update_load_avg_cfs_rq(now, rq, 2048, 2, true);
        }
    }
    EXPECT_NEAR(double(rq.load_avg), 2048.0, 4.0);
    EXPECT_NEAR(double(rq.runnable_avg), 2048.0, 4.0);
    EXPECT_NEAR(double(rq.util_avg), 1024.0, 3.0);
    EXPECT_NEAR(double(a.util_avg + b.util_avg), double(rq.util_avg), 3.0);
    EXPECT_NEAR(double(a.load_avg + b.load_avg), double(rq.load_avg), 4.0);
    EXPECT_NEAR(double(a.runnable_avg + b.runnable_avg), double(rq.runnable_avg), 4.0);
    /* 4 ms slices: a's util swings around 512 by 1024 * (1 - y**3.8)/2 ~ 40 */
    EXPECT_NEAR(double(a.util_avg), 512.0, 50.0);
}

TEST(__update_load_avg_cfs_rq, an_idle_cfs_rq_decays_like_an_entity)
{
    sched_avg rq;
    __update_load_avg_cfs_rq(500 * P, rq, 1024, 1, true);
    const unsigned long full = rq.util_avg;
    __update_load_avg_cfs_rq(532 * P, rq, 0, 0, false);
    EXPECT_NEAR(double(rq.util_avg), full / 2.0, 1.0);
    EXPECT_NEAR(double(rq.load_avg), 512.0, 2.0);
}

/* ---- util_est ---------------------------------------------------------------------------- */

sched_avg with_util(unsigned long util_avg, u32 enqueued, u32 ewma)
{
    sched_avg sa;
    sa.util_avg = util_avg;
    sa.util_est_.enqueued = enqueued;
    sa.util_est_.ewma = ewma;
    return sa;
}

TEST(util_est_update, the_ewma_moves_a_quarter_of_the_way_to_a_lower_sample)
{
    /* 800 + (400 - 800) / 4 = 700 */
    sched_avg sa = with_util(400, 800, 800);
    util_est_update(sa.util_est_, sa, true, 1024, true);
    EXPECT_EQ(sa.util_est_.ewma, 700u);
    EXPECT_EQ(sa.util_est_.enqueued, 400u | UTIL_AVG_UNCHANGED);
    /* Next sample 400 again (after util_avg moved): 700 + (400 - 700) / 4 = 625 */
    sa.util_est_.enqueued &= ~UTIL_AVG_UNCHANGED;
    util_est_update(sa.util_est_, sa, true, 1024, true);
    EXPECT_EQ(sa.util_est_.ewma, 625u);
    /* Rounding: (4 * 625 + (101 - 625)) >> 2 = 1976 >> 2 = 494 (494.0) */
    sa.util_avg = 101;
    sa.util_est_.enqueued = 400;
    util_est_update(sa.util_est_, sa, true, 1024, true);
    EXPECT_EQ(sa.util_est_.ewma, 494u);
}

TEST(util_est_update, fastup_takes_an_increase_at_once_and_the_ewma_otherwise)
{
    sched_avg up = with_util(500, 300, 300);
    util_est_update(up.util_est_, up, true, 1024, true);
    EXPECT_EQ(up.util_est_.ewma, 500u);
    EXPECT_EQ(up.util_est_.enqueued, 500u | UTIL_AVG_UNCHANGED);

    sched_avg slow = with_util(500, 300, 300); // 300 + (500 - 300) / 4 = 350
    util_est_update(slow.util_est_, slow, true, 1024, false);
    EXPECT_EQ(slow.util_est_.ewma, 350u);
}

TEST(util_est_update, ignores_samples_within_one_percent_of_the_ewma)
{
    /* UTIL_EST_MARGIN = 1024 / 100 = 10: |diff| <= 9 is "within". */
    for (unsigned long util : {491ul, 495ul, 500ul}) {
        sched_avg sa = with_util(util, 500, 500);
        util_est_update(sa.util_est_, sa, true, 1024, true);
        EXPECT_EQ(sa.util_est_.ewma, 500u) << util;
        EXPECT_EQ(sa.util_est_.enqueued, 500u) << util << ": nothing stored, flag not set";
    }
    sched_avg out = with_util(490, 500, 500); // -10: outside; (2000 - 10) >> 2 = 497
    util_est_update(out.util_est_, out, true, 1024, true);
    EXPECT_EQ(out.util_est_.ewma, 497u);
    EXPECT_EQ(out.util_est_.enqueued, 490u | UTIL_AVG_UNCHANGED);
}

TEST(util_est_update, inside_the_margin_stores_enqueued_only_if_it_moved_one_percent)
{
    /* ewma 500 vs 495: within; enqueued 520 -> 495 moved 25: store enqueued, keep ewma. */
    sched_avg sa = with_util(495, 520, 500);
    util_est_update(sa.util_est_, sa, true, 1024, true);
    EXPECT_EQ(sa.util_est_.ewma, 500u);
    EXPECT_EQ(sa.util_est_.enqueued, 495u | UTIL_AVG_UNCHANGED);
}

TEST(util_est_update, is_skipped_without_a_sleep_or_without_a_new_util_avg)
{
    sched_avg migr = with_util(100, 800, 800);
    util_est_update(migr.util_est_, migr, false, 1024, true);
    EXPECT_EQ(migr.util_est_.ewma, 800u);
    EXPECT_EQ(migr.util_est_.enqueued, 800u);

    sched_avg same = with_util(100, 800 | UTIL_AVG_UNCHANGED, 800);
    util_est_update(same.util_est_, same, true, 1024, true);
    EXPECT_EQ(same.util_est_.ewma, 800u);
    EXPECT_EQ(same.util_est_.enqueued, 800u | UTIL_AVG_UNCHANGED);
}

TEST(util_est_update, is_skipped_when_util_exceeds_the_cpu_capacity)
{
    sched_avg big = with_util(600, 900, 900);
    util_est_update(big.util_est_, big, true, 512, true);
    EXPECT_EQ(big.util_est_.ewma, 900u);
    EXPECT_EQ(big.util_est_.enqueued, 900u);
    util_est_update(big.util_est_, big, true, 1024, true); // 900 + (600 - 900) / 4 = 825
    EXPECT_EQ(big.util_est_.ewma, 825u);
}

TEST(util_est_update, within_margin_is_strictly_inside_plus_minus_margin)
{
    EXPECT_TRUE(within_margin(0, 10));
    EXPECT_TRUE(within_margin(9, 10));
    EXPECT_TRUE(within_margin(-9, 10));
    EXPECT_FALSE(within_margin(10, 10));
    EXPECT_FALSE(within_margin(-10, 10));
    EXPECT_FALSE(within_margin(-1000, 10));
}

TEST(task_util_est, masks_the_flag_and_takes_the_largest_of_util_ewma_and_enqueued)
{
    sched_avg sa = with_util(100, 300 | UTIL_AVG_UNCHANGED, 200);
    EXPECT_EQ(_task_util_est(sa), 300u);
    EXPECT_EQ(task_util_est(sa), 300u);
    sa.util_est_.ewma = 350;
    EXPECT_EQ(task_util_est(sa), 350u);
    sa.util_avg = 400;
    EXPECT_EQ(_task_util_est(sa), 350u);
    EXPECT_EQ(task_util_est(sa), 400u);
}

TEST(util_est_enqueue, the_cfs_rq_sums_the_runnable_tasks_estimates)
{
    util_est rq;
    const sched_avg a = with_util(0, 300 | UTIL_AVG_UNCHANGED, 100); // 300
    const sched_avg b = with_util(0, 150, 200);                      // 200
    util_est_enqueue(rq, a);
    util_est_enqueue(rq, b);
    EXPECT_EQ(rq.enqueued, 500u);
    EXPECT_EQ(rq.ewma, 0u) << "the cfs_rq's ewma is not maintained";
    util_est_dequeue(rq, a);
    EXPECT_EQ(rq.enqueued, 200u);
}

TEST(util_est_dequeue, saturates_at_zero)
{
    util_est rq;
    rq.enqueued = 100;
    util_est_dequeue(rq, with_util(0, 300, 0));
    EXPECT_EQ(rq.enqueued, 0u);
}

} // namespace
} // namespace schedlab
