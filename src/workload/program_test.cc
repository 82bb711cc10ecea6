// SPDX-License-Identifier: GPL-2.0-only
/*
 * The program builder and interpreter: loops, run/sleep timing, fork and
 * reaping, counters, marks, syscall cost accounting.
 */
#include "workload/program.h"

#include "workload/test_util.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using testing::test_env;

cost_params no_jitter()
{
    cost_params c;
    c.jitter_pct = 0;
    return c;
}

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

    const cost_params& c = t.k.costs();
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

    EXPECT_GE(*st.mark_time("b") - *st.mark_time("a"), msecs(2));
    EXPECT_LT(*st.mark_time("b") - *st.mark_time("a"), msecs(2) + usecs(20));
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
    const cost_params& c = t.k.costs();
    EXPECT_EQ(*st.mark_time("b") - *st.mark_time("a"), c.fork_thread + c.gettime);
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

    const cost_params& c = t.k.costs();
    EXPECT_EQ(*st.mark_time("b") - *st.mark_time("a"),
              c.pipe_write + 2 * c.copy_per_kib + c.wakeup + c.gettime);
}

} // namespace
} // namespace schedlab
