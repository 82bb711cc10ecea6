// SPDX-License-Identifier: GPL-2.0-only
/*
 * The coroutine form of task behaviour: its runner (sub-routines, exit,
 * kill) and the system calls' cost contract. The op-list tests
 * (program_test.cc) run the same calls through run_program().
 */
#include "workload/task.h"

#include "support/workload_env.h"
#include "workload/program.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace schedlab {
namespace {

using testing::no_jitter;
using testing::test_env;

task_struct& spawn_code(test_env& e, std::unique_ptr<task_behaviour> b, const std::string& comm,
                        int cpu = 0)
{
    task_opts o;
    o.comm = comm;
    o.cpu = cpu;
    return e.k.spawn(std::move(b), o);
}

/// A sub-routine: runs `ns`, records when it ended.
task_code burn(task_context& t, sim_dur ns, std::vector<sim_time>& at)
{
    co_await t.run(ns);
    at.push_back(t.now());
}

task_code nested(task_context& t, std::vector<sim_time>& at)
{
    co_await burn(t, usecs(10), at);
    co_await burn(t, usecs(20), at);
    co_await t.run(usecs(5));
    at.push_back(t.now());
}

TEST(task_code, sub_routines_run_in_order_on_the_callers_cpu_time)
{
    test_env e(1, 1, "6.6", no_jitter());
    std::vector<sim_time> at;
    task_struct& p =
        spawn_code(e, make_task([&](task_context& t) { return nested(t, at); }), "nested");
    e.k.run(secs(1));

    ASSERT_EQ(at.size(), 3u);
    EXPECT_EQ(at[1] - at[0], usecs(20));
    EXPECT_EQ(at[2] - at[1], usecs(5));
    EXPECT_TRUE(e.k.all_exited());
    EXPECT_EQ(p.nvcsw, 1u) << "only do_exit()'s final schedule()";
}

task_code reader(task_context& t, channel& ch, int& reads, bool& saw_eof)
{
    for (;;) {
        const bool got = co_await t.read(ch, 10);
        if (!got)
            break;
        ++reads;
    }
    saw_eof = true;
}

task_code writer(task_context& t, channel& ch, int n)
{
    for (int i = 0; i < n; ++i)
        co_await t.write(ch, 10);
    co_await t.close(ch);
}

TEST(task_code, read_returns_false_at_end_of_file_after_the_writer_closes)
{
    test_env e(2);
    workload_state st;
    pipe_channel& ch = st.make_pipe("p");
    int reads = 0;
    bool eof = false;
    spawn_code(e, make_task([&](task_context& t) { return reader(t, ch, reads, eof); }), "r", 0);
    spawn_code(e, make_task([&](task_context& t) { return writer(t, ch, 7); }), "w", 1);
    e.k.run(secs(1));

    EXPECT_TRUE(e.k.all_exited());
    EXPECT_EQ(reads, 7);
    EXPECT_TRUE(eof);
    EXPECT_EQ(ch.stats().bytes_read, 70u);
}

task_code run_for(task_context& t, sim_dur ns)
{
    co_await t.run(ns);
}

task_code forker(task_context& t, counter& reaped, std::vector<int>& children, int n)
{
    const fork_opts opts{.comm = "child", .thread = true, .notify = &reaped};
    for (int i = 0; i < n; ++i) {
        // The factory is a plain lambda that calls a coroutine: a capturing lambda
        // that is itself a coroutine would outlive its captures.
        task_struct* c = co_await t.fork(
            [i](task_context& ct) { return run_for(ct, usecs(10 * (i + 1))); }, opts);
        children.push_back(c->pid);
    }
    co_await t.wait_for(reaped, static_cast<u64>(n), &cost_params::wait_child);
}

TEST(task_code, fork_yields_the_child_and_its_exit_signals_the_notify_counter)
{
    test_env e(2, 1, "6.6", no_jitter());
    workload_state st;
    counter& reaped = st.make_counter("reaped", 0);
    std::vector<int> children;
    task_struct& parent = spawn_code(
        e, make_task([&](task_context& t) { return forker(t, reaped, children, 3); }), "parent");
    e.k.run(secs(1));

    EXPECT_TRUE(e.k.all_exited());
    EXPECT_EQ(reaped.value, 3u);
    ASSERT_EQ(children.size(), 3u);
    for (int pid : children) {
        const task_struct* c = e.k.find_task_by_pid(pid);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->comm, "child");
        EXPECT_EQ(c->tgid, parent.tgid) << "a thread shares the parent's tgid";
        EXPECT_EQ(c->parent_pid, parent.pid);
    }
}

