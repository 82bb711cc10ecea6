// SPDX-License-Identifier: GPL-2.0-only
/*
 * Load-balancing decisions on small hand-built situations (kernel-model.md 4),
 * and the Wasted-Cores style work-conservation property on every preset.
 */
#include "sched/testlib.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using testlib::sched_fixture;

/// Two spinners queued on cpu1 of a 2-CPU machine (their affinity opened up
/// after placement), cpu0 idle: a newly-idle balance on cpu0 has work to pull.
struct newidle_case {
    sched_fixture t;
    task_struct* a;
    task_struct* b;
    explicit newidle_case(const char* kernel) : t(testlib::small_machine(2), kernel)
    {
        a = &t.spawn("a", testlib::spin(), 0, 0, 1);
        b = &t.spawn("b", testlib::spin(), 0, 0, 1);
        t.run_for(msecs(10)); // a and b alternate at the tick: neither is cache hot
        a->cpus_mask.set_all();
        b->cpus_mask.set_all();
        a->nr_cpus_allowed = b->nr_cpus_allowed = 2;
        t.k->set_this_cpu(0);
    }
    sched_domain& base() { return *t.k->topology().cpu(0).sd(); }
    rq& rq0() { return t.k->cpu_rq(0); }
};

TEST(sched_balance_newidle, gate_closed_when_avg_idle_is_below_the_domain_cost)
{
    newidle_case c("6.6");
    ASSERT_TRUE(c.t.k->rd().overload);
    c.base().max_newidle_lb_cost = usecs(400);
    c.rq0().avg_idle = usecs(300);
    EXPECT_EQ(c.t.k->sched_balance_newidle(c.rq0()), 0);
    EXPECT_EQ(c.base().stats.lb_count[CPU_NEWLY_IDLE], 0u);
    EXPECT_EQ(c.rq0().nr_running, 0u);
}

TEST(sched_balance_newidle, gate_open_pulls_one_task)
{
    newidle_case c("6.6");
    c.base().max_newidle_lb_cost = usecs(400);
    c.rq0().avg_idle = usecs(900);
    EXPECT_EQ(c.t.k->sched_balance_newidle(c.rq0()), 1);
    EXPECT_EQ(c.base().stats.lb_count[CPU_NEWLY_IDLE], 1u);
    EXPECT_EQ(c.base().stats.lb_gained[CPU_NEWLY_IDLE], 1u);
    EXPECT_EQ(c.rq0().nr_running, 1u);
    EXPECT_EQ(c.t.k->cpu_rq(1).nr_running, 1u);
    EXPECT_EQ(c.rq0().idle_stamp, 0u) << "a pull clears idle_stamp";
}

TEST(sched_balance_newidle, gate_closed_without_root_domain_overload)
{
    newidle_case c("6.6");
    c.t.k->rd().overload = false;
    c.rq0().avg_idle = msecs(1);
    EXPECT_EQ(c.t.k->sched_balance_newidle(c.rq0()), 0);
    EXPECT_EQ(c.base().stats.lb_count[CPU_NEWLY_IDLE], 0u);
}

TEST(sched_balance_newidle, v5_15_gates_on_migration_cost_instead)
{
    newidle_case c("5.15");
    c.base().max_newidle_lb_cost = 0;
    c.rq0().avg_idle = usecs(499); // below the 0.5 ms migration_cost
    EXPECT_EQ(c.t.k->sched_balance_newidle(c.rq0()), 0);
    c.rq0().avg_idle = usecs(501);
    EXPECT_EQ(c.t.k->sched_balance_newidle(c.rq0()), 1);
}

TEST(update_newidle_cost, takes_a_new_maximum_and_decays_by_253_256_per_second)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    sched_domain& sd = *t.k->topology().cpu(0).sd();
    EXPECT_FALSE(t.k->update_newidle_cost(sd, 25600));
    EXPECT_EQ(sd.max_newidle_lb_cost, 25600u);
    EXPECT_FALSE(t.k->update_newidle_cost(sd, 100)) << "no decay within the second";
    t.run_for(msecs(1100)); // nothing runs: no balancing touches the domain meanwhile
    EXPECT_TRUE(t.k->update_newidle_cost(sd, 0));
    EXPECT_EQ(sd.max_newidle_lb_cost, 25600u * 253 / 256);
}

TEST(root_domain_overload, is_set_by_a_second_task_and_cleared_only_by_top_level_balancing)
{
    sched_fixture t(testlib::small_machine(2), "6.6");
    EXPECT_FALSE(t.k->rd().overload);
    t.spawn("a", testlib::spin(), 0, 0, 0);
    t.spawn("short", testlib::run_sleep(msecs(2), 1, 1), 0, 0, 0);
    t.run_for(usecs(100));
    EXPECT_TRUE(t.k->rd().overload);
    t.run_for(msecs(8)); // "short" has exited: one task per CPU at most
    EXPECT_TRUE(t.k->rd().overload) << "sticky until the top level balances";
    t.run_for(msecs(200)); // cpu0's busy periodic balance of the only (top) level: 2 ms x 16
    EXPECT_FALSE(t.k->rd().overload);
}

