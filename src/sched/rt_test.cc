// SPDX-License-Identifier: GPL-2.0-only
/*
 * The rt class (rt.cc): each expectation follows by hand from kernel/sched/rt.c
 * on a machine without costs (testlib::sched_fixture::no_costs), HZ=250 (a 4 ms
 * tick), so every switch happens at the event that causes it.
 */
#include "sched/testlib.h"

#include <gtest/gtest.h>

#include <string>

namespace schedlab {
namespace {

using testlib::sched_fixture;
using testlib::small_machine;

task_struct& spawn_rt(sched_fixture& t, const std::string& comm, int policy, int rt_priority,
                      std::unique_ptr<task_behaviour> b, int cpu = 0, int pin_cpu = -1)
{
    task_opts o;
    o.comm = comm;
    o.policy = policy;
    o.rt_priority = rt_priority;
    o.cpu = cpu;
    if (pin_cpu >= 0) {
        o.allowed = cpumask(t.m.nr_cpus());
        o.allowed.set(pin_cpu);
    }
    return t.k->spawn(std::move(b), o);
}

TEST(rt_class, fifo_and_rr_tasks_run_in_the_rt_class_above_fair)
{
    sched_fixture t(small_machine(1), "6.6");
    task_struct& f = spawn_rt(t, "fifo", SCHED_FIFO, 1, testlib::spin());
    task_struct& r = spawn_rt(t, "rr", SCHED_RR, 99, testlib::spin());
    EXPECT_EQ(f.sched_class, &rt_sched_class);
    EXPECT_EQ(r.sched_class, &rt_sched_class);
    EXPECT_EQ(f.prio, 98); // MAX_RT_PRIO - 1 - rt_priority
    EXPECT_EQ(r.prio, 0);
    EXPECT_TRUE(sched_class_above(&rt_sched_class, &fair_sched_class));
    t.run_for(msecs(10));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &r) << "priority 99 runs before priority 1";
    EXPECT_EQ(f.se.sum_exec_runtime, 0u);
}

TEST(rt_class, an_rt_wakee_preempts_a_running_fair_task_at_once)
{
    // wakeup_preempt(): the wakee's class is above curr's, so resched_curr() at once;
    // the timer fires on the CPU itself, so no IPI delay: the RT task never waits.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& fair = t.spawn("fair", testlib::spin());
    task_struct& rt = spawn_rt(t, "rt", SCHED_FIFO, 50,
                               testlib::run_sleep(msecs(1), msecs(9), 10));
    t.run_for(msecs(200));
    EXPECT_EQ(rt.sched_info_.run_delay, 0u) << "the RT task waited for the fair task";
    EXPECT_EQ(rt.se.sum_exec_runtime, static_cast<u64>(msecs(10)));
    EXPECT_GE(fair.nivcsw, 10u) << "each RT wakeup preempts the fair task";
    EXPECT_EQ(fair.se.sum_exec_runtime + rt.se.sum_exec_runtime, static_cast<u64>(msecs(200)));
}

TEST(rt_class, fifo_runs_until_it_blocks_without_a_timeslice)
{
    // Two FIFO tasks of equal priority: the first runs its 300 ms to the end (task_tick_rt
    // does nothing for SCHED_FIFO), then the second; a fair task gets nothing meanwhile.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& fair = t.spawn("fair", testlib::spin());
    task_struct& a = spawn_rt(t, "a", SCHED_FIFO, 10, testlib::run_then_exit(msecs(300)));
    task_struct& b = spawn_rt(t, "b", SCHED_FIFO, 10, testlib::run_then_exit(msecs(300)));
    t.run_for(msecs(299));
    EXPECT_EQ(b.se.sum_exec_runtime, 0u);
    EXPECT_EQ(a.nivcsw, 0u);
    t.run_for(msecs(301));
    EXPECT_EQ(a.exit_time, msecs(300));
    EXPECT_EQ(b.exit_time, msecs(600));
    EXPECT_EQ(fair.se.sum_exec_runtime, 0u);
}

TEST(rt_class, rr_rotates_equal_priorities_every_timeslice)
{
    // sched_rr_timeslice is 100 ms = 25 ticks at HZ=250: the first task's 25th tick (at
    // 100 ms) requeues it behind the second, and so on: by 950 ms (before the RT bandwidth
    // throttles the CPU at 952 ms) a has had the slices ending at 100, 300, ..., 900 ms.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& a = spawn_rt(t, "a", SCHED_RR, 10, testlib::spin(msecs(1000)));
    task_struct& b = spawn_rt(t, "b", SCHED_RR, 10, testlib::spin(msecs(1000)));
    EXPECT_EQ(sched_rr_timeslice(*t.k), 25u);
    t.run_for(msecs(99));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &a);
    t.run_for(msecs(2));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &b) << "the timeslice ended at 100 ms";
    t.run_for(msecs(849));
    EXPECT_EQ(a.nivcsw, 5u);
    EXPECT_EQ(b.nivcsw, 4u);
    EXPECT_EQ(a.se.sum_exec_runtime, static_cast<u64>(msecs(500)));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &b);
}