task_code sleeper_forever(task_context& t, wait_queue& wq, int& woken)
{
    for (;;) {
        co_await t.sleep_on(wq);
        ++woken;
    }
}

TEST(task_code, a_killed_task_charges_its_exit_runs_at_exit_then_notifies)
{
    test_env e(1, 1, "6.6", no_jitter());
    workload_state st;
    counter& joined = st.make_counter("joined", 0);
    wait_queue wq;
    int woken = 0;
    std::vector<std::string> order;
    task_context* ctx = nullptr;
    task_struct& p = spawn_code(
        e,
        make_task(
            [&](task_context& t) {
                ctx = &t;
                t.at_exit([&] { order.push_back(fmt::format("at_exit joined={}", joined.value)); });
                return sleeper_forever(t, wq, woken);
            },
            &joined),
        "victim");
    e.k.run(msecs(1));
    ASSERT_EQ(wq.size(), 1u);
    ASSERT_FALSE(e.k.all_exited());

    // The workload's shutdown: dequeue, kill, wake (as rt-app's stop_all does).
    wq.remove(p);
    ctx->kill();
    e.k.set_this_cpu(0);
    e.k.wake_up_process(p);
    const sim_time killed_at = e.k.now();
    e.k.run(secs(1));

    EXPECT_TRUE(e.k.all_exited());
    EXPECT_EQ(woken, 0) << "the killed code never resumes";
    ASSERT_EQ(order.size(), 1u);
    EXPECT_EQ(order[0], "at_exit joined=0") << "at_exit runs before the notification";
    EXPECT_EQ(joined.value, 1u);
    EXPECT_GE(p.exit_time - killed_at, e.k.charges().params().exit) << "the exit cost is still paid";
}

task_code costs_in_order(task_context& t, std::vector<sim_time>& at)
{
    at.push_back(co_await t.gettime());
    co_await t.syscall(t.costs().exec);
    at.push_back(co_await t.gettime());
    co_await t.sleep(usecs(100));
    at.push_back(co_await t.gettime());
}

TEST(task_code, each_call_pays_its_entry_cost_before_its_effect)
{
    test_env e(1, 1, "6.6", no_jitter());
    std::vector<sim_time> at;
    spawn_code(e, make_task([&](task_context& t) { return costs_in_order(t, at); }), "costs");
    e.k.run(secs(1));

    const cost_params& c = e.k.charges().params();
    ASSERT_EQ(at.size(), 3u);
    EXPECT_EQ(at[1] - at[0], c.exec + c.gettime);
    EXPECT_GE(at[2] - at[1], c.nanosleep + usecs(100) + c.gettime);
}

TEST(task_code, a_behaviour_of_another_kind_cannot_be_forked_with_an_exit_notification)
{
    test_env e(1);
    workload_state st;
    counter& c = st.make_counter("c");
    task_context* ctx = nullptr;
    spawn_code(e, make_task([&](task_context& t) {
                   ctx = &t;
                   return run_for(t, usecs(1));
               }),
               "x");
    ASSERT_NE(ctx, nullptr);
    EXPECT_DEATH(
        {
            fork_opts o;
            o.notify = &c;
            auto a = ctx->fork(make_program_task(program_builder().build(), st), o);
            (void)a;
        },
        "exit notification");
}

} // namespace
} // namespace schedlab
