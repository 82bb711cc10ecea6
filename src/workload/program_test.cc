// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program builder and run_program(): loops, run/sleep timing, fork and
 * reaping, counters, marks, syscall cost accounting.
 */
#include "workload/program.h"

#include "sched/decision_log.h"
#include "support/workload_env.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedlab {
namespace {

using testing::no_jitter;
using testing::test_env;

TEST(program_loop, nested_loops_repeat_their_bodies_and_zero_count_loops_are_skipped)
{
    test_env t(1);
    workload_state st;
    counter& c = st.make_counter("c");
    counter& skipped = st.make_counter("skipped");
    program_builder b;
    b.loop(3, [&](program_builder& outer) {
        outer.signal(c);
        outer.loop(4, [&](program_builder& inner) { inner.signal(c); });
    });
    b.loop(0, [&](program_builder& l) { l.signal(skipped); });
    b.begin_loop(2).signal(c).end_loop();
    t.spawn(b.build(), st, "looper");
    t.k.run(secs(1));

    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(c.value, 3u * (1 + 4) + 2);
    EXPECT_EQ(skipped.value, 0u);
}

TEST(program_run, run_consumes_exactly_its_cpu_time_and_random_runs_stay_in_range)
{
    test_env t(1, 1, "6.6", no_jitter());
    workload_state st;
    task_struct& p =
        t.spawn(program_builder()
                    .mark("a")
                    .run(msecs(3))
                    .mark("b")
                    .loop(100, [](program_builder& l) { l.run_uniform(usecs(10), usecs(20)); })
                    .mark("c")
                    .run_exponential(usecs(50))
                    .build(),
                st, "runner");
    t.k.run(secs(1));

    const cost_params& c = t.k.charges().params();
    EXPECT_EQ(*st.mark_time("b") - *st.mark_time("a"), msecs(3) + c.gettime);
    const sim_dur loop = *st.mark_time("c") - *st.mark_time("b") - c.gettime;
    EXPECT_GE(loop, usecs(1000));
    EXPECT_LE(loop, usecs(2000));
    EXPECT_EQ(p.nivcsw, 0u);
    EXPECT_EQ(p.nvcsw, 1u) << "only do_exit()'s final schedule()";
}

TEST(program_sleep, sleep_blocks_for_its_duration)
{
    test_env t(1, 1, "6.6", no_jitter());
    workload_state st;
    task_struct& p =
        t.spawn(program_builder().mark("a").sleep(msecs(2)).mark("b").build(), st, "sleeper");
    t.k.run(secs(1));

    // Alone on its CPU, the timer fires at the end of its 50 us slack (hrtimer_nanosleep()).
    EXPECT_GE(*st.mark_time("b") - *st.mark_time("a"), msecs(2) + usecs(50));
    EXPECT_LT(*st.mark_time("b") - *st.mark_time("a"), msecs(2) + usecs(50) + usecs(20));
    EXPECT_EQ(p.nvcsw, 1u + 1u) << "the sleep, plus do_exit()";
}

TEST(program_fork, parent_reaps_every_child_through_the_exit_counter)
{
    test_env t(4);
    workload_state st;
    counter& chld = st.make_counter("wait_chldexit", WF_SYNC);
    program_ptr child = program_builder().run(msecs(1)).build(); // runs off its end: exits
    program_builder parent;
    for (int i = 0; i < 3; ++i)
        parent.fork(child, {.comm = "child", .thread = false, .notify = &chld});
    for (u64 i = 0; i < 3; ++i)
        parent.wait_for(chld, i + 1, &cost_params::wait_child);
    parent.mark("reaped");
    task_struct& main = t.spawn(parent.build(), st, "parent");
    t.k.run(secs(1));

    EXPECT_TRUE(t.k.all_exited());
    ASSERT_EQ(t.k.tasks().size(), 4u);
    EXPECT_EQ(chld.value, 3u);
    for (const auto& task : t.k.tasks()) {
        if (task.get() == &main)
            continue;
        EXPECT_EQ(task->parent_pid, main.pid);
        EXPECT_NE(task->tgid, main.tgid) << "fork() makes a new process";
        EXPECT_LE(task->exit_time, *st.mark_time("reaped"));
    }
    EXPECT_GE(*st.mark_time("reaped"), msecs(1));
}

TEST(program_fork, threads_share_the_parent_tgid_and_pay_the_thread_cost)
{
    test_env t(2, 1, "6.6", no_jitter());
    workload_state st;
    counter& join = st.make_counter("join");
    program_builder parent;
    parent.mark("a").fork(program_builder().build(),
                          {.comm = "thr", .thread = true, .notify = &join});
    parent.mark("b").wait_for(join, 1);
    task_struct& main = t.spawn(parent.build(), st, "parent");
    t.k.run(secs(1));

    EXPECT_TRUE(t.k.all_exited());
    ASSERT_EQ(t.k.tasks().size(), 2u);
    EXPECT_EQ(t.k.tasks()[1]->tgid, main.tgid);
    EXPECT_EQ(t.k.tasks()[1]->comm, "thr");
    const cost_params& c = t.k.charges().params();
    EXPECT_EQ(*st.mark_time("b") - *st.mark_time("a"), c.fork_thread + c.gettime);
}

TEST(program_exit, a_process_pays_the_process_exit_and_a_thread_the_thread_exit)
{
    cost_params costs = no_jitter();
    costs.exit = usecs(400);
    costs.exit_thread = usecs(5);
    test_env t(2, 1, "6.6", costs);
    workload_state st;
    counter& chld = st.make_counter("chld", WF_SYNC);
    counter& join = st.make_counter("join");
    program_builder parent;
    parent.fork(program_builder().build(), {.comm = "proc", .thread = false, .notify = &chld});
    parent.wait_for(chld, 1).mark("process reaped");
    parent.fork(program_builder().build(), {.comm = "thr", .thread = true, .notify = &join});
    parent.wait_for(join, 1).mark("thread joined");
    t.spawn(parent.build(), st, "parent");
    t.k.run(secs(1));

    ASSERT_TRUE(t.k.all_exited());
    ASSERT_EQ(t.k.tasks().size(), 3u);
    const task_struct& proc = *t.k.tasks()[1];
    const task_struct& thr = *t.k.tasks()[2];
    ASSERT_EQ(proc.comm, "proc");
    ASSERT_EQ(thr.comm, "thr");
    EXPECT_EQ(t.k.charges().exit_cost(proc), usecs(400));
    EXPECT_EQ(t.k.charges().exit_cost(thr), usecs(5));
    // Each child does nothing but exit: it is gone one exit cost after it first ran.
    EXPECT_GE(proc.exit_time - proc.start_time, usecs(400));
    EXPECT_LT(thr.exit_time - thr.start_time, usecs(400));
    EXPECT_GE(thr.exit_time - thr.start_time, usecs(5));
}

TEST(program_syscall, write_charges_entry_copy_and_one_wakeup_per_woken_task)
{
    test_env t(2, 1, "6.6", no_jitter());
    workload_state st;
    pipe_channel& pipe = st.make_pipe("p");
    t.spawn(program_builder().read(pipe, 1).build(), st, "reader");
    t.k.run(msecs(1));
    t.spawn(program_builder().mark("a").write(pipe, 2048).mark("b").build(), st, "writer");
    t.k.run(secs(1));

    const cost_params& c = t.k.charges().params();
    EXPECT_EQ(*st.mark_time("b") - *st.mark_time("a"),
              c.pipe_write + 2 * c.copy_per_kib + c.wakeup + c.gettime);
}

} // namespace
} // namespace schedlab

