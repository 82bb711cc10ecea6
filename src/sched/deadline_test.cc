// SPDX-License-Identifier: GPL-2.0-only
/*
 * The deadline class (deadline.cc): each expectation follows by hand from
 * kernel/sched/deadline.c on a machine without costs (testlib::sched_fixture::
 * no_costs), HZ=250 (a 4 ms tick: a running DL task's runtime is charged at the
 * tick, at its own sleep and at its preemption), so every switch happens at the
 * event that causes it.
 */
#include "sched/testlib.h"

#include "sim/config_error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using testlib::sched_fixture;
using testlib::small_machine;

task_struct& spawn_dl(sched_fixture& t, const std::string& comm, sim_dur runtime,
                      sim_dur deadline, sim_dur period, std::unique_ptr<task_behaviour> b,
                      int cpu = 0)
{
    task_opts o;
    o.comm = comm;
    o.policy = SCHED_DEADLINE;
    o.dl = {static_cast<u64>(runtime), static_cast<u64>(deadline), static_cast<u64>(period)};
    o.cpu = cpu;
    return t.k->spawn(std::move(b), o);
}

std::string spawn_error(sched_fixture& t, sim_dur runtime, sim_dur deadline, sim_dur period,
                        int pin_cpu = -1)
{
    task_opts o;
    o.comm = "refused";
    o.policy = SCHED_DEADLINE;
    o.dl = {static_cast<u64>(runtime), static_cast<u64>(deadline), static_cast<u64>(period)};
    if (pin_cpu >= 0) {
        o.allowed = cpumask(t.m.nr_cpus());
        o.allowed.set(pin_cpu);
    }
    try {
        t.k->spawn(testlib::spin(), o);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

TEST(dl_class, a_deadline_task_runs_in_the_dl_class_above_rt)
{
    sched_fixture t(small_machine(1), "6.6");
    task_struct& p = spawn_dl(t, "dl", msecs(10), msecs(30), msecs(100), testlib::spin());
    EXPECT_EQ(p.sched_class, &dl_sched_class);
    EXPECT_EQ(p.prio, -1); // MAX_DL_PRIO - 1
    EXPECT_TRUE(sched_class_above(&dl_sched_class, &rt_sched_class));
    EXPECT_EQ(p.dl.dl_bw, (10ULL << 20) / 100); // to_ratio(period, runtime)
    EXPECT_EQ(p.dl.dl_density, (10ULL << 20) / 30);
    EXPECT_EQ(t.k->rd().dl_bw.total_bw, p.dl.dl_bw);
}

TEST(dl_class, edf_runs_the_earliest_absolute_deadline_first)
{
    // Three tasks created at t=0 with relative deadlines 100, 50 and 30 ms, each 5 ms of
    // work: EDF runs them in deadline order whatever their creation order, before the
    // fair task, and none is throttled (5 ms < 10 ms of runtime).
    sched_fixture t(small_machine(1), "6.6");
    task_struct& fair = t.spawn("fair", testlib::spin());
    task_struct& a = spawn_dl(t, "a", msecs(10), msecs(100), msecs(100), testlib::run_then_exit(msecs(5)));
    task_struct& b = spawn_dl(t, "b", msecs(10), msecs(50), msecs(100), testlib::run_then_exit(msecs(5)));
    task_struct& c = spawn_dl(t, "c", msecs(10), msecs(30), msecs(100), testlib::run_then_exit(msecs(5)));
    EXPECT_EQ(a.dl.deadline, sched_clock_at(msecs(100)));
    EXPECT_EQ(c.dl.deadline, sched_clock_at(msecs(30)));
    t.run_for(msecs(20));
    EXPECT_EQ(c.exit_time, msecs(5));
    EXPECT_EQ(b.exit_time, msecs(10));
    EXPECT_EQ(a.exit_time, msecs(15));
    EXPECT_EQ(fair.se.sum_exec_runtime, static_cast<u64>(msecs(5)));
    EXPECT_EQ(t.k->rd().dl_bw.total_bw, 0u) << "task_dead_dl() returns the bandwidth";
}

TEST(dl_class, cbs_throttles_at_runtime_exhaustion_and_replenishes_at_the_next_period)
{
    // runtime 10 ms per 100 ms, always runnable, beside a fair hog. The runtime is charged
    // at the ticks (4, 8, 12 ms): at 12 it is -2 ms, so the task is throttled and its timer
    // set for the next period (100 ms), which replenishes it to -2 + 10 = 8 ms with the
    // deadline 200 ms; the ticks at 104 and 108 exhaust it (0 ms counts as exhausted), the
    // timer at 200 gives 0 + 10. So 12, 8, 12, 8 ... ms a period: 100 ms in ten periods.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& fair = t.spawn("fair", testlib::spin());
    task_struct& p = spawn_dl(t, "dl", msecs(10), msecs(100), msecs(100), testlib::spin());
    t.run_for(msecs(13));
    EXPECT_TRUE(p.dl.dl_throttled);
    EXPECT_EQ(p.dl.runtime, -msecs(2));
    EXPECT_EQ(p.se.sum_exec_runtime, static_cast<u64>(msecs(12)));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &fair);
    t.run_for(msecs(101 - 13));
    EXPECT_FALSE(p.dl.dl_throttled);
    EXPECT_EQ(p.dl.runtime, msecs(8));
    EXPECT_EQ(p.dl.deadline, sched_clock_at(msecs(200)));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &p);
    t.run_for(msecs(990 - 101));
    EXPECT_EQ(p.se.sum_exec_runtime, static_cast<u64>(msecs(100)));
    // The fair task's runtime is charged at the ticks: up to 988 ms here.
    EXPECT_EQ(fair.se.sum_exec_runtime, static_cast<u64>(msecs(888)));
    EXPECT_EQ(p.dl.nr_throttled, 10u);
}

