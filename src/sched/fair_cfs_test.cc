// SPDX-License-Identifier: GPL-2.0-only
/*
 * CFS (<= 6.5) preemption and placement decisions on hand-computed cases
 * (kernel-model.md section 1). One CPU: factor 1, so latency 6 ms,
 * min_granularity 0.75 ms, wakeup_granularity 1 ms.
 */
#include "sched/testlib.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

struct cfs : ::testing::Test {
    testlib::sched_fixture t{testlib::small_machine(1), "6.5"};
    cfs_rq& c = t.k->cpu_rq(0).cfs;
    task_struct a, b;
    cfs()
    {
        a.se.owner = &a;
        b.se.owner = &b;
        a.pid = 1;
        b.pid = 2;
    }
};

TEST_F(cfs, wakeup_preempt_entity_needs_more_than_one_wakeup_granularity)
{
    a.se.vruntime = 10'000'000;
    b.se.vruntime = 10'000'000;
    EXPECT_EQ(t.k->wakeup_preempt_entity(a.se, b.se), -1) << "not ahead: never preempt";
    b.se.vruntime = 10'000'000 - 1'000'000;
    EXPECT_EQ(t.k->wakeup_preempt_entity(a.se, b.se), 0) << "exactly one gran ahead: not enough";
    b.se.vruntime -= 1;
    EXPECT_EQ(t.k->wakeup_preempt_entity(a.se, b.se), 1);
}

TEST_F(cfs, a_lighter_wakee_needs_a_larger_lead)
{
    b.se.load.weight = sched_prio_to_weight[25]; // nice 5: 335
    EXPECT_EQ(t.k->wakeup_gran(b.se), 1'000'000ull * 1024 / 335);
}

TEST_F(cfs, a_waking_sleeper_gets_half_the_latency_as_credit)
{
    a.se.vruntime = c.min_vruntime - msecs(100); // slept a long time
    t.k->place_entity_cfs(c, a.se, false);
    EXPECT_EQ(static_cast<s64>(a.se.vruntime - c.min_vruntime), -msecs(3));
}

TEST_F(cfs, a_recent_sleeper_keeps_its_own_vruntime)
{
    a.se.vruntime = c.min_vruntime - msecs(1);
    t.k->place_entity_cfs(c, a.se, false);
    EXPECT_EQ(static_cast<s64>(a.se.vruntime - c.min_vruntime), -msecs(1));
}

TEST_F(cfs, without_gentle_fair_sleepers_the_credit_is_the_whole_latency)
{
    testlib::sched_fixture g{testlib::small_machine(1), "6.5+NO_GENTLE_FAIR_SLEEPERS"};
    cfs_rq& gc = g.k->cpu_rq(0).cfs;
    a.se.vruntime = gc.min_vruntime - msecs(100);
    g.k->place_entity_cfs(gc, a.se, false);
    EXPECT_EQ(static_cast<s64>(a.se.vruntime - gc.min_vruntime), -msecs(6));
}

TEST_F(cfs, a_forked_task_starts_one_vslice_late_with_start_debit)
{
    // Empty cfs_rq: slice of a lone task = latency (6 ms).
    t.k->place_entity_cfs(c, a.se, true);
    EXPECT_EQ(static_cast<s64>(a.se.vruntime - c.min_vruntime), msecs(6));
}

TEST_F(cfs, sched_slice_splits_the_period_by_weight_with_a_floor)
{
    a.se.on_rq = true;
    b.se.on_rq = true;
    c.nr_running = 2;
    c.h_nr_running = 2;
    c.load.weight = 1024 + 335;
    b.se.load.weight = 335;
    // period 6 ms (2 <= nr_latency); a: 6 ms * 1024 / 1359
    EXPECT_EQ(t.k->sched_slice(c, a.se), 6'000'000ull * 1024 / 1359);
    // b: 6 ms * 335 / 1359 = 1.479 ms, above the 0.75 ms floor
    EXPECT_EQ(t.k->sched_slice(c, b.se), 6'000'000ull * 335 / 1359);
    c.nr_running = c.h_nr_running = 0; // leave the rq consistent
    c.load.weight = 0;
}

// A sleeper placed 3 ms behind the hog preempts it on wakeup, becomes the
// next buddy, and the hog becomes the last buddy only with >= nr_latency tasks.
TEST(check_preempt_wakeup_cfs, a_long_sleeper_preempts_the_running_hog)
{
    testlib::sched_fixture t(testlib::small_machine(1), "6.5");
    t.spawn("hog", testlib::spin());
    task_struct& s = t.spawn("sleeper", testlib::run_sleep(usecs(50), msecs(50)));
    t.run_for(msecs(400));
    // Every wakeup preempts at once: no waiting behind the hog's tick.
    EXPECT_GT(s.sched_info_.pcount, 6u);
    EXPECT_LT(s.sched_info_.run_delay / s.sched_info_.pcount, usecs(1)) << t.k->dump_state();
}

TEST(check_preempt_wakeup_cfs, no_wakeup_preemption_makes_the_sleeper_wait_for_the_tick)
{
    testlib::sched_fixture t(testlib::small_machine(1), "6.5+NO_WAKEUP_PREEMPTION");
    t.spawn("hog", testlib::spin());
    task_struct& s = t.spawn("sleeper", testlib::run_sleep(usecs(50), msecs(50)));
    t.run_for(msecs(400));
    EXPECT_GT(s.sched_info_.run_delay / s.sched_info_.pcount, usecs(500));
}

TEST(check_preempt_tick, resched_once_the_ideal_slice_is_used)
{
    // Two hogs, factor 1: ideal = 3 ms each; the 4 ms tick always exceeds it.
    testlib::sched_fixture t(testlib::small_machine(1), "6.5");
    task_struct& a = t.spawn("a", testlib::spin());
    t.spawn("b", testlib::spin());
    t.run_for(msecs(100));
    // Each run of a lasts exactly one tick period (4 ms) except the first partial one.
    EXPECT_NEAR(static_cast<double>(a.se.sum_exec_runtime) / static_cast<double>(a.nivcsw),
                4e6, 0.3e6);
}

} // namespace
} // namespace schedlab
