// SPDX-License-Identifier: GPL-2.0-only
/*
 * pipe->mutex under contention (workload/mutex.h): minimal scenarios whose outcome
 * follows from kernel/locking/mutex.c (6.x) and fs/pipe.c by hand.
 *
 * The costs: pipe_write = 100 us with no jitter and no hardware costs (test_env), so
 * a 1-byte write() is 53 us of entry (outside the mutex) then 47 us holding it
 * (pipe_lock_pct = 47; the 1-byte copy rounds to 1 ns). Every task is pinned and
 * starts its write() at an absolute time (clock_nanosleep(TIMER_ABSTIME)).
 */
#include "workload/mutex.h"

#include "support/workload_env.h"
#include "workload/channel.h"
#include "workload/program.h"
#include "workload/task.h"

#include <gtest/gtest.h>

#include <string>

namespace schedlab {
namespace {

using testing::test_env;

constexpr sim_time T0 = 1'000'000; // 1 ms: every task has started and slept by then

cost_params slow_pipe()
{
    cost_params c;
    c.jitter_pct = 0;
    c.pipe_write = 100'000;
    return c;
}

// The scenarios' start times are exact: their tasks' sleeps have no timer slack.
task_code writer_at(task_context& t, channel& ch, sim_time start, sim_time& done)
{
    t.task().timer_slack_ns = 0;
    co_await t.sleep_until(start);
    co_await t.write(ch, 1);
    done = t.now();
}

task_code runner_at(task_context& t, sim_time start, sim_dur ns, sim_time& done)
{
    t.task().timer_slack_ns = 0;
    co_await t.sleep_until(start);
    co_await t.run(ns);
    done = t.now();
}

/*
 * kernel: mutex_optimistic_spin(): B finds the mutex held by A, which is running on
 * its CPU, so B spins (no sleep) until A's mutex_unlock(), then takes it and holds it
 * for its own 47 us. Without the mutex B's write() would end 10 us after A's (their
 * start offset); with it, one hold after A's.
 */
TEST(pipe_mutex, a_second_writer_spins_while_the_owner_runs_then_holds_after_it)
{
    test_env e(2, 1, "6.6", slow_pipe());
    workload_state st;
    pipe_channel& ch = st.make_pipe("p");
    sim_time a_done = 0, b_done = 0;
    e.spawn_pinned(make_task([&](task_context& t) { return writer_at(t, ch, T0, a_done); }), "A",
                   0);
    e.spawn_pinned(
        make_task([&](task_context& t) { return writer_at(t, ch, T0 + usecs(10), b_done); }), "B",
        1);
    e.k.run(secs(1));

    const cost_params& c = e.k.charges().params();
    const sim_dur hold = c.pipe_write * c.pipe_lock_pct / 100 + copy_cost(c, 1);
    ASSERT_GT(a_done, 0);
    ASSERT_GT(b_done, a_done);
    EXPECT_GE(b_done - a_done, hold);
    EXPECT_LE(b_done - a_done, hold + 2) << "B takes the mutex as A releases it";
    const mutex_stats& ms = ch.pipe_mutex().stats();
    EXPECT_EQ(ms.acquisitions, 2u);
    EXPECT_EQ(ms.contended, 1u);
    EXPECT_EQ(ms.sleeps, 0u);
    EXPECT_GE(ms.spins, 1u);
    // B looked at T0 + 10 us + its entry, A releases at T0 + its entry + hold: B spun
    // the 10 us it missed of A's hold... the rest of it: hold - 10 us.
    EXPECT_GE(ms.spin_ns, hold - usecs(10));
    EXPECT_LE(ms.spin_ns, hold - usecs(10) + 2);
    EXPECT_EQ(ch.pipe_mutex().owner(), nullptr);
}

/*
 * kernel: mutex_can_spin_on_owner() is false when the owner is not on a CPU: A holds
 * the mutex and is preempted by an RT task on its CPU; B then finds the owner off its
 * CPU, joins the wait list and sleeps; A, back on its CPU, finishes its hold and its
 * mutex_unlock() wakes B (__mutex_unlock_slowpath(): the first waiter), which takes it.
 * Without the mutex B's write() would end before the RT task does. Full preemption: the RT
 * task's timer interrupt preempts A inside its write() (irqentry_exit_cond_resched());
 * under none or voluntary A would keep the CPU to its return to user mode.
 */
TEST(pipe_mutex, a_writer_sleeps_while_the_owner_is_preempted_and_the_unlock_wakes_it)
{
    test_env e(2, 1, "6.6+preempt=full", slow_pipe());
    workload_state st;
    pipe_channel& ch = st.make_pipe("p");
    sim_time a_done = 0, b_done = 0, rt_done = 0;
    task_struct& a = e.spawn_pinned(
        make_task([&](task_context& t) { return writer_at(t, ch, T0, a_done); }), "A", 0);
    // A takes the mutex at ~T0 + 54 us and would hold it to ~T0 + 101 us.
    e.spawn_pinned(make_task([&](task_context& t) {
                       return runner_at(t, T0 + usecs(70), usecs(100), rt_done);
                   }),
                   "rt", 0, SCHED_FIFO);
    // B looks at ~T0 + 74 us, while A is preempted.
    task_struct& b = e.spawn_pinned(
        make_task([&](task_context& t) { return writer_at(t, ch, T0 + usecs(20), b_done); }), "B",
        1);
    e.k.run(secs(1));

    ASSERT_GT(rt_done, 0);
    EXPECT_GT(a_done, rt_done) << "A finished its hold after the RT task";
    EXPECT_GT(b_done, a_done) << "B got the mutex only after A released it";
    const mutex_stats& ms = ch.pipe_mutex().stats();
    EXPECT_EQ(ms.contended, 1u);
    EXPECT_EQ(ms.spins, 0u) << "the owner was off its CPU: no optimistic spinning";
    EXPECT_EQ(ms.sleeps, 1u);
    EXPECT_EQ(ms.wakeups, 1u) << "A's unlock woke B";
    EXPECT_EQ(ms.handoffs, 0u);
    EXPECT_GE(b.nvcsw, 2u) << "B slept on the mutex (and at its exit)";
    EXPECT_GE(a.nivcsw, 1u) << "A was preempted holding the mutex";
}

/*
 * kernel: the wake-up order and MUTEX_FLAG_HANDOFF. A holds and is preempted; B
 * sleeps on the wait list (as above). A runs again; C arrives and spins (OSQ). A's
 * unlock releases the mutex: C, spinning, takes it, and B is woken to find it taken:
 * as the first waiter after a sleep it sets HANDOFF (__mutex_trylock_or_handoff())
 * and spins as a waiter. D arrives while C holds and spins in the OSQ. C's unlock
 * sees HANDOFF and hands the mutex to B (__mutex_handoff()), not to D, though D was
 * spinning too; B's unlock then releases it to D. Completion order C, B, D, where
 * without the mutex B (the earliest to arrive) would finish first.
 */
TEST(pipe_mutex, a_first_waiter_that_loses_the_mutex_to_a_spinner_gets_it_handed_off_next)
{
    test_env e(4, 1, "6.6+preempt=full", slow_pipe());
    workload_state st;
    pipe_channel& ch = st.make_pipe("p");
    sim_time a_done = 0, b_done = 0, c_done = 0, d_done = 0, rt_done = 0;
    e.spawn_pinned(make_task([&](task_context& t) { return writer_at(t, ch, T0, a_done); }), "A",
                   0);
    e.spawn_pinned(make_task([&](task_context& t) {
                       return runner_at(t, T0 + usecs(70), usecs(100), rt_done);
                   }),
                   "rt", 0, SCHED_FIFO);
    e.spawn_pinned(
        make_task([&](task_context& t) { return writer_at(t, ch, T0 + usecs(20), b_done); }), "B",
        1);
    // The RT task runs to ~T0 + 171 us, then its exit (costs().exit, 20 us); A runs again
    // from ~T0 + 192 us and releases at ~T0 + 224 us: C looks at ~T0 + 204 us.
    e.spawn_pinned(
        make_task([&](task_context& t) { return writer_at(t, ch, T0 + usecs(150), c_done); }), "C",
        2);
    // C holds from ~T0 + 224 us to ~T0 + 271 us: D looks at ~T0 + 234 us.
    e.spawn_pinned(
        make_task([&](task_context& t) { return writer_at(t, ch, T0 + usecs(180), d_done); }), "D",
        3);
    e.k.run(secs(1));

    ASSERT_GT(rt_done, 0);
    EXPECT_LT(a_done, c_done);
    EXPECT_LT(c_done, b_done) << "C, spinning, took the mutex A released; B was still waking";
    EXPECT_LT(b_done, d_done) << "C handed the mutex to B, the first waiter, not to D";
    const mutex_stats& ms = ch.pipe_mutex().stats();
    EXPECT_EQ(ms.acquisitions, 4u);
    EXPECT_EQ(ms.contended, 3u);
    EXPECT_EQ(ms.sleeps, 1u);
    EXPECT_EQ(ms.wakeups, 1u);
    EXPECT_EQ(ms.handoffs, 1u);
    EXPECT_EQ(ch.pipe_mutex().nr_waiters(), 0u);
    EXPECT_EQ(ch.pipe_mutex().nr_spinners(), 0u);
}

/// A reader and a writer share the mutex too: an uncontended pair never waits for it.
TEST(pipe_mutex, uncontended_calls_take_it_without_waiting)
{
    test_env e(2, 1, "6.6", slow_pipe());
    workload_state st;
    pipe_channel& ch = st.make_pipe("p");
    sim_time done = 0;
    e.spawn_pinned(make_task([&](task_context& t) { return writer_at(t, ch, T0, done); }), "A", 0);
    e.k.run(secs(1));
    const mutex_stats& ms = ch.pipe_mutex().stats();
    EXPECT_EQ(ms.acquisitions, 1u);
    EXPECT_EQ(ms.contended, 0u);
    EXPECT_EQ(ms.spin_ns, 0);
}

} // namespace
} // namespace schedlab