TEST(dl_class, the_cbs_wakeup_rule_keeps_a_deadline_the_runtime_fits_and_renews_one_it_overflows)
{
    // runtime 10 ms, deadline = period = 100 ms; run 6 ms, sleep 50 ms, run 6, sleep 50.
    // At 6 ms it sleeps with 4 ms left (tick at 4, dequeue at 6). Woken at 56: 4 ms before
    // the deadline 100 is 4/44 < 10/100, so dl_entity_overflow() is false and it keeps
    // deadline and runtime; the tick at 60 exhausts them, the timer at 100 replenishes
    // (deadline 200, 10 ms) and it finishes at 102 with 8 ms left. Woken at 152: 8/48 >
    // 10/100 overflows, so a new instance: deadline 152 + 100, runtime 10 ms.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& p = spawn_dl(t, "dl", msecs(10), msecs(100), msecs(100),
                              testlib::run_sleep(msecs(6), msecs(50), 2));
    t.run_for(msecs(57));
    EXPECT_EQ(p.dl.deadline, sched_clock_at(msecs(100)));
    EXPECT_EQ(p.dl.runtime, msecs(4));
    t.run_for(msecs(101 - 57));
    EXPECT_EQ(p.dl.deadline, sched_clock_at(msecs(200)));
    EXPECT_EQ(p.dl.nr_throttled, 1u);
    t.run_for(msecs(153 - 101));
    EXPECT_EQ(p.dl.deadline, sched_clock_at(msecs(252)));
    EXPECT_EQ(p.dl.runtime, msecs(10));
}

TEST(dl_class, a_constrained_deadline_task_woken_after_its_deadline_waits_for_its_period)
{
    // deadline 20 ms < period 100 ms: after 5 ms of work it sleeps 30 ms and wakes at 35,
    // past its deadline 20 but before its next period (100): dl_check_constrained_dl()
    // throttles it until 100, where the timer starts the next instance.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& p = spawn_dl(t, "dl", msecs(10), msecs(20), msecs(100),
                              testlib::run_sleep(msecs(5), msecs(30), 2));
    t.run_for(msecs(36));
    EXPECT_TRUE(p.dl.dl_throttled);
    EXPECT_EQ(p.se.sum_exec_runtime, static_cast<u64>(msecs(5)));
    t.run_for(msecs(106 - 36));
    EXPECT_EQ(p.se.sum_exec_runtime, static_cast<u64>(msecs(10)));
    EXPECT_EQ(p.dl.deadline, sched_clock_at(msecs(120)));
}