namespace schedlab {
namespace {

TEST(program_loop_while, repeats_while_the_condition_holds_and_break_if_leaves_early)
{
    testing::test_env t(1);
    workload_state st;
    counter& c = st.make_counter("c");
    counter& after = st.make_counter("after");
    program_builder b;
    b.loop_while([&](syscalls&, task_struct&) { return c.value < 5; },
                 [&](program_builder& l) { l.signal(c); });
    b.loop_while([](syscalls&, task_struct&) { return true; },
                 [&](program_builder& l) {
                     l.signal(c).break_if([&](syscalls&, task_struct&) { return c.value >= 8; });
                 });
    b.signal(after);
    t.spawn(b.build(), st, "looper");
    t.k.run(secs(1));
    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(c.value, 8u);
    EXPECT_EQ(after.value, 1u);
}

TEST(program_user, user_code_runs_in_order_and_its_cpu_time_is_consumed)
{
    cost_params nj;
    nj.jitter_pct = 0;
    testing::test_env t(1, 1, "6.6", nj);
    workload_state st;
    std::vector<sim_time> seen;
    program_builder b;
    b.user([&](syscalls& k, task_struct&) {
        seen.push_back(k.now());
        return usecs(30);
    });
    b.user([&](syscalls& k, task_struct&) {
        seen.push_back(k.now());
        return sim_dur{0};
    });
    b.syscall(&cost_params::exec);
    b.user([&](syscalls& k, task_struct&) {
        seen.push_back(k.now());
        return sim_dur{0};
    });
    t.spawn(b.build(), st, "user");
    t.k.run(secs(1));
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[1] - seen[0], usecs(30));
    EXPECT_EQ(seen[2] - seen[1], nj.exec);
}

TEST(program_sleep_until, sleeps_to_an_absolute_time_and_not_at_all_when_late)
{
    cost_params nj;
    nj.jitter_pct = 0;
    testing::test_env t(1, 1, "6.6", nj);
    workload_state st;
    t.spawn(program_builder()
                .sleep_until([](syscalls&, task_struct&) { return msecs(5); })
                .mark("a")
                .sleep_until([](syscalls&, task_struct&) { return msecs(1); })
                .mark("b")
                .build(),
            st, "sleeper");
    t.k.run(secs(1));
    const sim_time a = *st.mark_time("a");
    const sim_time b = *st.mark_time("b");
    // clock_nanosleep(TIMER_ABSTIME) has the range [5 ms, 5 ms + the 50 us timer slack].
    EXPECT_GE(a, msecs(5) + usecs(50));
    EXPECT_LT(a, msecs(5) + usecs(55));
    EXPECT_EQ(b - a, nj.nanosleep + nj.gettime) << "a deadline in the past does not sleep";
}

TEST(program_close, readers_see_eof_which_leaves_their_loop)
{
    testing::test_env t(2);
    workload_state st;
    pipe_channel& p = st.make_pipe("p");
    counter& reads = st.make_counter("reads");
    counter& after = st.make_counter("after");
    t.spawn(program_builder().write(p, 4).write(p, 4).close(p).build(), st, "writer", 0);
    t.spawn(program_builder()
                .loop(1000, [&](program_builder& l) { l.read(p, 4).signal(reads); })
                .signal(after)
                .build(),
            st, "reader", 1);
    t.k.run(secs(1));
    EXPECT_TRUE(t.k.all_exited());
    EXPECT_EQ(reads.value, 2u);
    EXPECT_EQ(after.value, 1u);
    EXPECT_TRUE(p.write_closed());
}

/// The pids of the tasks placed by try_to_wake_up(), in the order they were woken.
class wake_order : public decision_sink {
public:
    void decision(const sched_decision& d) override
    {
        if (d.what == "select_task_rq" && d.text.rfind("pid ", 0) == 0)
            pids.push_back(std::stoi(d.text.substr(4)));
    }
    std::vector<int> pids;
};

/*
 * dbench.c create_procs() (sahlberg/dbench 00a2a7b67650): the children's semop() waits
 * for zero and the parent's decrement releases them. ipc/sem.c (torvalds/linux
 * 00898e8599a1) queues a single-semaphore wait-for-zero with list_add_tail() on the
 * semaphore's pending_const, wake_const_ops() walks that list from its head into the
 * wake_q, and wake_up_q() wakes in that order: the first to wait is woken first. A wait
 * queue's add_wait_queue() puts each waiter at the head instead, so a wake-all wakes the
 * last to wait first. Three waiters on three CPUs wait 10 us apart; a fourth task
 * releases them. Checked to fail with add_tail() queueing at the head.
 */
TEST(counter, a_fifo_counter_wakes_its_waiters_in_the_order_they_waited)
{
    for (const bool fifo : {true, false}) {
        test_env t(4);
        workload_state st;
        counter& go = st.make_counter("go");
        go.fifo = fifo;
        std::vector<int> waited;
        for (int i = 1; i <= 3; ++i)
            waited.push_back(t.spawn_pinned(program_builder()
                                                .run(usecs(10 * i))
                                                .wait_for(go, 1)
                                                .build(),
                                            st, "waiter", i)
                                 .pid);
        t.spawn_pinned(program_builder().run(msecs(1)).signal(go).build(), st, "parent", 0);
        wake_order order;
        t.k.run(usecs(500));
        ASSERT_EQ(go.waiters.size(), 3u) << "all three wait before the release";
        t.k.decisions().set_sink(&order);
        t.k.run(secs(1));
        t.k.decisions().set_sink(nullptr);
        EXPECT_TRUE(t.k.all_exited());
        const std::vector<int> want =
            fifo ? waited : std::vector<int>{waited[2], waited[1], waited[0]};
        EXPECT_EQ(order.pids, want) << (fifo ? "fifo" : "wait queue");
    }
}

} // namespace
} // namespace schedlab
