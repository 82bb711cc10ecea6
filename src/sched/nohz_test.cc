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

} // namespace
} // namespace schedlab