TEST(dl_class, a_dl_wakee_preempts_rt_and_an_earlier_deadline_preempts_dl)
{
    sched_fixture t(small_machine(1), "6.6");
    task_opts o;
    o.comm = "rt";
    o.policy = SCHED_FIFO;
    o.rt_priority = 99;
    task_struct& rt = t.k->spawn(testlib::spin(), o);
    task_struct& a = spawn_dl(t, "a", msecs(80), msecs(100), msecs(100), testlib::spin());
    t.run_for(msecs(10));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &a) << "DL runs above the highest RT priority";
    EXPECT_EQ(rt.se.sum_exec_runtime, 0u);
    // b's deadline 10 + 20 = 30 ms is earlier than a's 100: wakeup_preempt_dl() preempts.
    task_struct& b = spawn_dl(t, "b", msecs(5), msecs(20), msecs(100), testlib::run_then_exit(msecs(2)));
    t.run_for(msecs(5));
    EXPECT_EQ(b.exit_time, msecs(12));
    EXPECT_EQ(b.sched_info_.run_delay, 0u);
    EXPECT_GE(a.nivcsw, 1u);
}

TEST(dl_class, sched_yield_gives_up_the_rest_of_the_instance)
{
    // 1 ms of work then sched_yield(), forever: yield_task_dl() throttles it until its next
    // period, where replenish_dl_entity() drops the leftover runtime: 1 ms per 100 ms.
    sched_fixture t(small_machine(1), "6.6");
    task_struct& fair = t.spawn("fair", testlib::spin());
    auto ran = std::make_shared<bool>(false);
    task_struct& p = spawn_dl(t, "dl", msecs(10), msecs(100), msecs(100),
                              testlib::behaviour([ran](syscalls&, task_struct&) {
                                  *ran = !*ran;
                                  return *ran ? task_action::cpu(msecs(1))
                                              : task_action::do_yield();
                              }));
    t.run_for(msecs(990));
    EXPECT_EQ(p.se.sum_exec_runtime, static_cast<u64>(msecs(10)));
    EXPECT_EQ(fair.se.sum_exec_runtime, static_cast<u64>(msecs(978))) << "charged to 988 ms";
}

TEST(dl_admission, sched_setattr_refuses_what_does_not_fit_with_ebusy)
{
    // 2 CPUs at sched_rt_runtime_us / sched_rt_period_us = 95% each: 1.9 CPUs. Three 50%
    // tasks fit (1.5), a fourth (2.0) does not; one exiting makes room again (c waits for
    // a or b to be throttled at the tick of 52 ms, then exits at 53).
    sched_fixture t(small_machine(2), "6.6");
    spawn_dl(t, "a", msecs(50), msecs(100), msecs(100), testlib::spin());
    spawn_dl(t, "b", msecs(50), msecs(100), msecs(100), testlib::spin());
    spawn_dl(t, "c", msecs(50), msecs(100), msecs(100), testlib::run_then_exit(msecs(1)));
    EXPECT_THAT(spawn_error(t, msecs(50), msecs(100), msecs(100)), HasSubstr("-EBUSY"));
    t.run_for(msecs(60));
    EXPECT_EQ(spawn_error(t, msecs(50), msecs(100), msecs(100)), "");
    EXPECT_THAT(spawn_error(t, msecs(50), msecs(100), msecs(100)), HasSubstr("-EBUSY"));
}

TEST(dl_admission, bad_parameters_are_einval_and_a_pinned_task_eperm)
{
    sched_fixture t(small_machine(2), "6.6");
    EXPECT_THAT(spawn_error(t, msecs(20), msecs(10), msecs(100)), HasSubstr("-EINVAL"))
        << "runtime > deadline";
    EXPECT_THAT(spawn_error(t, msecs(1), msecs(100), msecs(50)), HasSubstr("-EINVAL"))
        << "deadline > period";
    EXPECT_THAT(spawn_error(t, 512, msecs(1), msecs(1)), HasSubstr("-EINVAL"))
        << "runtime < 1 << DL_SCALE";
    EXPECT_THAT(spawn_error(t, usecs(10), usecs(50), 0), HasSubstr("-EINVAL"))
        << "period (= deadline) < 100 us";
    EXPECT_THAT(spawn_error(t, msecs(1), msecs(10), msecs(10), 1), HasSubstr("-EPERM"));
    EXPECT_EQ(t.k->rd().dl_bw.total_bw, 0u);
}

