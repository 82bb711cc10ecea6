// SPDX-License-Identifier: GPL-2.0-only
/*
 * NOHZ idle balancing's state (nohz.h): the tickless-idle mask follows the
 * ticks stopping and restarting, and a kernel's CPUs enter it at boot and
 * leave it at their first busy tick.
 */
#include "sched/nohz.h"
#include "sched/testlib.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

TEST(nohz_state, the_mask_follows_the_ticks)
{
    nohz_state nohz(8);
    EXPECT_TRUE(nohz.idle_cpus_mask.empty());
    EXPECT_TRUE(nohz.stop_tick(3));
    EXPECT_FALSE(nohz.stop_tick(3)) << "a stopped tick stops once";
    EXPECT_TRUE(nohz.stop_tick(5));
    EXPECT_TRUE(nohz.tick_stopped(3));
    EXPECT_FALSE(nohz.tick_stopped(4));
    EXPECT_EQ(nohz.idle_cpus_mask.weight(), 2);
    EXPECT_TRUE(nohz.restart_tick(3));
    EXPECT_FALSE(nohz.restart_tick(3)) << "a running tick restarts once";
    EXPECT_FALSE(nohz.restart_tick(4));
    EXPECT_FALSE(nohz.idle_cpus_mask.test(3));
    EXPECT_TRUE(nohz.idle_cpus_mask.test(5));
    EXPECT_EQ(nohz.idle_cpus_mask.weight(), 1);
}

TEST(nohz_state, a_kernel_boots_tickless_and_a_busy_tick_leaves)
{
    testlib::sched_fixture t(testlib::small_machine(4), "6.6");
    EXPECT_EQ(t.k->lb().nohz.idle_cpus_mask.weight(), 4) << "every CPU idles at boot";
    // A CPU kept busy past its first tick leaves the mask at that tick
    // (nohz_balancer_kick() -> nohz_balance_exit_idle()).
    t.spawn("busy", testlib::spin(), 2, 0, 2);
    t.run_for(msecs(20));
    EXPECT_FALSE(t.k->lb().nohz.tick_stopped(2));
    EXPECT_FALSE(t.k->lb().nohz.idle_cpus_mask.test(2));
    EXPECT_TRUE(t.k->lb().nohz.tick_stopped(0));
    const sched_domain_shared* sds = t.k->topology().cpu(2).sd_llc_shared;
    ASSERT_NE(sds, nullptr);
    EXPECT_EQ(sds->nr_busy_cpus, 1) << "one busy CPU in the LLC";
}

TEST(nohz_state, an_idle_cpu_keeps_its_tick_when_the_governor_says_so)
{
    // kernel: kernel/sched/idle.c cpuidle_idle_call() (6.5) stops the tick, and
    // __tick_nohz_idle_stop_tick() calls nohz_balance_enter_idle(), only when menu_select()
    // says stop_tick; it does not for a predicted idle shorter than a tick (HZ=250: 4 ms),
    // and the prediction is capped by the CPU's next timer. A task on cpu1 runs 1 ms and
    // sleeps 200 us on a timer: every idle of cpu1 keeps the tick, so once a busy tick has
    // taken cpu1 out of the NOHZ mask (nohz_balance_exit_idle()) it never enters it again,
    // and it counts as busy in its LLC while idle.
    testlib::sched_fixture t(testlib::small_machine(2), "6.6");
    t.spawn("short", testlib::run_sleep(msecs(1), usecs(200)), 1, 0, 1);
    t.run_for(msecs(100));
    const nohz_state& nohz = t.k->lb().nohz;
    EXPECT_GT(nohz.idle_entries_tick_kept, 50u);
    EXPECT_EQ(nohz.tick_stops, 0u) << "cpu1's tick never stops";
    EXPECT_FALSE(nohz.tick_stopped(1));
    EXPECT_FALSE(nohz.idle_cpus_mask.test(1));
    EXPECT_TRUE(nohz.idle_cpus_mask.test(0)) << "cpu0 idles tickless since boot";
    const sched_domain_shared* sds = t.k->topology().cpu(1).sd_llc_shared;
    ASSERT_NE(sds, nullptr);
    EXPECT_EQ(sds->nr_busy_cpus, 1);
}

TEST(nohz_state, a_kept_tick_that_finds_its_cpu_idle_stops)
{
    // The same task for 20 rounds, then it exits: cpu1's last idle keeps the tick (the
    // governor predicts ~200 us), and that tick finds it idle with no timer due, which
    // menu_update() counts as a long idle (tick_wakeup); the next selection stops the tick
    // and cpu1 enters the NOHZ mask (nohz_balance_enter_idle()). (A task on cpu0 waking
    // every 30 ms keeps the run going; its idles are predicted long and stay tickless.)
    testlib::sched_fixture t(testlib::small_machine(2), "6.6");
    t.spawn("short", testlib::run_sleep(msecs(1), usecs(200), 20), 1, 0, 1);
    t.spawn("rare", testlib::run_sleep(usecs(10), msecs(30)), 0, 0, 0);
    t.run_for(msecs(100));
    const nohz_state& nohz = t.k->lb().nohz;
    EXPECT_GE(nohz.idle_ticks, 1u);
    EXPECT_EQ(nohz.tick_stops, 1u) << "the tick stops once: after the last round";
    EXPECT_TRUE(nohz.tick_stopped(1));
    EXPECT_TRUE(nohz.idle_cpus_mask.test(1));
    const sched_domain_shared* sds = t.k->topology().cpu(1).sd_llc_shared;
    ASSERT_NE(sds, nullptr);
    EXPECT_EQ(sds->nr_busy_cpus, 0);
}

} // namespace
} // namespace schedlab
