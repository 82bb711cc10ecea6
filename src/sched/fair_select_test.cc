// SPDX-License-Identifier: GPL-2.0-only
/*
 * Placement decisions on small hand-built situations (kernel-model.md 3.3-3.7).
 */
#include "sched/testlib.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using testlib::sched_fixture;

machine llc16_machine(int smt = 1)
{
    symmetric_machine_spec s;
    s.name = fmt::format("test-llc16-smt{}", smt);
    s.cores_per_socket = 16 / smt;
    s.threads_per_core = smt;
    s.sockets = 2;
    return make_symmetric_machine(s, "test");
}

TEST(wake_wide, a_one_to_many_waker_goes_wide_only_past_both_thresholds)
{
    sched_fixture t(llc16_machine(), "6.6");
    task_struct& waker = t.spawn("waker", testlib::spin());
    task_struct& wakee = t.spawn("wakee", testlib::spin());
    t.run_for(msecs(1));
    t.k->set_this_cpu(waker.cpu);
    ASSERT_EQ(t.k->current(), &waker);
    ASSERT_EQ(t.k->topology().cpu(waker.cpu).sd_llc_size, 16);

    waker.wakee_flips = 400;
    wakee.wakee_flips = 20; // slave 20 >= 16 and master 400 >= 20 * 16
    EXPECT_EQ(t.k->wake_wide(wakee), 1);
    waker.wakee_flips = 300; // 300 < 320: not wide
    EXPECT_EQ(t.k->wake_wide(wakee), 0);
    waker.wakee_flips = 4000;
    wakee.wakee_flips = 15; // slave below the LLC size: never wide
    EXPECT_EQ(t.k->wake_wide(wakee), 0);
    // Symmetric in who is master.
    waker.wakee_flips = 20;
    wakee.wakee_flips = 400;
    EXPECT_EQ(t.k->wake_wide(wakee), 1);
}

TEST(record_wakee, counts_a_flip_per_change_of_wakee_and_halves_each_second)
{
    sched_fixture t(llc16_machine(), "6.6");
    task_struct& waker = t.spawn("waker", testlib::spin());
    task_struct& a = t.spawn("a", testlib::spin());
    task_struct& b = t.spawn("b", testlib::spin());
    t.run_for(msecs(1));
    t.k->set_this_cpu(waker.cpu);
    waker.wakee_flip_decay_ts = t.k->jiffies();
    for (int i = 0; i < 10; ++i)
        t.k->record_wakee(i % 2 ? a : b);
    EXPECT_EQ(waker.wakee_flips, 10u);
    t.k->record_wakee(a); // same wakee as last time: no flip
    EXPECT_EQ(waker.wakee_flips, 10u);
    t.run_for(msecs(1100));
    t.k->set_this_cpu(waker.cpu);
    t.k->record_wakee(b);
    EXPECT_EQ(waker.wakee_flips, 6u) << "halved to 5 after a second, then one flip";
}

// A sync wakeup from a CPU running only the waker pulls the wakee to it.
TEST(wake_affine, a_sync_wakeup_chooses_the_wakers_cpu)
{
    sched_fixture t(llc16_machine(), "6.6");
    task_struct& waker = t.spawn("waker", testlib::spin(), 0, 0, 0);
    t.spawn("busy-prev", testlib::spin(), 0, 0, 5);
    task_struct& wakee = t.spawn("wakee", testlib::spin(), 0, 0, 5);
    t.run_for(msecs(1));
    t.k->set_this_cpu(0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    ASSERT_TRUE(sd && sd->span.test(5));
    const u64 before = sd->stats.ttwu_move_affine;
    EXPECT_EQ(t.k->wake_affine(*sd, wakee, 0, 5, /*sync=*/1), 0);
    EXPECT_EQ(sd->stats.ttwu_move_affine, before + 1);
    (void)waker;
}

TEST(wake_affine, prefers_an_idle_prev_cpu_and_counts_no_move_on_6_6)
{
    sched_fixture t(llc16_machine(), "6.6");
    t.spawn("waker", testlib::spin(), 0, 0, 0);
    task_struct& wakee = t.spawn("wakee", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 5);
    t.run_for(msecs(1)); // wakee sleeps: cpu5 is idle
    t.k->set_this_cpu(0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    const u64 before = sd->stats.ttwu_move_affine;
    EXPECT_EQ(t.k->wake_affine(*sd, wakee, 0, 5, /*sync=*/0), 5);
    EXPECT_EQ(sd->stats.ttwu_move_affine, before);

    sched_fixture old(llc16_machine(), "6.1");
    old.spawn("waker", testlib::spin(), 0, 0, 0);
    task_struct& w2 = old.spawn("wakee", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 5);
    old.run_for(msecs(1));
    old.k->set_this_cpu(0);
    sched_domain* sd2 = old.k->topology().cpu(0).sd_llc;
    EXPECT_EQ(old.k->wake_affine(*sd2, w2, 0, 5, 0), 5);
    EXPECT_EQ(sd2->stats.ttwu_move_affine, 1u) << "5.15/6.1 count an idle prev as a move";
}

TEST(select_idle_core, finds_a_fully_idle_core_past_half_busy_ones)
{
    // Two sockets of 8 cores x SMT2 (16-CPU LLCs), first-threads numbering:
    // core c of socket 0 is {c, c + 16}.
    sched_fixture t(llc16_machine(2), "6.6");
    for (int cpu : {1, 17, 2, 18, 3}) // cores 1 and 2 fully busy, core 3 half busy
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), 0, 0, cpu);
    t.run_for(msecs(1));
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
    t.run_for(msecs(1));
    t.k->set_this_cpu(1);
    sched_domain* sd = t.k->topology().cpu(1).sd_llc;
    ASSERT_TRUE(sd->shared->has_idle_cores);
    sd->shared->nr_idle_scan = 16; // SIS_UTIL gives up at once while it is 0, even for idle cores
    cpumask cpus = sd->span;
    int fallback = -1;
    EXPECT_EQ(t.k->select_idle_core(p, 3, cpus, fallback), -1) << "core 3 is half busy";
    EXPECT_EQ(fallback, 19) << "its idle sibling is remembered";
    EXPECT_FALSE(cpus.test(3) || cpus.test(19)) << "the core leaves the scan";
    // select_idle_cpu from target 1 scans cores 2, 3, ... and returns idle core 4.
    EXPECT_EQ(t.k->select_idle_cpu(p, *sd, true, 1), 4);
}