/*
 * Two CPUs: a (deadline 100 ms) and b (deadline 80 ms) are created on cpu0 at once; a
 * new task is not placed (select_task_rq_dl() only acts at wakeups), so both queue
 * there. cpu0 runs b; set_next_task_dl() queues the push of a, which find_later_rq()
 * sends to cpu1, free in cpudl.
 */
class dl_push : public ::testing::TestWithParam<const char*> {};

TEST_P(dl_push, moves_a_waiting_dl_task_to_a_cpu_without_dl_tasks)
{
    sched_fixture t(small_machine(2), GetParam());
    task_struct& a = spawn_dl(t, "a", msecs(50), msecs(100), msecs(100), testlib::spin());
    task_struct& b = spawn_dl(t, "b", msecs(50), msecs(80), msecs(100), testlib::spin());
    t.run_for(msecs(1));
    EXPECT_EQ(t.k->cpu_rq(0).curr, &b);
    EXPECT_EQ(a.cpu, 1);
    EXPECT_EQ(t.k->cpu_rq(1).curr, &a);
    EXPECT_EQ(t.k->dl().dl_pushes, 1u);
}

INSTANTIATE_TEST_SUITE_P(profiles, dl_push, ::testing::Values("5.15", "6.6", "6.12"));

TEST(dl_pull, a_cpu_whose_dl_task_blocks_pulls_the_earliest_waiting_one)
{
    // c (deadline 50 ms) runs on cpu1; a (100) and b (120) are created on cpu0. cpu0 runs
    // a; b cannot be pushed: no CPU is free in cpudl and the latest earliest deadline is
    // cpu0's own 100, not later than b's 120. At 2 ms c blocks: balance_dl() pulls from
    // the DL-overloaded cpu0 its earliest pushable task, b, which does not beat cpu0's a.
    sched_fixture t(small_machine(2), "6.6");
    task_struct& c = spawn_dl(t, "c", msecs(40), msecs(50), msecs(100),
                              testlib::run_sleep(msecs(2), msecs(500), 1), 1);
    task_struct& a = spawn_dl(t, "a", msecs(40), msecs(100), msecs(100), testlib::spin());
    task_struct& b = spawn_dl(t, "b", msecs(40), msecs(120), msecs(120), testlib::spin());
    t.run_for(msecs(1));
    ASSERT_EQ(t.k->cpu_rq(1).curr, &c);
    ASSERT_EQ(t.k->cpu_rq(0).curr, &a);
    EXPECT_EQ(b.cpu, 0);
    EXPECT_EQ(t.k->dl().dl_pushes, 0u);
    t.run_for(msecs(2));
    EXPECT_EQ(b.cpu, 1);
    EXPECT_EQ(t.k->cpu_rq(1).curr, &b);
    EXPECT_EQ(t.k->dl().dl_pulls, 1u);
}

TEST(dl_server, the_fair_servers_hold_five_percent_of_each_cpu_in_6_12)
{
    // dl_server_apply_params(): 50 ms / 1 s per CPU is admitted like a task's bandwidth,
    // so a task can have 95% - 5% = 90% of a CPU on 6.12, 95% before.
    for (const char* v : {"6.6", "6.12"}) {
        sched_fixture t(small_machine(1), v);
        const std::string err = spawn_error(t, msecs(92), msecs(100), msecs(100));
        if (std::string(v) == "6.12")
            EXPECT_THAT(err, HasSubstr("-EBUSY")) << v;
        else
            EXPECT_EQ(err, "") << v;
    }
}

TEST(dl_server, a_fair_task_that_gets_its_runtime_in_the_background_never_needs_the_server)
{
    // A fair hog alone on 6.12: its own runtime is the server's background time, so each
    // 50 ms it runs restarts the deferred period (update_curr_dl_se()); the server is
    // never queued and never throttled.
    sched_fixture t(small_machine(1), "6.12");
    task_struct& fair = t.spawn("fair", testlib::spin());
    t.run_for(msecs(3000));
    EXPECT_EQ(t.k->dl().fair_server_runs, 0u);
    EXPECT_EQ(t.k->cpu_rq(0).fair_server.nr_throttled, 0u);
    EXPECT_TRUE(t.k->cpu_rq(0).fair_server.dl_server_active);
    EXPECT_FALSE(t.k->cpu_rq(0).fair_server.on_rq);
    EXPECT_EQ(fair.nivcsw, 0u);
}

} // namespace
} // namespace schedlab