TEST(rt_class, rr_alone_at_its_priority_keeps_the_cpu)
{
    // A higher-priority RR task alone in its list is not requeued at the end of its slice.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& hi = spawn_rt(t, "hi", SCHED_RR, 20, testlib::spin(msecs(1000)));
    task_struct& lo = spawn_rt(t, "lo", SCHED_RR, 10, testlib::spin(msecs(1000)));
    t.run_for(msecs(500));
    EXPECT_EQ(hi.nivcsw, 0u);
    EXPECT_EQ(lo.se.sum_exec_runtime, 0u);
}

TEST(rt_class, sched_yield_sends_a_fifo_task_to_the_tail_of_its_priority)
{
    // yield_task_rt(): each 1 ms run ends with sched_yield(), so two equal FIFO tasks
    // alternate millisecond by millisecond.
    auto yielder = [] {
        auto ran = std::make_shared<bool>(false);
        return testlib::behaviour([ran](syscalls&, task_struct&) {
            *ran = !*ran;
            return *ran ? task_action::cpu(msecs(1)) : task_action::do_yield();
        });
    };
    sched_fixture t(small_machine(1), "6.6");
    task_struct& a = spawn_rt(t, "a", SCHED_FIFO, 30, yielder());
    task_struct& b = spawn_rt(t, "b", SCHED_FIFO, 30, yielder());
    t.run_for(msecs(100));
    EXPECT_EQ(a.se.sum_exec_runtime, static_cast<u64>(msecs(50)));
    EXPECT_EQ(b.se.sum_exec_runtime, static_cast<u64>(msecs(50)));
    EXPECT_EQ(a.nivcsw, 50u) << "a yield is an involuntary switch (prev_state is TASK_RUNNING)";
}

TEST(rt_class, an_equal_priority_pinned_wakee_displaces_a_curr_that_can_run_elsewhere)
{
    // check_preempt_equal_prio(): cpu0 runs a, which cpupri could place on idle cpu1; the
    // wakee b of equal priority is pinned to cpu0. b goes to the head of the list and
    // preempts; a, now pushable, is pushed to cpu1 after the switch.
    sched_fixture t(small_machine(2), "6.6");
    task_struct& a = spawn_rt(t, "a", SCHED_FIFO, 50, testlib::spin(), 0);
    t.run_for(msecs(1));
    ASSERT_EQ(t.k->cpu_rq(0).curr, &a);
    task_struct& b = spawn_rt(t, "b", SCHED_FIFO, 50, testlib::spin(), 0, 0);
    t.run_for(msecs(1));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &b);
    EXPECT_EQ(a.cpu, 1);
    EXPECT_EQ(t.k->cpu_rq(1).curr, &a);
    EXPECT_EQ(t.k->rt().pushes, 1u);
}