TEST(select_idle_cpu, clears_has_idle_cores_after_a_fruitless_full_scan)
{
    sched_fixture t(llc16_machine(2), "6.6");
    for (int c = 0; c < 8; ++c) // one thread of every core of socket 0 busy
        t.spawn(fmt::format("busy{}", c), testlib::spin(), 0, 0, c);
    t.run_for(msecs(1));
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
    t.run_for(msecs(1));
    t.k->set_this_cpu(0);
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    sd->shared->has_idle_cores = true; // a stale hint
    sd->shared->nr_idle_scan = 16;
    const int i = t.k->select_idle_cpu(p, *sd, true, 0);
    EXPECT_EQ(i, 17) << "falls back to the first idle sibling seen (core 1's)";
    EXPECT_FALSE(sd->shared->has_idle_cores);
}

// kernel-model.md 3.7 worked values for a 16-CPU LLC.
int nr_idle_scan_at(double util_fraction)
{
    sched_fixture t(llc16_machine(), "6.6");
    sched_domain* sd = t.k->topology().cpu(0).sd_llc;
    lb_env env;
    env.sd = sd;
    env.dst_cpu = 0;
    env.idle = CPU_NOT_IDLE;
    const auto x = static_cast<unsigned long>(util_fraction * 1024);
    t.k->update_idle_cpu_scan(env, x * 16);
    return sd->shared->nr_idle_scan;
}

TEST(update_idle_cpu_scan, sis_util_depth_matches_the_worked_values)
{
    EXPECT_EQ(nr_idle_scan_at(0.30), 14);
    EXPECT_EQ(nr_idle_scan_at(0.50), 10);
    EXPECT_EQ(nr_idle_scan_at(0.70), 5);
    EXPECT_EQ(nr_idle_scan_at(0.80), 2);
    EXPECT_EQ(nr_idle_scan_at(0.83), 0);
}

TEST(select_idle_cpu, sis_util_limits_the_scan_depth)
{
    sched_fixture t(llc16_machine(), "6.6");
    for (int cpu = 1; cpu <= 4; ++cpu)
        t.spawn(fmt::format("busy{}", cpu), testlib::spin(), 0, 0, cpu);
    t.run_for(msecs(1));
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)));
    t.run_for(msecs(1));
    ASSERT_NE(p.cpu, 5);
    t.k->set_this_cpu(1);
    sched_domain* sd = t.k->topology().cpu(1).sd_llc;
    // From target 1 the scan visits 2, 3, 4 (busy) then 5 (idle): 4 probes.
    sd->shared->nr_idle_scan = 2; // nr = 3: gives up before cpu5
    EXPECT_EQ(t.k->select_idle_cpu(p, *sd, false, 1), -1);
    sd->shared->nr_idle_scan = 4; // nr = 5: reaches cpu5
    EXPECT_EQ(t.k->select_idle_cpu(p, *sd, false, 1), 5);
    sd->shared->nr_idle_scan = 0; // SIS_UTIL says the LLC is too busy to scan at all
    EXPECT_EQ(t.k->select_idle_cpu(p, *sd, false, 1), -1);
}

TEST(select_idle_sibling, returns_an_idle_prev_before_scanning)
{
    sched_fixture t(llc16_machine(), "6.6");
    t.spawn("busy", testlib::spin(), 0, 0, 0);
    task_struct& p = t.spawn("p", testlib::run_sleep(usecs(10), secs(10)), 0, 0, 7);
    t.run_for(msecs(1));
    t.k->set_this_cpu(0);
    p.recent_used_cpu = 7;
    EXPECT_EQ(t.k->select_idle_sibling(p, 7, 0), 7);
    EXPECT_STREQ(t.k->last_sis_branch(), "prev idle");
}

TEST(find_idlest_cpu, forks_spread_across_llcs_and_sockets)
{
    sched_fixture t(llc16_machine(), "6.6");
    std::vector<task_struct*> ts;
    for (int i = 0; i < 4; ++i)
        ts.push_back(&t.spawn(fmt::format("t{}", i), testlib::spin()));
    t.run_for(msecs(1));
    int socket0 = 0;
    for (auto* p : ts)
        socket0 += p->cpu < 16;
    EXPECT_EQ(socket0, 2) << "the NUMA/package level splits forks between the sockets";
}

} // namespace
} // namespace schedlab
