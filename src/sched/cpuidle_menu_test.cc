// SPDX-License-Identifier: GPL-2.0-only
/*
 * The menu cpuidle governor (cpuidle_menu.h), worked by hand from menu.c for an idle
 * driver like bergamo-2s's (POLL; C1: exit 1 us, target residency 2 us; CC6: exit
 * 400 us, residency 800 us) and HZ=250 (TICK_NSEC 4 ms), then through cpu_charges as
 * the kernel's idle entries and wakeups drive it.
 */
#include "sched/cpu_charges.h"
#include "sched/cpuidle_menu.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <climits>
#include <vector>

namespace schedlab {
namespace {

constexpr u64 menu_test_tick = 4'000'000;
constexpr u64 menu_test_far_timer = 4'000'000'000; // cpu_charges' no_timer

cpuidle_driver_desc menu_test_bergamo_driver()
{
    cpuidle_driver_desc d;
    d.state_count = 3;
    d.states[0] = {0, 0, true};
    d.states[1] = {1'000, 2'000, false};
    d.states[2] = {400'000, 800'000, false};
    return d;
}

const menu_version menu_test_versions[] = {menu_version::timer_first, menu_version::typical_first,
                                           menu_version::v6_18};

struct menu_test_pick {
    int idx;
    bool stop_tick;
};

menu_test_pick menu_test_select(menu_device& data, menu_version v, u64 sleep_length,
                                u64 delta_tick = menu_test_tick)
{
    bool stop = true;
    const int idx = menu_gov::menu_select(data, v, menu_test_bergamo_driver(),
                                          {sleep_length, delta_tick, menu_test_tick}, &stop);
    return {idx, stop};
}

TEST(menu_gov, get_typical_interval_of_eight_equal_idles_is_their_length)
{
    menu_device d;
    d.intervals.fill(20);
    EXPECT_EQ(menu_gov::get_typical_interval(d, menu_version::typical_first), 20u);
    EXPECT_EQ(menu_gov::get_typical_interval(d, menu_version::v6_18), 20u);
    // One long idle among seven 13 us ones is an outlier: dropped, the pattern holds.
    d.intervals = {13, 13, 13, 13, 13, 13, 13, 45'000};
    EXPECT_EQ(menu_gov::get_typical_interval(d, menu_version::typical_first), 13u);
    EXPECT_EQ(menu_gov::get_typical_interval(d, menu_version::v6_18), 13u);
    // Three are not: once down to six samples (3/4 of eight) menu gives up.
    d.intervals = {13, 13, 13, 13, 13, 700, 800, 900};
    EXPECT_EQ(menu_gov::get_typical_interval(d, menu_version::typical_first), UINT_MAX);
    EXPECT_EQ(menu_gov::get_typical_interval(d, menu_version::v6_18), UINT_MAX);
    // Outliers at the low end: up to v6.14 only the top is dropped (80 us, then 78: the
    // six left still vary), v6.15's rework drops the 2 us one first (avg - min > max - avg)
    // and finds the pattern in the seven left: avg 73, E[x^2] 5364, variance 35.
    d.intervals = {2, 70, 72, 70, 72, 70, 78, 80};
    EXPECT_EQ(menu_gov::get_typical_interval(d, menu_version::typical_first), UINT_MAX);
    EXPECT_EQ(menu_gov::get_typical_interval(d, menu_version::v6_18), 73u);
}

TEST(menu_gov, eight_equal_20us_idles_pick_c1_and_keep_the_tick)
{
    for (const menu_version v : menu_test_versions) {
        menu_device d;
        d.intervals.fill(20);
        // typical 20 us; the timer 4 s away with a unity factor predicts 4 s: min is 20 us.
        // C1 fits (2 us), CC6 does not (800 us), and under a tick the tick is kept.
        const menu_test_pick p = menu_test_select(d, v, menu_test_far_timer);
        EXPECT_EQ(p.idx, 1) << static_cast<int>(v);
        EXPECT_FALSE(p.stop_tick) << static_cast<int>(v);
        EXPECT_EQ(d.bucket, 5u) << "the 4 s timer's bucket";
    }
}

TEST(menu_gov, a_broken_pattern_goes_deep_and_stops_the_tick)
{
    for (const menu_version v : menu_test_versions) {
        menu_device d;
        d.intervals = {13, 13, 13, 13, 13, 700, 800, 900};
        // No typical interval: the timer x its factor, 4 s: CC6, and the tick stops.
        const menu_test_pick p = menu_test_select(d, v, menu_test_far_timer);
        EXPECT_EQ(p.idx, 2) << static_cast<int>(v);
        EXPECT_TRUE(p.stop_tick) << static_cast<int>(v);
    }
}

TEST(menu_gov, a_timer_sooner_than_c1s_residency_polls_with_the_tick_kept)
{
    for (const menu_version v : menu_test_versions) {
        menu_device d;
        d.intervals.fill(500);
        const menu_test_pick p = menu_test_select(d, v, 1'500);
        EXPECT_EQ(p.idx, 0) << static_cast<int>(v);
        EXPECT_FALSE(p.stop_tick) << static_cast<int>(v);
    }
}

TEST(menu_gov, short_typical_intervals_skip_the_timer_from_v6_6)
{
    // typical 10 us: from 5484e31bbbff (v6.6) menu does not look the timer up
    // (<= RESIDENCY_THRESHOLD_NS): next_timer_ns = KTIME_MAX, the last bucket. Up to v6.5
    // the timer is read first: 3 ms, bucket 3.
    menu_device old_form;
    old_form.intervals.fill(10);
    EXPECT_EQ(menu_test_select(old_form, menu_version::timer_first, 3'000'000).idx, 1);
    EXPECT_EQ(old_form.next_timer_ns, 3'000'000u);
    EXPECT_EQ(old_form.bucket, 3u);
    menu_device new_form;
    new_form.intervals.fill(10);
    EXPECT_EQ(menu_test_select(new_form, menu_version::typical_first, 3'000'000).idx, 1);
    EXPECT_EQ(new_form.next_timer_ns, MENU_KTIME_MAX);
    EXPECT_EQ(new_form.bucket, 5u);
}

TEST(menu_gov, a_tick_wakeup_is_learnt_as_45ms_with_no_timer_within_the_tick)
{
    menu_device d;
    d.intervals.fill(10);
    ASSERT_EQ(menu_test_select(d, menu_version::typical_first, menu_test_far_timer).idx, 1);
    // The kept tick woke the CPU 4 ms in (menu_reflect(): tick_nohz_idle_got_tick()).
    menu_gov::menu_reflect(d, 1, 4'000'000, true);
    const menu_test_pick p = menu_test_select(d, menu_version::typical_first, menu_test_far_timer);
    // menu_update(): next_timer_ns (KTIME_MAX) > TICK_NSEC, so 9/10 MAX_INTERESTING;
    // the factor of bucket 5 decays by 1/8 and gains 1024 x 45 ms / KTIME_MAX = 0.
    EXPECT_EQ(d.intervals[0], 45'000u);
    EXPECT_EQ(d.correction_factor[5], 8192u - 1024u);
    // One long interval among eight is an outlier: the pattern holds, C1 with the tick.
    EXPECT_EQ(p.idx, 1);
    EXPECT_FALSE(p.stop_tick);

    // With a timer within the tick, the residency measured is learnt instead: 1 ms from
    // C1 less its 1 us exit latency.
    menu_device timed;
    timed.intervals.fill(500);
    ASSERT_EQ(menu_test_select(timed, menu_version::timer_first, 3'000'000).idx, 1);
    menu_gov::menu_reflect(timed, 1, 1'000'000, true);
    menu_test_select(timed, menu_version::timer_first, 3'000'000);
    EXPECT_EQ(timed.intervals[0], 999u);
    // Bucket 3's factor: 8192 - 1024 + 1024 x 999 us / 3 ms = 7168 + 340.
    EXPECT_EQ(timed.correction_factor[3], 7168u + 340u);
}

TEST(menu_gov, a_measured_residency_under_twice_the_exit_latency_is_halved)
{
    menu_device d;
    d.intervals.fill(4'000'000);
    ASSERT_EQ(menu_test_select(d, menu_version::typical_first, menu_test_far_timer).idx, 2);
    // 20 us of idle plus a 400 us exit: under 2 x 400 us, so "the state was never
    // reached": half of it.
    menu_gov::menu_reflect(d, 2, 420'000, false);
    menu_test_select(d, menu_version::typical_first, menu_test_far_timer);
    EXPECT_EQ(d.intervals[0], 210u);
}

/* ---- through cpu_charges, as the kernel's idle entries and wakeups drive it ---- */

struct menu_test_no_op final : event_handler {
    void fire(u64) override {}
};

struct menu_test_charges {
    machine m = testlib::small_machine(2);
    simulation sim{1};
    testlib::idle_rqs cpus{m};
    std::vector<std::unique_ptr<rq>>& rqs = cpus.rqs;
    cpu_charges charges;

    explicit menu_test_charges(const cost_params& p) : charges(sim, m, p) { charges.attach(rqs); }
};

TEST(cpuidle_menu, eight_20us_idles_settle_in_c1_where_an_ewma_stayed_deep)
{
    cost_params c = testlib::sched_fixture::no_costs();
    c.cstate_c1_exit = usecs(1);
    c.cstate_c1_residency = usecs(2);
    c.cstate_deep_exit = usecs(400);
    c.cstate_deep_residency = usecs(800);
    c.cstate_deep_wake = 0; // the declared 400 us is charged
    menu_test_charges f(c);
    rq& r = *f.rqs[0];
    std::vector<int> states;
    sim_time t = msecs(1);
    for (int i = 0; i < 10; ++i) {
        f.sim.run_until(t);
        const sim_dur tick = msecs(4);
        states.push_back(f.charges.cpuidle_enter(r, menu_version::typical_first, tick,
                                                 (t / tick + 1) * tick, -1)
                             .state);
        t += usecs(20);
        f.sim.run_until(t);
        f.charges.remote_notify_delay(r, 1, cost_model::notify::ipi); // a wakeup ends it
        f.charges.cpuidle_exit(r);
        t += usecs(30); // the woken task runs, then sleeps again
    }
    /*
     * By hand (typical_first, one-sided outliers): the history before the run is eight
     * 4 s idles: typical 4 s, CC6. A 20 us period in CC6 measures 20 + 400 us of exit,
     * under 2 x 400, so menu learns half: 210 us. Next, outliers are dropped from the top
     * until 210 is alone (variance 0): typical 210 us, C1, whose period measures 20 + 1 - 1
     * = 20 us. With {210, 20} and six 4 s left, the two remaining vary and are a quarter
     * of the samples: no typical interval, the 4 s timer, CC6 again, and again 210 us,
     * until at the eighth selection {20, 210 x 6} lose their top (210 x 6, variance 4421
     * against 182^2 / 36) and 20 us is typical: C1 from then on. The EWMA the model had
     * before chose CC6 for the first eight (10 ms x (3/4)^7 is still 1.3 ms).
     */
    EXPECT_EQ(states, (std::vector<int>{2, 1, 2, 2, 2, 2, 2, 1, 1, 1}));
    const menu_device& menu = f.charges.cpu(0).idle.menu;
    EXPECT_EQ(menu.intervals[0], 20u) << "the ninth period, C1's";
    EXPECT_EQ(menu.intervals[1], 20u);
    EXPECT_EQ(menu.intervals[2], 210u);
    EXPECT_EQ(menu.intervals[7], 20u);
}

} // namespace
} // namespace schedlab