TEST(rt_bandwidth, throttling_leaves_fair_tasks_the_period_minus_the_runtime)
{
    // sched_rt_runtime_us 950000 per sched_rt_period_us 1000000: each period the rt_rq is
    // throttled once its rt_time passes 950 ms (seen at a tick) and unthrottled by the
    // period timer, which pays back one runtime. The fair task gets 1000 - 950 = 50 ms a
    // period, give or take the tick at which the excess is seen (4 ms).
    sched_fixture t(small_machine(1), "6.6");
    task_struct& fair = t.spawn("fair", testlib::spin());
    task_struct& hog = spawn_rt(t, "hog", SCHED_FIFO, 50, testlib::spin());
    t.run_for(msecs(5000));
    const sim_dur fair_ns = static_cast<sim_dur>(fair.se.sum_exec_runtime);
    EXPECT_GE(fair_ns, msecs(5 * 50 - 5 * 4));
    EXPECT_LE(fair_ns, msecs(5 * 50 + 5 * 4));
    EXPECT_EQ(fair_ns + static_cast<sim_dur>(hog.se.sum_exec_runtime), msecs(5000));
    EXPECT_EQ(t.k->cpu_rq(0).rt.nr_throttled, 5u);
}

TEST(rt_bandwidth, a_throttled_cpu_idles_when_no_fair_task_waits)
{
    // RT_RUNTIME_SHARE is off: the throttled CPU borrows nothing and runs its idle task.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& hog = spawn_rt(t, "hog", SCHED_FIFO, 50, testlib::spin());
    t.run_for(msecs(1000));
    EXPECT_GE(hog.se.sum_exec_runtime, static_cast<u64>(msecs(950)));
    EXPECT_LE(hog.se.sum_exec_runtime, static_cast<u64>(msecs(954)));
    EXPECT_GE(t.k->cpu_rq(0).stats.sched_goidle, 1u);
}

TEST(rt_bandwidth, v6_12_has_no_default_rt_throttling_but_a_fair_server)
{
    // v6.12 removed the root rt_rq's bandwidth (5f6bd380c7bd) for the fair server
    // (deadline.cc): the RT hog is never throttled, and the starved fair task runs on the
    // server's 50 ms per second. The fair task's enqueue at 0 starts the server with a new
    // deferred instance (deadline 1 s, 50 ms), armed for its zero-laxity time, 950 ms.
    // There the 50 ms no longer fit before 1 s (dl_entity_overflow()), so
    // replenish_dl_entity() gives it a new period (deadline 1950 ms) and, dl_defer_running,
    // it runs at once: 950-1000 (exhausted at the tick of 1000), then at each period's
    // start: 1950-2000, 2950-... 100 ms by 2949 ms, 146 by 2999 (charged at the tick of
    // 2996), where 5.15-6.11 give it 50 ms a second by throttling the RT task.
    sched_fixture t(small_machine(1), "6.12");
    task_struct& fair = t.spawn("fair", testlib::spin());
    spawn_rt(t, "hog", SCHED_FIFO, 50, testlib::spin());
    t.run_for(msecs(949));
    EXPECT_EQ(fair.se.sum_exec_runtime, 0u);
    t.run_for(msecs(2949 - 949));
    EXPECT_EQ(fair.se.sum_exec_runtime, static_cast<u64>(msecs(100)));
    EXPECT_EQ(t.k->cpu_rq(0).fair_server.nr_throttled, 2u);
    t.run_for(msecs(2999 - 2949));
    EXPECT_EQ(fair.se.sum_exec_runtime, static_cast<u64>(msecs(146)));
    EXPECT_EQ(t.k->cpu_rq(0).rt.nr_throttled, 0u);
}

/*
 * Three CPUs: cpu0 runs a fair task, cpu1 an RT task of priority 10 (pinned), cpu2 a
 * fair task. Two FIFO tasks of priority 50 are created on cpu0 at once: neither finds
 * an RT task on cpu0 at select_task_rq_rt() time, so both queue there. cpu0 picks the
 * first; set_next_task_rt() queues the push of the second, which find_lowest_rq() sends
 * to the lowest cpupri below it: CPUPRI_NORMAL holds cpu2 (cpu1 is at cpupri 10).
 */
class rt_push : public ::testing::TestWithParam<const char*> {};