struct hot_case {
    sched_fixture t;
    task_struct* p;
    lb_env env;
    explicit hot_case(machine m) : t(std::move(m), "6.6")
    {
        p = &t.spawn("p", testlib::spin(), 0, 0, 1);
        t.spawn("q", testlib::spin(), 0, 0, 1);
        t.run_for(msecs(10));
        for (auto& task : t.k->tasks()) { // placed on cpu1; now allowed anywhere
            task->cpus_mask.set_all();
            task->nr_cpus_allowed = task->cpus_mask.weight();
        }
        env.sd = t.k->topology().cpu(0).sd();
        env.src_rq = &t.k->cpu_rq(1);
        env.dst_rq = &t.k->cpu_rq(0);
        env.src_cpu = 1;
        env.dst_cpu = 0;
        env.idle = CPU_IDLE;
    }
};

TEST(task_hot, a_task_that_ran_within_migration_cost_is_hot)
{
    hot_case c(testlib::small_machine(2));
    const u64 now = c.env.src_rq->clock_task;
    c.p->se.exec_start = now - usecs(100);
    EXPECT_EQ(c.t.k->task_hot(*c.p, c.env), 1);
    c.p->se.exec_start = now - usecs(600);
    EXPECT_EQ(c.t.k->task_hot(*c.p, c.env), 0);
}

TEST(task_hot, smt_siblings_share_the_cache_so_nothing_is_hot)
{
    hot_case c(testlib::small_machine(1, 2)); // cpus 0 and 1 are SMT siblings
    ASSERT_TRUE(c.env.sd->has(SD_SHARE_CPUCAPACITY));
    c.p->se.exec_start = c.env.src_rq->clock_task - usecs(10);
    EXPECT_EQ(c.t.k->task_hot(*c.p, c.env), 0);
}

TEST(task_hot, buddies_are_hot_with_cache_hot_buddy)
{
    hot_case c(testlib::small_machine(2));
    c.p->se.exec_start = c.env.src_rq->clock_task - msecs(5);
    c.env.src_rq->cfs.next = &c.p->se;
    c.t.spawn("dst-busy", testlib::spin(), 0, 0, 0);
    c.t.k->set_this_cpu(0);
    ASSERT_GT(c.env.dst_rq->nr_running, 0u);
    EXPECT_EQ(c.t.k->task_hot(*c.p, c.env), 1);
    c.env.src_rq->cfs.next = nullptr;
}

TEST(can_migrate_task, a_hot_task_moves_once_balancing_failed_cache_nice_tries_times)
{
    hot_case c(testlib::small_machine(2));
    task_struct* waiting = c.env.src_rq->curr == c.p ? c.env.src_rq->cfs_tasks.back() : c.p;
    ASSERT_NE(waiting, c.env.src_rq->curr);
    c.p = waiting;
    c.p->se.exec_start = c.env.src_rq->clock_task - usecs(100);
    c.env.sd->nr_balance_failed = c.env.sd->cache_nice_tries;
    EXPECT_EQ(c.t.k->can_migrate_task(*c.p, c.env), 0);
    c.env.sd->nr_balance_failed = c.env.sd->cache_nice_tries + 1;
    const u64 before = c.env.sd->stats.lb_hot_gained[CPU_IDLE];
    EXPECT_EQ(c.t.k->can_migrate_task(*c.p, c.env), 1);
    EXPECT_EQ(c.env.sd->stats.lb_hot_gained[CPU_IDLE], before + 1);
}

TEST(sched_balance_rq, periodic_balancing_spreads_pinned_then_released_tasks)
{
    // Eight spinners start on cpu0 of a 4-CPU machine; once allowed anywhere,
    // idle and periodic balancing must spread them to two per CPU.
    sched_fixture t(testlib::small_machine(4), "6.6");
    std::vector<task_struct*> ts;
    for (int i = 0; i < 8; ++i)
        ts.push_back(&t.spawn(fmt::format("s{}", i), testlib::spin(), 0, 0, 0));
    t.run_for(msecs(5));
    for (auto* p : ts) {
        p->cpus_mask.set_all();
        p->nr_cpus_allowed = 4;
    }
    t.run_for(msecs(300));
    for (int cpu = 0; cpu < 4; ++cpu)
        EXPECT_EQ(t.k->cpu_rq(cpu).nr_running, 2u) << t.k->dump_state();
}

class work_conservation : public ::testing::TestWithParam<const char*> {};

TEST_P(work_conservation, holds_for_a_cpu_bound_spread_with_exits)
{
    const machine m = load_machine(GetParam());
    sched_fixture t(m, "6.6", 5);
    t.k->set_check_level(check_level::sampled, 4096);
    // A CPU-bound spread: 1.5 tasks per CPU, all forked from cpu0, a third
    // of them short-lived so that imbalance appears as they exit.
    const int n = m.nr_cpus() * 3 / 2;
    for (int i = 0; i < n; ++i) {
        if (i % 3 == 0)
            t.spawn(fmt::format("short{}", i), testlib::run_sleep(msecs(20), 1, 1));
        else
            t.spawn(fmt::format("spin{}", i), testlib::spin(msecs(5)));
    }
    testlib::wasted_cores_checker w(*t.k);
    for (int step = 0; step < 6000; ++step) { // 1.2 s
        t.run_for(usecs(200));
        w.sample();
    }
    EXPECT_EQ(w.worst, 0) << w.worst_what;
    EXPECT_EQ(w.open_now(), 0) << "the spread has settled by the end";
}

INSTANTIATE_TEST_SUITE_P(presets, work_conservation,
                         ::testing::Values("skylake-18c", "ryzen-7950x", "milan-2s", "spr-2s",
                                           "bergamo-2s", "icelake-2s"),
                         [](const auto& param_info) {
                             std::string s = param_info.param;
                             for (char& c : s)
                                 if (c == '-')
                                     c = '_';
                             return s;
                         });

} // namespace
} // namespace schedlab