TEST_P(rt_push, moves_a_second_rt_task_to_the_cpu_cpupri_finds_lowest)
{
    sched_fixture t(small_machine(3), GetParam());
    t.spawn("fair0", testlib::spin(), 0, 0, 0);
    spawn_rt(t, "rt10", SCHED_FIFO, 10, testlib::spin(), 1, 1);
    t.spawn("fair2", testlib::spin(), 2, 0, 2);
    t.run_for(msecs(10));
    task_struct& a = spawn_rt(t, "a", SCHED_FIFO, 50, testlib::spin(), 0);
    task_struct& b = spawn_rt(t, "b", SCHED_FIFO, 50, testlib::spin(), 0);
    EXPECT_EQ(b.cpu, 0);
    t.run_for(msecs(1));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &a);
    EXPECT_EQ(b.cpu, 2);
    EXPECT_EQ(t.k->cpu_rq(2).curr, &b) << "the pushed task preempts cpu2's fair task";
    EXPECT_EQ(t.k->rt().pushes, 1u);
    EXPECT_EQ(t.k->rd().rto_count, 0);
}

INSTANTIATE_TEST_SUITE_P(profiles, rt_push, ::testing::Values("5.15", "6.6", "6.12"));

TEST(rt_select, a_wakee_behind_an_rt_task_goes_to_the_lowest_cpu)
{
    // select_task_rq_rt(): the wakee's CPU runs an RT task of its priority or higher, so
    // find_lowest_rq() places it on the idle CPU (CPUPRI_NORMAL), without a push.
    sched_fixture t(small_machine(2), "6.6");
    spawn_rt(t, "hi", SCHED_FIFO, 60, testlib::spin(), 0, 0);
    t.run_for(msecs(1));
    task_struct& w = spawn_rt(t, "w", SCHED_FIFO, 50, testlib::spin(), 0);
    EXPECT_EQ(w.cpu, 1);
    EXPECT_EQ(t.k->rt().pushes, 0u);
}

/*
 * A CPU lowering its priority pulls: cpu1's RT task (priority 60, pinned) exits while
 * cpu0 runs one priority-50 task and queues another that found no lower CPU when it was
 * pushed (cpu1 was above it). balance_rt() -> pull_rt_task(): with RT_PUSH_IPI, cpu0 is
 * asked to push (the IPI chain); without, cpu1 takes the task itself.
 */
class rt_pull : public ::testing::TestWithParam<bool> {};

TEST_P(rt_pull, a_cpu_lowering_its_priority_gets_the_waiting_rt_task)
{
    const bool push_ipi = GetParam();
    sched_fixture t(small_machine(2), "6.6", 1, push_ipi ? "RT_PUSH_IPI" : "NO_RT_PUSH_IPI");
    spawn_rt(t, "c", SCHED_FIFO, 60, testlib::run_then_exit(msecs(5)), 1, 1);
    t.run_for(msecs(1));
    task_struct& a = spawn_rt(t, "a", SCHED_FIFO, 50, testlib::spin(), 0);
    task_struct& b = spawn_rt(t, "b", SCHED_FIFO, 50, testlib::spin(), 0);
    t.run_for(msecs(2));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &a);
    EXPECT_EQ(b.cpu, 0) << "no CPU below priority 50 while c runs";
    EXPECT_EQ(t.k->rd().rto_count, 1);
    t.run_for(msecs(5));
    EXPECT_EQ(b.cpu, 1);
    EXPECT_EQ(t.k->cpu_rq(1).curr, &b);
    EXPECT_EQ(push_ipi ? t.k->rt().pushes : t.k->rt().pulls, 1u);
    EXPECT_EQ(push_ipi ? t.k->rt().pulls : t.k->rt().pushes, 0u);
}

INSTANTIATE_TEST_SUITE_P(rt_push_ipi, rt_pull, ::testing::Bool());

TEST(rt_class, schedules_are_deterministic)
{
    auto run = [](u64 seed) {
        sched_fixture t(small_machine(4), "6.6", seed);
        for (int i = 0; i < 6; ++i)
            spawn_rt(t, fmt::format("rt{}", i), i % 2 ? SCHED_RR : SCHED_FIFO, 10 + i % 3,
                     testlib::run_sleep(msecs(3 + i), msecs(2), 50), i % 4);
        for (int i = 0; i < 4; ++i)
            t.spawn(fmt::format("f{}", i), testlib::run_sleep(msecs(2), msecs(1), 100), i);
        t.run_for(msecs(1000));
        return t.k->schedule_digest();
    };
    EXPECT_EQ(run(1), run(1));
}

} // namespace
} // namespace schedlab
