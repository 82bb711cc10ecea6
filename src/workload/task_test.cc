// SPDX-License-Identifier: GPL-2.0-only
/*
 * The coroutine form of task behaviour: its runner (sub-routines, exit,
 * kill) and the system calls' cost contract. The op-list tests
 * (program_test.cc) run the same calls through run_program().
 */
#include "workload/task.h"

#include "support/workload_env.h"
#include "trace/tracepoints.h"
#include "workload/program.h"

#include <gtest/gtest.h>

#include <algorithm>
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

/*
 * A read's copy comes after its check for data (calls::read; pipe_read(),
 * unix_stream_read_generic(), tcp_recvmsg_locked(), udp_recvmsg() at v6.5): a read that
 * finds the channel empty pays its fixed cost, sleeps, and pays the copy once woken.
 */
task_struct& spawn_code_pinned(test_env& e, std::unique_ptr<task_behaviour> b,
                               const std::string& comm, int cpu)
{
    task_opts o;
    o.comm = comm;
    o.cpu = cpu;
    o.allowed = cpumask(e.m.nr_cpus());
    o.allowed.set(cpu);
    return e.k.spawn(std::move(b), o);
}

task_code read_once(task_context& t, channel& ch, u64 n)
{
    const bool got = co_await t.read(ch, n);
    (void)got;
}

/// Sleeps, writes `n` bytes, and notes the reader's CPU time when the write has woken it.
task_code sleep_then_write(task_context& t, channel& ch, u64 n, task_struct* const& reader,
                           u64& reader_ran_at_wake)
{
    co_await t.sleep(msecs(1));
    co_await t.write(ch, n);
    reader_ran_at_wake = reader->se.sum_exec_runtime;
}

TEST(read_copy, a_blocked_pipe_read_pays_its_copy_after_the_wakeup)
{
    test_env e(2, 1, "6.6", no_jitter());
    const cost_params& c = e.k.charges().params();
    workload_state st;
    pipe_channel& ch = st.make_pipe("p");
    const u64 n = 4 * pipe_channel::PAGE_SIZE; // a copy of 960 ns at 60 ns/KiB
    task_struct* reader = nullptr;
    u64 at_wake = 0;
    reader = &spawn_code_pinned(e, make_task([&](task_context& t) { return read_once(t, ch, n); }),
                                "reader", 1);
    spawn_code_pinned(
        e, make_task([&](task_context& t) { return sleep_then_write(t, ch, n, reader, at_wake); }),
        "writer", 0);
    e.k.run(secs(1));

    ASSERT_TRUE(e.k.all_exited());
    EXPECT_EQ(ch.stats().reader_sleeps, 1u);
    EXPECT_EQ(ch.stats().bytes_read, n);
    ASSERT_GT(copy_cost(c, n), 0);
    // Each switch-in costs the incoming task context_switch (costs.def). Before the wait:
    // the first switch-in, the entry and the fixed part of the hold (pipe_read), no copy.
    EXPECT_EQ(static_cast<sim_dur>(at_wake), c.context_switch + c.pipe_read);
    // After it: the switch-in, mutex_lock() again, the copy under the mutex, the exit.
    EXPECT_EQ(static_cast<sim_dur>(reader->se.sum_exec_runtime - at_wake),
              c.context_switch + copy_cost(c, n) + c.exit);
}

/// Writes `n` bytes at once; the reader, on another CPU, reads them later.
task_code write_now(task_context& t, channel& ch, u64 n)
{
    co_await t.write(ch, n);
}

struct read_seen {
    sim_time start = -1;
    sim_time end = -1;
    sim_dur expected = -1; ///< one draw of the task's jitter for read_syscall_cost(n)
};

/// Sleeps (the data is queued meanwhile), then reads `n` bytes that are there.
task_code sleep_then_read(task_context& t, channel& ch, u64 n, read_seen& seen)
{
    co_await t.sleep(msecs(1));
    rng_stream rng = t.task().rng; // the draw the read is about to make
    seen.expected =
        rng.jitter(ch.read_syscall_cost(t.costs(), n), static_cast<u32>(t.costs().jitter_pct));
    seen.start = t.now();
    const bool got = co_await t.read(ch, n);
    (void)got;
    seen.end = t.now();
}

TEST(read_copy, a_read_that_finds_its_data_costs_one_draw_of_entry_and_copy_as_before)
{
    // With the default jitter: the pass's cost is one draw, split, so it costs what the
    // one-burst read did, and the read acts (returns) at that burst's end.
    for (const bool pipe : {true, false}) {
        test_env e(2, 7);
        workload_state st;
        channel& ch = pipe ? static_cast<channel&>(st.make_pipe("p"))
                           : static_cast<channel&>(st.make_socketpair("s"));
        const u64 n = 2 * pipe_channel::PAGE_SIZE;
        read_seen seen;
        spawn_code_pinned(e, make_task([&](task_context& t) { return write_now(t, ch, n); }),
                          "writer", 0);
        spawn_code_pinned(
            e, make_task([&](task_context& t) { return sleep_then_read(t, ch, n, seen); }),
            "reader", 1);
        e.k.run(secs(1));

        ASSERT_TRUE(e.k.all_exited()) << pipe;
        EXPECT_EQ(ch.stats().reader_sleeps, 0u) << pipe;
        EXPECT_EQ(ch.stats().bytes_read, n) << pipe;
        ASSERT_GT(seen.expected, 0) << pipe;
        // Nothing else runs on the reader's CPU: from the call to its return is its cost.
        EXPECT_EQ(seen.end - seen.start, seen.expected) << pipe;
    }
}

/// Sleeps (the writer writes `have` bytes and closes), then reads `want` > `have`.
task_code sleep_then_read_all(task_context& t, channel& ch, u64 want, bool& eof)
{
    co_await t.sleep(msecs(1));
    const bool got = co_await t.read(ch, want);
    eof = !got;
}

task_code write_then_close(task_context& t, channel& ch, u64 n)
{
    co_await t.write(ch, n);
    co_await t.sleep(msecs(2));
    co_await t.close(ch);
}

TEST(read_copy, a_short_read_pays_the_copy_of_the_bytes_it_took_not_of_those_it_asked_for)
{
    test_env e(2, 1, "6.6", no_jitter());
    const cost_params& c = e.k.charges().params();
    workload_state st;
    pipe_channel& ch = st.make_pipe("p");
    bool eof = false;
    spawn_code_pinned(e, make_task([&](task_context& t) { return write_then_close(t, ch, 100); }),
                      "writer", 0);
    task_struct& r = spawn_code_pinned(
        e, make_task([&](task_context& t) { return sleep_then_read_all(t, ch, 4096, eof); }),
        "reader", 1);
    e.k.run(secs(1));

    ASSERT_TRUE(e.k.all_exited());
    EXPECT_TRUE(eof) << "100 bytes, then a second read() that sleeps and sees the close";
    EXPECT_EQ(ch.stats().bytes_read, 100u);
    ASSERT_LT(copy_cost(c, 100), copy_cost(c, 4096));
    // Three switch-ins (the start, after the nanosleep, after the second pass's wait);
    // nanosleep; the first pass (pipe_read + the copy of the 100 bytes found); the second
    // pass's pipe_read before it sleeps; at EOF nothing to copy; the exit.
    EXPECT_EQ(static_cast<sim_dur>(r.se.sum_exec_runtime),
              3 * c.context_switch + c.nanosleep + 2 * c.pipe_read + copy_cost(c, 100) + c.exit);
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
    EXPECT_GE(p.exit_time - killed_at, e.k.charges().params().exit)
        << "the exit cost is still paid";
}

task_code run_then_note_exiting(task_context& t, int& exiting_in_code)
{
    co_await t.run(usecs(100));
    exiting_in_code = (t.task().flags & PF_EXITING) ? 1 : 0;
}

/*
 * do_exit() begins with exit_signals(), which sets PF_EXITING (kernel/exit.c, kernel/signal.c,
 * v6.5): the flag is off while the task's code runs, on during its exit cost and at its exit
 * notification (which select_task_rq_fair() then does not treat as sync).
 */
TEST(task_code, an_exiting_task_is_pf_exiting_from_the_start_of_its_exit_cost)
{
    test_env e(1, 1, "6.6", no_jitter());
    int exiting_in_code = -1; // -1 until the code's end
    bool exiting_at_exit = false;
    task_struct& p =
        spawn_code(e, make_task([&](task_context& t) {
                       t.at_exit([&] { exiting_at_exit = (t.task().flags & PF_EXITING) != 0; });
                       return run_then_note_exiting(t, exiting_in_code);
                   }),
                   "exiting");
    EXPECT_EQ(p.flags & PF_EXITING, 0u);
    // Stop halfway through the exit cost: the code has run, the exit is not over.
    e.k.run(e.k.now() + usecs(100) + e.k.charges().params().exit / 2);
    ASSERT_EQ(exiting_in_code, 0) << "the code has ended, its flags clear";
    ASSERT_LT(p.exit_time, 0);
    EXPECT_NE(p.flags & PF_EXITING, 0u) << "set before the exit cost";
    e.k.run(secs(1));
    EXPECT_TRUE(e.k.all_exited());
    EXPECT_TRUE(exiting_at_exit);
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

/*
 * kernel: core.c sched_exec(), 6.5 (docs/kernel-map.md): execve() re-places the task with
 * select_task_rq(WF_EXEC), the fork slow path (find_idlest_cpu() from the highest
 * SD_BALANCE_EXEC domain), and the stopper moves it if another CPU wins. The task starts
 * pinned to cpu0 (so fork placement and the balancer leave it there), then widens its mask
 * to every CPU (model: sched_setaffinity() to a mask holding its CPU, which leaves a running
 * task where it is) and exec()s. With a spinner on cpu0 and cpus 1-3 idle, the exec moves it
 * and its cost runs on the new CPU; alone on cpu0 with a spinner on every other CPU, it stays.
 */
struct exec_seen {
    int before = -1;
    int after = -1;
    sim_time exec_start = -1;
    sim_time exec_end = -1;
};

task_code widen_then_exec(task_context& t, exec_seen& seen)
{
    co_await t.run(usecs(50));
    task_struct& p = t.task();
    p.cpus_mask = cpumask(t.sys().nr_cpu_ids());
    for (int cpu = 0; cpu < t.sys().nr_cpu_ids(); ++cpu)
        p.cpus_mask.set(cpu);
    p.nr_cpus_allowed = t.sys().nr_cpu_ids();
    seen.before = p.cpu;
    seen.exec_start = t.now();
    co_await t.exec();
    seen.exec_end = t.now();
    seen.after = p.cpu;
    co_await t.sleep(secs(10));
}

task_code spin_forever(task_context& t)
{
    for (;;)
        co_await t.run(msecs(1));
}

TEST(task_code, exec_moves_the_task_off_a_busy_cpu_to_an_idle_one)
{
    test_env e(4, 1, "6.5", no_jitter());
    exec_seen seen;
    e.spawn_pinned(make_task([](task_context& t) { return spin_forever(t); }), "spin", 0);
    e.spawn_pinned(make_task([&](task_context& t) { return widen_then_exec(t, seen); }), "exec", 0);
    e.k.run(msecs(50));

    ASSERT_EQ(seen.before, 0);
    ASSERT_GE(seen.exec_end, 0) << "the exec completed";
    EXPECT_NE(seen.after, 0) << "sched_exec() found an idle CPU and the stopper moved the task";
    EXPECT_GE(seen.exec_end - seen.exec_start, e.k.charges().params().exec);
    EXPECT_LT(seen.exec_end - seen.exec_start, e.k.charges().params().exec + usecs(10))
        << "moved at the exec's start: its cost runs at once on the idle CPU, not shared "
           "with the spinner";
}

TEST(task_code, exec_stays_on_its_own_cpu_when_every_other_cpu_is_busy)
{
    test_env e(4, 1, "6.5", no_jitter());
    exec_seen seen;
    for (int cpu = 1; cpu < e.m.nr_cpus(); ++cpu)
        e.spawn_pinned(make_task([](task_context& t) { return spin_forever(t); }),
                       fmt::format("spin{}", cpu), cpu);
    e.spawn_pinned(make_task([&](task_context& t) { return widen_then_exec(t, seen); }), "exec", 0);
    e.k.run(msecs(50));

    ASSERT_EQ(seen.before, 0);
    ASSERT_GE(seen.exec_end, 0);
    EXPECT_EQ(seen.after, 0) << "its own CPU, running only it, is the idlest";
}

/*
 * kernel: fair.c update_sg_wakeup_stats() -> idle_cpu_without(), 6.5: the exec'ing task's own
 * CPU counts as idle without it, so, alone on cpu0 with a spinner on cpu3 and cpus 1-2 idle,
 * the local group ties the idlest and is kept at each level (find_idlest_group()'s
 * "local_sgs.idle_cpus >= idlest_sgs.idle_cpus"): it stays. With idle_cpu() there (cpu0 runs
 * p, so not idle) it moved to cpu1.
 */
TEST(task_code, exec_stays_on_its_own_cpu_when_it_is_alone_there)
{
    test_env e(4, 1, "6.5", no_jitter());
    exec_seen seen;
    e.spawn_pinned(make_task([](task_context& t) { return spin_forever(t); }), "spin", 3);
    e.spawn_pinned(make_task([&](task_context& t) { return widen_then_exec(t, seen); }), "exec", 0);
    e.k.run(msecs(50));

    ASSERT_EQ(seen.before, 0);
    ASSERT_GE(seen.exec_end, 0);
    EXPECT_EQ(seen.after, 0) << "its own CPU, idle without it, is as idle as any";
}

/// Arms a nanosleep of `ns` and records when the timer was armed (after the syscall's
/// entry cost) and when the task ran again; then sleeps past the test's end.
struct timed_sleep {
    sim_time armed = -1;
    sim_time woke = -1;
};

task_code sleep_once(task_context& t, sim_dur ns, timed_sleep& out)
{
    const sim_time before = t.now();
    co_await t.sleep(ns);
    out.armed = before + t.costs().nanosleep;
    out.woke = t.now();
    co_await t.sleep(secs(10)); // off the CPU at the price of a syscall, not of an exit
}

task_struct& spawn_sleeper(test_env& e, sim_dur ns, timed_sleep& out, const std::string& comm,
                           int policy = SCHED_NORMAL)
{
    task_opts o;
    o.comm = comm;
    o.cpu = 0;
    o.allowed = cpumask(e.m.nr_cpus());
    o.allowed.set(0);
    o.policy = policy;
    o.rt_priority = policy == SCHED_FIFO ? 50 : 0;
    return e.k.spawn(make_task([&out, ns](task_context& t) { return sleep_once(t, ns, out); }), o);
}

// hrtimer_nanosleep(): [t, t + timer_slack_ns]; alone on its CPU the timer fires at the end.
TEST(nanosleep, a_lone_sleepers_timer_fires_at_the_end_of_its_50_us_slack)
{
    test_env e(1, 1, "6.5", no_jitter());
    timed_sleep a;
    spawn_sleeper(e, usecs(100), a, "a");
    e.k.run(msecs(1));
    ASSERT_GE(a.woke, 0);
    EXPECT_GE(a.woke - a.armed, usecs(150));
    EXPECT_LT(a.woke - a.armed, usecs(160)) << "the wake path's costs only";
}

// __hrtimer_run_queues(): B's hard expiry (60 + 50 us) comes after A's soft one (100 us), so
// B's interrupt also ends A's sleep, before A's own hard expiry (150 us).
TEST(nanosleep, a_sleep_whose_soft_expiry_passed_ends_at_another_timers_interrupt)
{
    test_env e(1, 1, "6.5", no_jitter());
    timed_sleep a, b;
    spawn_sleeper(e, usecs(100), a, "a");
    spawn_sleeper(e, usecs(60), b, "b");
    e.k.run(msecs(1));
    ASSERT_GE(a.woke, 0);
    ASSERT_GE(b.woke, 0);
    ASSERT_LT(std::abs(b.armed - a.armed), usecs(10)) << "both armed within 10 us";
    EXPECT_GE(b.woke - b.armed, usecs(110)) << "b's own hard expiry";
    EXPECT_GE(a.woke, b.armed + usecs(110)) << "a ran in b's interrupt";
    EXPECT_LT(a.woke - a.armed, usecs(150)) << "before its own hard expiry";
}

// The walk in hard-expiry order stops at the first timer whose soft expiry is ahead: X (an
// rt task: no slack, 170 us) stops A's interrupt at 150 us before Y (140 us soft, 190 us
// hard), which then runs at X's interrupt.
TEST(nanosleep, the_expiry_walk_stops_at_the_first_timer_not_yet_soft_expired)
{
    test_env e(1, 1, "6.5", no_jitter());
    timed_sleep a, x, y;
    spawn_sleeper(e, usecs(100), a, "a");
    spawn_sleeper(e, usecs(140), y, "y");
    spawn_sleeper(e, usecs(170), x, "x", SCHED_FIFO);
    e.k.run(msecs(1));
    ASSERT_GE(y.woke, 0);
    ASSERT_LT(std::max({a.armed, x.armed, y.armed}) - std::min({a.armed, x.armed, y.armed}),
              usecs(10))
        << "the three timers are armed within 10 us";
    EXPECT_GE(a.woke - a.armed, usecs(150));
    EXPECT_GE(x.woke - x.armed, usecs(170));
    EXPECT_LT(x.woke - x.armed, usecs(180)) << "an rt task's nanosleep has no slack";
    EXPECT_GE(y.woke, x.armed + usecs(170)) << "y waited for x's interrupt";
    EXPECT_LT(y.woke - y.armed, usecs(190)) << "before y's own hard expiry";
}

task_code hog(task_context& t)
{
    for (;;)
        co_await t.run(msecs(100));
}

task_code sleep_across_tick(task_context& t, sim_dur tick, sim_time& tick_at, timed_sleep& out)
{
    // soft expiry 20 us before the second jiffy boundary from now, hard expiry 30 us after it
    tick_at = (t.now() / tick + 2) * tick;
    co_await t.sleep(tick_at - usecs(20) - t.now() - t.costs().nanosleep);
    out.woke = t.now();
    co_await t.sleep(secs(10));
}

// The tick is an hrtimer too: its interrupt ends a sleep whose soft expiry has passed.
TEST(nanosleep, the_tick_ends_a_sleep_within_its_slack)
{
    test_env e(1, 1, "6.5", no_jitter());
    spawn_code(e, make_task([](task_context& t) { return hog(t); }), "hog");
    const sim_dur tick = static_cast<sim_dur>(e.k.config().params.tick_nsec());
    sim_time tick_at = -1;
    timed_sleep s;
    spawn_code(e,
               make_task([&](task_context& t) { return sleep_across_tick(t, tick, tick_at, s); }),
               "sleeper");
    e.k.run(3 * tick);
    ASSERT_GE(s.woke, 0);
    EXPECT_GE(s.woke, tick_at) << "not before the tick";
    EXPECT_LT(s.woke, tick_at + usecs(30)) << "woken by the tick, before its hard expiry";
}

/*
 * The preemption models (kernel term +preempt=, core.cc preempt_defers()).
 * kernel (v6.6 / v6.18): resched_curr() sets TIF_NEED_RESCHED; the switch comes at a
 * preemption point of the current task: its return to user mode (exit_to_user_mode_loop(),
 * also an interrupt's return to user mode) and its blocking in every model; with full
 * preemption also preempt_enable() (a waker's, at the end of its wake-up path) and an
 * interrupt's return to kernel code (irqentry_exit_cond_resched()); with voluntary also
 * might_resched() (mutex_lock()'s might_sleep()). `+preempt=instant` (the default before voluntary)
 * is not a kernel's: the switch at the resched_curr() itself.
 */
struct preempt_scene {
    sim_time woken_run = -1; ///< when the SCHED_FIFO wakee ran after its wakeup
    sim_time waker_t0 = -1;  ///< the waker's time just before its waking call
};

/// The wakee: sleeps until `c` is signalled, records when it runs again.
task_code fifo_wakee(task_context& t, counter& c, preempt_scene& s)
{
    co_await t.wait_for(c, 1);
    s.woken_run = t.now();
}

/// A waker inside a write(): a pipe write wakes the SCHED_FIFO reader on the waker's CPU.
task_code pipe_reader(task_context& t, channel& ch, preempt_scene& s)
{
    const bool got = co_await t.read(ch, 4);
    if (got)
        s.woken_run = t.now();
}

task_code pipe_writer(task_context& t, channel& ch, preempt_scene& s)
{
    co_await t.run(usecs(50));
    s.waker_t0 = t.now();
    co_await t.write(ch, 4);
    co_await t.run(usecs(50));
}

preempt_scene local_write_wakeup(const std::string& kernel, u64& writer_nivcsw)
{
    test_env e(1, 1, kernel, no_jitter());
    pipe_channel ch("pipe");
    preempt_scene s;
    e.spawn_pinned(make_task([&](task_context& t) { return pipe_reader(t, ch, s); }), "reader", 0,
                   SCHED_FIFO);
    task_struct& w = e.spawn_pinned(
        make_task([&](task_context& t) { return pipe_writer(t, ch, s); }), "writer", 0);
    e.k.run(secs(1));
    EXPECT_TRUE(e.k.all_exited());
    writer_nivcsw = w.nivcsw;
    return s;
}

TEST(preempt_model, a_wakee_preempting_a_writer_on_its_cpu_waits_for_the_writers_wakeup_path)
{
    // pipe_write() wakes the reader after __pipe_unlock(), the last thing before its return:
    // under none and voluntary the writer switches at its return to user mode, under full at
    // the preempt_enable() ending the wake-up (its wakeup cost, the model's tail, either way);
    // the default switches at the wakeup itself, before the waker's wakeup cost.
    const cost_params c = no_jitter();
    u64 nivcsw = 0;
    const preempt_scene instant = local_write_wakeup("6.6+preempt=instant", nivcsw);
    EXPECT_EQ(nivcsw, 1u);
    for (const char* k : {"6.6+preempt=none", "6.6+preempt=voluntary", "6.6+preempt=full"}) {
        const preempt_scene m = local_write_wakeup(k, nivcsw);
        EXPECT_EQ(nivcsw, 1u) << k << ": the writer is preempted once";
        EXPECT_EQ(m.waker_t0, instant.waker_t0) << k;
        EXPECT_EQ(m.woken_run - instant.woken_run, c.wakeup)
            << k << ": the reader runs one wakeup cost later, after the writer's wake-up path";
    }
}

/*
 * A remote wakeup: a SCHED_FIFO task pinned to cpu0 is woken from cpu1 at 100 us (the
 * wake list's IPI, free in the test's costs); cpu0's task is either in user-mode work or
 * in a 1 ms system call from time 0. In user mode the IPI's return switches at once in
 * every model; in kernel code only full preemption switches then (irqentry_exit_cond_resched());
 * none and voluntary wait for the call's return to user mode.
 */
task_code remote_waker(task_context& t, counter& c)
{
    co_await t.run(usecs(100));
    co_await t.signal(c);
}

task_code victim(task_context& t, bool in_syscall)
{
    if (in_syscall)
        co_await t.syscall(msecs(1));
    else
        co_await t.run(msecs(1));
    co_await t.run(usecs(10));
}

sim_time remote_wakeup_runs_at(const std::string& kernel, bool in_syscall)
{
    test_env e(2, 1, kernel, no_jitter());
    counter c;
    preempt_scene s;
    e.spawn_pinned(make_task([&](task_context& t) { return fifo_wakee(t, c, s); }), "fifo", 0,
                   SCHED_FIFO);
    e.spawn_pinned(make_task([&](task_context& t) { return victim(t, in_syscall); }), "victim", 0);
    e.spawn_pinned(make_task([&](task_context& t) { return remote_waker(t, c); }), "waker", 1);
    e.k.run(secs(1));
    EXPECT_TRUE(e.k.all_exited());
    return s.woken_run;
}

TEST(preempt_model, a_remote_reschedule_in_user_work_switches_at_once_in_every_model)
{
    const sim_time instant = remote_wakeup_runs_at("6.6+preempt=instant", false);
    EXPECT_LT(instant, usecs(110));
    for (const char* k : {"6.6+preempt=none", "6.6+preempt=voluntary", "6.6+preempt=full"})
        EXPECT_EQ(remote_wakeup_runs_at(k, false), instant) << k;
}

TEST(preempt_model, a_remote_reschedule_in_a_syscall_waits_for_its_return_to_user_unless_full)
{
    const sim_time instant = remote_wakeup_runs_at("6.6+preempt=instant", true);
    EXPECT_LT(instant, usecs(110)) << "the default switches when the IPI lands";
    EXPECT_EQ(remote_wakeup_runs_at("6.6+preempt=full", true), instant)
        << "full: the IPI's return to kernel code preempts";
    for (const char* k : {"6.6+preempt=none", "6.6+preempt=voluntary"}) {
        const sim_time t = remote_wakeup_runs_at(k, true);
        EXPECT_GE(t, msecs(1)) << k << ": after the 1 ms call's return to user mode";
        EXPECT_LT(t, msecs(1) + usecs(10)) << k << ": at that return, not after the next burst";
    }
    EXPECT_EQ(remote_wakeup_runs_at("6.6", true),
              remote_wakeup_runs_at("6.6+preempt=voluntary", true))
        << "a profile without the term runs voluntary (x86_64_defconfig)";
}

/*
 * Blocking inside the call switches at once in every model: cpu0's task is in a futex_wait()
 * whose entry costs 500 us when the remote wakeup lands at 100 us; the futex's value is
 * its expected one, so the call sleeps at the entry's end. Under none the wakee runs then
 * (a voluntary switch of the sleeper: nvcsw, not nivcsw), not at any later return to user.
 */
task_code futex_sleeper(task_context& t, futex& fx)
{
    co_await t.futex_wait(fx, 0);
}

TEST(preempt_model, a_call_that_blocks_switches_when_it_blocks_under_none)
{
    cost_params c = no_jitter();
    c.futex_wait = usecs(500);
    for (const char* k : {"6.6+preempt=instant", "6.6+preempt=none", "6.6+preempt=full"}) {
        test_env e(2, 1, k, c);
        counter done;
        futex fx;
        preempt_scene s;
        e.spawn_pinned(make_task([&](task_context& t) { return fifo_wakee(t, done, s); }), "fifo",
                       0, SCHED_FIFO);
        task_struct& v = e.spawn_pinned(
            make_task([&](task_context& t) { return futex_sleeper(t, fx); }), "sleeper", 0);
        e.spawn_pinned(make_task([&](task_context& t) { return remote_waker(t, done); }), "waker",
                       1);
        e.k.run(msecs(50));
        const bool none = std::string(k).find("none") != std::string::npos;
        if (none) {
            EXPECT_GE(s.woken_run, usecs(500)) << k << ": at the futex_wait()'s sleep";
            EXPECT_LT(s.woken_run, usecs(510)) << k;
            EXPECT_EQ(v.nivcsw, 0u) << k << ": the sleeper was never preempted";
        } else {
            EXPECT_LT(s.woken_run, usecs(110)) << k << ": when the IPI lands";
            EXPECT_EQ(v.nivcsw, 1u) << k;
        }
        e.k.check_all();
    }
}

/*
 * Two system calls have their return to user mode between them: a waker signals a counter
 * (waking a SCHED_FIFO task on its own CPU: need_resched, deferred under none and voluntary)
 * and then waits on another with no entry cost (a replayed trace's wait, whose entry is in its
 * traced burst). With the return point between them (calls::return_point, as the replay puts
 * it) exit_to_user_mode_loop() switches there: a preemption (nivcsw), the wakee answers, and
 * the wait finds the answer. Without it the waker blocks first (nvcsw), as the two parts of
 * one call do (futex_wait()'s entry and its sleep).
 */
task_code fifo_answerer(task_context& t, counter& c, counter& answer)
{
    co_await t.wait_for(c, 1);
    co_await t.signal(answer);
}

task_code wake_then_wait(task_context& t, counter& c, counter& answer, bool return_point)
{
    co_await t.run(usecs(50));
    co_await t.signal(c);
    if (return_point)
        co_await t.return_to_user();
    co_await t.wait_for(answer, 1);
    co_await t.run(usecs(10));
}

TEST(preempt_model, a_wake_then_a_separate_wait_switches_at_the_wakes_return_to_user)
{
    for (const char* k : {"6.6+preempt=none", "6.6+preempt=voluntary", "6.18+preempt=none"}) {
        for (const bool point : {true, false}) {
            test_env e(1, 1, k, no_jitter());
            counter c, answer;
            e.spawn_pinned(make_task([&](task_context& t) { return fifo_answerer(t, c, answer); }),
                           "fifo", 0, SCHED_FIFO);
            task_struct& w = e.spawn_pinned(
                make_task([&](task_context& t) { return wake_then_wait(t, c, answer, point); }),
                "waker", 0);
            e.k.run(secs(1));
            EXPECT_TRUE(e.k.all_exited()) << k;
            // nvcsw counts the exit's switch too
            EXPECT_EQ(w.nivcsw, point ? 1u : 0u) << k << (point ? ": preempted at the return" : "");
            EXPECT_EQ(w.nvcsw, point ? 1u : 2u)
                << k << (point ? ": the wait found the answer" : "");
        }
    }
}

/*
 * The same with user-mode work of no length between the wake and the wait (a replayed net
 * burst of 0: the trace's time between the two calls was all the kernel's, the wake's cost):
 * the wake's return to user mode lies before that work whatever its length, so the waker is
 * preempted there (nivcsw 1) and its wait finds the answer. Before, run(0) took the wake's
 * tail as its burst and dropped the return after it, and the return point before the wait
 * found the last call was user work: the waker blocked first (nivcsw 0, nvcsw 2).
 */
task_code wake_nothing_then_wait(task_context& t, counter& c, counter& answer)
{
    co_await t.run(usecs(50));
    co_await t.signal(c);
    co_await t.run(0);
    co_await t.return_to_user();
    co_await t.wait_for(answer, 1);
    co_await t.run(usecs(10));
}

TEST(preempt_model, user_work_of_no_length_after_a_wake_keeps_the_wakes_return_to_user)
{
    for (const char* k : {"6.6+preempt=none", "6.6+preempt=voluntary", "6.18+preempt=none"}) {
        test_env e(1, 1, k, no_jitter());
        counter c, answer;
        e.spawn_pinned(make_task([&](task_context& t) { return fifo_answerer(t, c, answer); }),
                       "fifo", 0, SCHED_FIFO);
        task_struct& w = e.spawn_pinned(
            make_task([&](task_context& t) { return wake_nothing_then_wait(t, c, answer); }),
            "waker", 0);
        e.k.run(secs(1));
        EXPECT_TRUE(e.k.all_exited()) << k;
        EXPECT_EQ(w.nivcsw, 1u) << k << ": preempted at the wake's return";
        EXPECT_EQ(w.nvcsw, 1u) << k << ": the wait found the answer"; // the exit's switch
    }
}

/*
 * voluntary against none: the remote wakeup lands in the part of a pipe write() before its
 * mutex_lock() (pipe_write 400 us, half of it held): voluntary switches at mutex_lock()'s
 * might_resched() (its might_sleep(), before it takes the mutex), none at the call's return.
 */
task_code long_writer(task_context& t, channel& ch)
{
    co_await t.write(ch, 4);
    co_await t.run(usecs(10));
}

task_code fifo_wakee_sees_mutex(task_context& t, counter& c, preempt_scene& s,
                                const pipe_channel& ch, bool& held)
{
    co_await t.wait_for(c, 1);
    s.woken_run = t.now();
    held = ch.pipe_mutex().owner() != nullptr;
}

sim_time remote_wakeup_in_a_write(const std::string& kernel, bool* mutex_held = nullptr)
{
    cost_params c = no_jitter();
    c.pipe_write = usecs(400);
    c.pipe_lock_pct = 50;
    test_env e(2, 1, kernel, c);
    pipe_channel ch("pipe");
    counter done;
    preempt_scene s;
    bool held = false;
    e.spawn_pinned(
        make_task([&](task_context& t) { return fifo_wakee_sees_mutex(t, done, s, ch, held); }),
        "fifo", 0, SCHED_FIFO);
    e.spawn_pinned(make_task([&](task_context& t) { return long_writer(t, ch); }), "writer", 0);
    e.spawn_pinned(make_task([&](task_context& t) { return remote_waker(t, done); }), "waker", 1);
    e.k.run(secs(1));
    EXPECT_TRUE(e.k.all_exited());
    if (mutex_held)
        *mutex_held = held;
    return s.woken_run;
}

TEST(preempt_model, voluntary_switches_at_the_writes_mutex_lock_none_at_its_return)
{
    const sim_time full = remote_wakeup_in_a_write("6.6+preempt=full");
    bool held = true;
    const sim_time vol = remote_wakeup_in_a_write("6.6+preempt=voluntary", &held);
    EXPECT_FALSE(held) << "voluntary: might_sleep() comes before the mutex is taken";
    const sim_time none = remote_wakeup_in_a_write("6.6+preempt=none");
    EXPECT_LT(full, usecs(110));
    EXPECT_GE(vol, usecs(200)) << "at the end of the part before mutex_lock()";
    EXPECT_LT(vol, usecs(210));
    EXPECT_GE(none, usecs(400)) << "at the write's return to user mode";
    EXPECT_LT(none, usecs(410));
}

/*
 * A read that finds its data: no preemption point between its fixed part and its copy. The
 * kernel copies straight after finding data (v6.5, sndrzt/linux-6.5 4f5cdb332210: pipe_read()
 * under pipe->mutex, with no cond_resched() in its loop; unix_stream_read_generic() under
 * u->iolock from before its check through its recv_actor), and calls::read charges the two
 * as two kernel-mode bursts whose boundary is no preemption point: a remote reschedule that
 * lands in the fixed part (for a pipe, in its held part, after mutex_lock()'s might_sleep())
 * switches at the call's return to user mode under none and voluntary, not before the copy;
 * under full when it lands. cpu0's task writes 4 KiB (a 40 us copy here) into a socket or
 * pipe, then reads them back (400 us of fixed cost); cpu1 wakes cpu0's SCHED_FIFO task.
 */
struct found_read_scene {
    sim_time read_start = -1;
    sim_time read_end = -1;
    sim_time wake_at = -1;
};

task_code write_then_read_back(task_context& t, channel& ch, u64 n, found_read_scene& s)
{
    co_await t.write(ch, n);
    s.read_start = t.now();
    const bool got = co_await t.read(ch, n);
    EXPECT_TRUE(got);
    s.read_end = t.now();
    co_await t.run(usecs(10));
}

task_code remote_waker_at(task_context& t, counter& c, sim_dur delay, found_read_scene& s)
{
    co_await t.run(delay);
    s.wake_at = t.now();
    co_await t.signal(c);
}

found_read_scene remote_wakeup_in_a_found_read(const std::string& kernel, bool pipe,
                                               preempt_scene& ps)
{
    cost_params c = no_jitter();
    c.copy_per_kib = usecs(10);
    c.socket_recv = usecs(400);
    c.pipe_read = usecs(400);
    c.pipe_lock_pct = 50; // the pipe's entry 200 us, then mutex_lock(), then 200 us held
    test_env e(2, 1, kernel, c);
    workload_state st;
    channel& ch = pipe ? static_cast<channel&>(st.make_pipe("p"))
                       : static_cast<channel&>(st.make_socketpair("s"));
    found_read_scene s;
    counter done;
    e.spawn_pinned(make_task([&](task_context& t) { return fifo_wakee(t, done, ps); }), "fifo", 0,
                   SCHED_FIFO);
    e.spawn_pinned(
        make_task([&](task_context& t) { return write_then_read_back(t, ch, 4096, s); }),
        "reader", 0);
    const sim_dur delay = pipe ? usecs(350) : usecs(150);
    e.spawn_pinned(
        make_task([&](task_context& t) { return remote_waker_at(t, done, delay, s); }), "waker",
        1);
    e.k.run(secs(1));
    EXPECT_TRUE(e.k.all_exited()) << kernel;
    EXPECT_EQ(ch.stats().reader_sleeps, 0u) << kernel << ": the data was there";
    return s;
}

TEST(preempt_model, a_read_that_finds_its_data_is_not_preempted_between_its_fixed_part_and_copy)
{
    for (const bool pipe : {false, true}) {
        for (const char* k : {"6.6+preempt=none", "6.6+preempt=voluntary", "6.6+preempt=full"}) {
            preempt_scene ps;
            const found_read_scene s = remote_wakeup_in_a_found_read(k, pipe, ps);
            const std::string what = std::string(k) + (pipe ? " pipe" : " socket");
            // The reschedule lands in the fixed part (for the pipe, in its held part).
            ASSERT_GT(s.wake_at, s.read_start + (pipe ? usecs(200) : 0)) << what;
            ASSERT_LT(s.wake_at, s.read_start + usecs(400)) << what;
            ASSERT_GE(s.read_end - s.read_start, usecs(440)) << what << ": 400 us, then the copy";
            if (std::string(k).find("full") != std::string::npos) {
                EXPECT_LT(ps.woken_run, s.wake_at + usecs(10)) << what << ": when it lands";
            } else {
                EXPECT_GE(ps.woken_run, s.read_end) << what << ": not before the copy";
                EXPECT_LT(ps.woken_run, s.read_end + usecs(10)) << what << ": at its return";
            }
        }
    }
}

/*
 * A mutex spinner leaves on need_resched() in every model (kernel/locking/mutex.c
 * mutex_spin_on_owner(): `if (!owner_on_cpu(owner) || need_resched())` ends the spin): the
 * model preempts its spin burst at once. cpu1's writer holds the pipe mutex from 0 to
 * ~400 us; cpu0's writer spins on it from 10 us; the remote wakeup of cpu0's SCHED_FIFO
 * task lands at 100 us (from cpu2). Under none the wakee runs then, not after the spinner
 * took the mutex, held it and returned to user mode (~800 us).
 */
task_code short_then_write(task_context& t, channel& ch)
{
    co_await t.run(usecs(10));
    co_await t.write(ch, 4);
}

TEST(preempt_model, a_mutex_spinner_is_preempted_at_once_under_none)
{
    for (const char* k : {"6.6+preempt=instant", "6.6+preempt=none"}) {
        cost_params c = no_jitter();
        c.pipe_write = usecs(400);
        c.pipe_lock_pct = 100;
        test_env e(3, 1, k, c);
        pipe_channel ch("pipe", 64);
        counter done;
        preempt_scene s;
        e.spawn_pinned(make_task([&](task_context& t) { return fifo_wakee(t, done, s); }), "fifo",
                       0, SCHED_FIFO);
        e.spawn_pinned(make_task([&](task_context& t) { return short_then_write(t, ch); }),
                       "spinner", 0);
        e.spawn_pinned(make_task([&](task_context& t) { return long_writer(t, ch); }), "holder", 1);
        e.spawn_pinned(make_task([&](task_context& t) { return remote_waker(t, done); }), "waker",
                       2);
        e.k.run(secs(1));
        EXPECT_TRUE(e.k.all_exited()) << k;
        EXPECT_GT(ch.pipe_mutex().stats().spins, 0u) << k << ": the scene has a spinner";
        EXPECT_LT(s.woken_run, usecs(110)) << k;
    }
}

/*
 * preempt=lazy (PREEMPT_LAZY, v6.13+), read at 6.18.2 (gfunkmonk/linux-6.18.2 57dc26c98e5e):
 * the fair class asks with resched_curr_lazy() (fair.c: check_preempt_wakeup_fair(),
 * update_curr()'s slice end), which sets TIF_NEED_RESCHED_LAZY: exit_to_user_mode_loop()
 * acts on it (the return from a system call or from an interrupt taken in user mode), as
 * schedule() does when the task blocks, but need_resched(), preempt_schedule() and
 * irqentry_exit_cond_resched() test TIF_NEED_RESCHED only, and a remote CPU is sent no
 * IPI (__resched_curr()); sched_tick() promotes a lazy bit it finds to TIF_NEED_RESCHED
 * (resched_curr()) before task_tick(), and the tick's return then preempts. Every other
 * class's reschedule is resched_curr(): full preemption. Scenes on cpu0 of two CPUs
 * sharing an LLC (a busy target: the waker activates the wakee directly, no wake list).
 * The fair wakee is nice -20 and RUN_TO_PARITY is off, so EEVDF's wakeup preemption
 * fires: the wakee's deadline (its vruntime, the average, plus 1024/88761 of the slice)
 * is earlier than the nice-0 victim's.
 */
task_code lazy_victim(task_context& t, bool in_syscall, sim_dur ns)
{
    if (in_syscall)
        co_await t.syscall(ns);
    else
        co_await t.run(ns);
    co_await t.syscall(usecs(10));
}

/// cpu0's wakee, pinned there: nice -20 (fair) or SCHED_FIFO 50; it records when it runs.
void spawn_cpu0_wakee(test_env& e, counter& c, preempt_scene& s, int policy = SCHED_NORMAL)
{
    task_opts o;
    o.comm = "wakee";
    o.cpu = 0;
    o.allowed = cpumask(e.m.nr_cpus());
    o.allowed.set(0);
    o.policy = policy;
    o.rt_priority = policy == SCHED_FIFO ? 50 : 0;
    o.nice = policy == SCHED_NORMAL ? -20 : 0;
    e.k.spawn(make_task([&](task_context& t) { return fifo_wakee(t, c, s); }), o);
}

sim_time remote_fair_wakeup_runs_at(const std::string& kernel, bool in_syscall, sim_dur ns,
                                    int policy = SCHED_NORMAL)
{
    test_env e(2, 1, kernel, no_jitter());
    counter c;
    preempt_scene s;
    spawn_cpu0_wakee(e, c, s, policy);
    e.spawn_pinned(make_task([&](task_context& t) { return lazy_victim(t, in_syscall, ns); }),
                   "victim", 0);
    e.spawn_pinned(make_task([&](task_context& t) { return remote_waker(t, c); }), "waker", 1);
    e.k.run(secs(1));
    EXPECT_TRUE(e.k.all_exited()) << kernel;
    e.k.check_all();
    return s.woken_run;
}

TEST(preempt_lazy, a_remote_fair_wakeup_in_user_work_waits_for_the_next_tick)
{
    // The victim's 20 ms user-mode burst from 0; the fair wakeup at 100 us sets the lazy
    // bit without an IPI; cpu0's tick at 4 ms (HZ 250) promotes it and preempts.
    const std::string base = "6.18+NO_RUN_TO_PARITY";
    const sim_dur tick = static_cast<sim_dur>(make_kernel_config(base).params.tick_nsec());
    ASSERT_EQ(tick, msecs(4));
    for (const char* m : {"+preempt=none", "+preempt=voluntary", "+preempt=full"}) {
        const sim_time t = remote_fair_wakeup_runs_at(base + m, false, msecs(20));
        EXPECT_GE(t, usecs(100)) << m;
        EXPECT_LT(t, usecs(110)) << m << ": the IPI's return to user mode switches at once";
    }
    const sim_time lazy = remote_fair_wakeup_runs_at(base + "+preempt=lazy", false, msecs(20));
    EXPECT_GE(lazy, tick) << "not at once: no IPI, nothing returns to user mode before the tick";
    EXPECT_LT(lazy, tick + usecs(10)) << "at the first tick, not at the burst's end (20 ms)";
}

/// Two user-mode bursts back to back (1 ms, then 19 ms), no system call between them.
task_code two_user_bursts(task_context& t)
{
    co_await t.run(msecs(1));
    co_await t.run(msecs(19));
    co_await t.syscall(usecs(10));
}

TEST(preempt_lazy, a_boundary_between_two_user_bursts_is_no_return_to_user)
{
    // The lazy bit set at 100 us without an IPI: the victim's boundary at 1 ms between two
    // user-mode bursts enters no kernel code, so nothing tests the bit there; the 4 ms tick
    // promotes it. Under none the remote wakeup's IPI switches at once.
    auto wakee_runs_at = [](const std::string& kernel) {
        test_env e(2, 1, kernel, no_jitter());
        counter c;
        preempt_scene s;
        spawn_cpu0_wakee(e, c, s);
        e.spawn_pinned(make_task([](task_context& t) { return two_user_bursts(t); }), "victim", 0);
        e.spawn_pinned(make_task([&](task_context& t) { return remote_waker(t, c); }), "waker", 1);
        e.k.run(secs(1));
        EXPECT_TRUE(e.k.all_exited()) << kernel;
        e.k.check_all();
        return s.woken_run;
    };
    EXPECT_LT(wakee_runs_at("6.18+NO_RUN_TO_PARITY+preempt=none"), usecs(110));
    const sim_time lazy = wakee_runs_at("6.18+NO_RUN_TO_PARITY+preempt=lazy");
    EXPECT_GE(lazy, msecs(4)) << "not at the 1 ms boundary between the user bursts";
    EXPECT_LT(lazy, msecs(4) + usecs(10)) << "at the first tick";
}

/// On the victim's CPU: arms a 1 ms timer at once and sleeps; records when it was armed.
task_code timer_sleeper(task_context& t, sim_time& armed)
{
    armed = t.now();
    co_await t.sleep_exact(msecs(1));
}

TEST(preempt_lazy, another_interrupt_in_user_work_acts_on_a_pending_lazy_bit)
{
    // As above (the lazy bit set at 100 us without an IPI while the victim runs a 20 ms
    // user-mode burst), and a task on cpu0 sleeping until 1 ms: its hrtimer interrupt lands
    // in the victim's user code and returns through exit_to_user_mode_loop(), which acts on
    // the lazy bit: the switch comes at 1 ms, not at the 4 ms tick.
    const std::string kernel = "6.18+NO_RUN_TO_PARITY+preempt=lazy";
    test_env e(2, 1, kernel, no_jitter());
    counter c;
    preempt_scene s;
    sim_time armed = -1;
    spawn_cpu0_wakee(e, c, s);
    e.spawn_pinned(make_task([&](task_context& t) { return timer_sleeper(t, armed); }), "sleeper",
                   0);
    e.spawn_pinned(make_task([&](task_context& t) { return lazy_victim(t, false, msecs(20)); }),
                   "victim", 0);
    e.spawn_pinned(make_task([&](task_context& t) { return remote_waker(t, c); }), "waker", 1);
    e.k.run(secs(1));
    EXPECT_TRUE(e.k.all_exited());
    e.k.check_all();
    ASSERT_GE(armed, 0);
    ASSERT_LT(armed, usecs(100)) << "the timer is armed before the lazy wakeup";
    EXPECT_GE(s.woken_run, msecs(1)) << "not before the timer's interrupt";
    EXPECT_LT(s.woken_run, msecs(1) + usecs(50)) << "at the timer interrupt's return, not the tick";
}

TEST(preempt_lazy, a_remote_fair_wakeup_in_a_syscall_waits_for_its_return_to_user)
{
    // The victim's 1 ms system call from 0: full preempts when the IPI lands; lazy sends
    // none and switches at the call's return to user mode (before the 4 ms tick), as none.
    const std::string base = "6.18+NO_RUN_TO_PARITY";
    const sim_time full = remote_fair_wakeup_runs_at(base + "+preempt=full", true, msecs(1));
    EXPECT_LT(full, usecs(110));
    for (const char* m : {"+preempt=lazy", "+preempt=none"}) {
        const sim_time t = remote_fair_wakeup_runs_at(base + m, true, msecs(1));
        EXPECT_GE(t, msecs(1)) << m << ": after the call's return to user mode";
        EXPECT_LT(t, msecs(1) + usecs(10)) << m << ": at that return";
    }
}

TEST(preempt_lazy, an_rt_wakeup_preempts_at_once_as_under_full)
{
    // A SCHED_FIFO wakee: wakeup_preempt() -> resched_curr(), the full bit and the IPI.
    const std::string base = "6.18+NO_RUN_TO_PARITY";
    for (const bool in_syscall : {false, true}) {
        const sim_time full =
            remote_fair_wakeup_runs_at(base + "+preempt=full", in_syscall, msecs(1), SCHED_FIFO);
        EXPECT_LT(full, usecs(110)) << in_syscall;
        EXPECT_EQ(remote_fair_wakeup_runs_at(base + "+preempt=lazy", in_syscall, msecs(1),
                                             SCHED_FIFO),
                  full)
            << in_syscall;
    }
}

TEST(preempt_lazy, a_local_fair_wakeup_waits_for_the_wakers_return_to_user)
{
    // A pipe write() wakes a nice -20 reader on the writer's CPU: the lazy bit is acted on
    // at the write's return to user mode (its tail: the wakeup cost and the return path),
    // as under none, not at the wakeup itself (instant).
    auto reader_runs_at = [](const std::string& kernel, u64& nivcsw) {
        test_env e(1, 1, kernel, no_jitter());
        pipe_channel ch("pipe");
        preempt_scene s;
        task_opts o;
        o.comm = "reader";
        o.cpu = 0;
        o.nice = -20;
        e.k.spawn(make_task([&](task_context& t) { return pipe_reader(t, ch, s); }), o);
        task_struct& w = e.spawn_pinned(
            make_task([&](task_context& t) { return pipe_writer(t, ch, s); }), "writer", 0);
        e.k.run(secs(1));
        EXPECT_TRUE(e.k.all_exited()) << kernel;
        nivcsw = w.nivcsw;
        return s;
    };
    const cost_params c = no_jitter();
    u64 nivcsw = 0;
    const preempt_scene instant = reader_runs_at("6.18+NO_RUN_TO_PARITY+preempt=instant", nivcsw);
    EXPECT_EQ(nivcsw, 1u) << "the scene has a wakeup preemption";
    const preempt_scene none = reader_runs_at("6.18+NO_RUN_TO_PARITY+preempt=none", nivcsw);
    const preempt_scene lazy = reader_runs_at("6.18+NO_RUN_TO_PARITY+preempt=lazy", nivcsw);
    EXPECT_EQ(nivcsw, 1u);
    EXPECT_EQ(lazy.waker_t0, instant.waker_t0);
    EXPECT_EQ(lazy.woken_run - instant.woken_run, c.wakeup) << "after the writer's tail";
    EXPECT_EQ(lazy.woken_run, none.woken_run);
}

/*
 * A slice end in a long system call: two nice-0 tasks on one CPU, the first in a 30 ms
 * call. The tick that finds its deadline passed (update_curr()) asks for a reschedule:
 * full preempts at that tick's return to kernel code (irqentry_exit_cond_resched());
 * lazy's bit waits for the next tick, which promotes it (one tick later); none waits for
 * the call's return to user mode.
 */
task_code then_record(task_context& t, sim_time& ran)
{
    ran = t.now();
    co_await t.run(usecs(1));
}

sim_time slice_end_in_a_syscall(const std::string& kernel)
{
    test_env e(1, 1, kernel, no_jitter());
    sim_time second_ran = -1;
    e.spawn_pinned(make_task([&](task_context& t) { return lazy_victim(t, true, msecs(30)); }),
                   "long", 0);
    e.spawn_pinned(make_task([&](task_context& t) { return then_record(t, second_ran); }),
                   "second", 0);
    e.k.run(secs(1));
    EXPECT_TRUE(e.k.all_exited()) << kernel;
    return second_ran;
}

TEST(preempt_lazy, a_slice_end_in_kernel_code_is_promoted_by_the_next_tick)
{
    const sim_dur tick = msecs(4);
    const sim_time full = slice_end_in_a_syscall("6.18+preempt=full");
    const sim_time lazy = slice_end_in_a_syscall("6.18+preempt=lazy");
    const sim_time none = slice_end_in_a_syscall("6.18+preempt=none");
    EXPECT_LT(full, msecs(30)) << "full: at a tick inside the call";
    EXPECT_LT(full % tick, usecs(10)) << "at a tick";
    EXPECT_EQ(lazy, full + tick) << "lazy: the next tick promotes the bit";
    EXPECT_GE(none, msecs(30)) << "none: at the call's return to user mode";
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

/* ---- a wake-all walked in time (struct wake_walk; lane wakepace) ---- */

/// Each sched_wakeup and each switch-in, in order.
struct wake_recorder final : trace_sink {
    std::vector<std::pair<int, sim_time>> wakeups;   ///< (pid, ts)
    std::vector<std::pair<int, sim_time>> switch_ins; ///< (next pid, ts)
    void sched_wakeup(const trace_sched_wakeup& e) override { wakeups.emplace_back(e.pid, e.ts); }
    void sched_switch(const trace_sched_switch& e) override
    {
        switch_ins.emplace_back(e.next_pid, e.ts);
    }
    sim_time first(const std::vector<std::pair<int, sim_time>>& v, int pid, sim_time from) const
    {
        for (const auto& [p, ts] : v)
            if (p == pid && ts >= from)
                return ts;
        return -1;
    }
};

task_code walk_waiter(task_context& t, counter& c)
{
    co_await t.wait_for(c, 1);
    co_await t.run(usecs(1));
}

task_code walk_releaser(task_context& t, counter& c, sim_time& released)
{
    co_await t.run(usecs(50));
    released = t.now();
    co_await t.signal(c);
    co_await t.run(usecs(1));
}

/// `n` waiters, each pinned to its own CPU 1..n, woken by one signal() of a counter from CPU 0.
struct walk_env {
    /// `fifo_on_waker`: the waiters are SCHED_FIFO tasks pinned to the waker's CPU 0.
    walk_env(int n, bool wake_q, bool fifo_on_waker = false, const std::string& profile = "6.6")
        : e(fifo_on_waker ? 1 : n + 1, 1, profile, no_jitter())
    {
        e.k.add_sink(&rec);
        counter& c = st.make_counter("c", wake_q ? 0 : WF_SYNC);
        for (int i = 1; i <= n; ++i)
            pids.push_back(
                e.spawn_pinned(make_task([&c](task_context& t) { return walk_waiter(t, c); }),
                               fmt::format("w{}", i), fifo_on_waker ? 0 : i,
                               fifo_on_waker ? SCHED_FIFO : SCHED_NORMAL)
                    .pid);
        e.spawn_pinned(make_task([&](task_context& t) { return walk_releaser(t, c, released); }),
                       "releaser", 0);
        e.k.run(secs(1));
    }
    test_env e;
    workload_state st;
    wake_recorder rec;
    std::vector<int> pids;
    sim_time released = -1;
};

/*
 * The waker wakes wakee i+1 only once it has paid wakee i's try_to_wake_up(): the
 * sched_wakeups of one wake-all come one wakeup cost apart, in the order the queue is walked
 * (add_wait_queue(): the last to wait first). Before the walk (all woken at the signal's
 * instant, their cost charged after) every gap was 0.
 */
TEST(wake_walk, a_wake_all_wakes_each_sleeper_one_wakeup_cost_after_the_last)
{
    for (const bool wake_q : {false, true}) {
        walk_env w(4, wake_q);
        ASSERT_TRUE(w.e.k.all_exited());
        const sim_dur cost = w.e.k.charges().params().wakeup;
        ASSERT_GT(cost, 0);
        std::vector<sim_time> at;
        for (auto it = w.pids.rbegin(); it != w.pids.rend(); ++it) // the last waiter first
            at.push_back(w.rec.first(w.rec.wakeups, *it, w.released));
        ASSERT_EQ(at.front(), w.released) << "the first wakee at the signal";
        for (std::size_t i = 1; i < at.size(); ++i)
            EXPECT_EQ(at[i] - at[i - 1], cost) << "wakee " << i << (wake_q ? " (wake_up_q)" : "");
    }
}

/// The first wakee, on an idle CPU of its own, runs while the waker still walks the queue.
TEST(wake_walk, the_first_wakee_runs_before_the_walk_ends)
{
    walk_env w(4, false);
    ASSERT_TRUE(w.e.k.all_exited());
    const sim_time first_run = w.rec.first(w.rec.switch_ins, w.pids.back(), w.released);
    const sim_time last_woken = w.rec.first(w.rec.wakeups, w.pids.front(), w.released);
    ASSERT_GE(first_run, 0);
    ASSERT_GE(last_woken, 0);
    EXPECT_LT(first_run, last_woken);
}

/*
 * An rt wakee on the waker's own CPU preempts it (wakeup_preempt()). A wait queue's walk runs
 * under spin_lock_irqsave(), so the switch waits for the walk's end (task_action::nopreempt),
 * after every wakee is woken, in every preemption model; a wake_up_q() walk (a futex's) is
 * preemptible, so with the reschedule acting at once (`preempt=instant`) or at the end of the
 * first try_to_wake_up()'s preempt_enable() (`preempt=full`; task_action::preempt_enable_after)
 * the first wakee runs before the second is woken. (The default, voluntary, defers both to the
 * return to user.)
 */
TEST(wake_walk, a_wait_queues_walk_is_not_preempted_a_wake_up_q_walk_is)
{
    for (const char* profile : {"6.6+preempt=instant", "6.6+preempt=full", "6.6"}) {
        walk_env w(3, false, true, profile);
        ASSERT_TRUE(w.e.k.all_exited());
        const sim_time first_run = w.rec.first(w.rec.switch_ins, w.pids.back(), w.released);
        const sim_time last_woken = w.rec.first(w.rec.wakeups, w.pids.front(), w.released);
        ASSERT_GE(last_woken, 0);
        EXPECT_GT(first_run, last_woken) << profile << ": after the walk's last wakeup";
    }
    for (const char* profile : {"6.6+preempt=instant", "6.6+preempt=full"}) {
        walk_env w(3, true, true, profile);
        ASSERT_TRUE(w.e.k.all_exited());
        const sim_time first_run = w.rec.first(w.rec.switch_ins, w.pids.back(), w.released);
        const sim_time second_woken = w.rec.first(w.rec.wakeups, w.pids[1], w.released);
        ASSERT_GE(first_run, 0);
        EXPECT_LT(first_run, second_woken)
            << profile << ": wake_up_q(), preempted after the first wakeup";
    }
}

/*
 * __wake_up_common_lock() drops the queue's lock after every WAITQUEUE_WALK_BREAK_CNT + 1 = 65
 * entries (the bookmark): with the reschedule acting at once, an rt wakee on the waker's CPU
 * runs there, after the 65th wakeup and before the 66th.
 */
TEST(wake_walk, a_wait_queues_walk_drops_its_lock_after_65_entries)
{
    walk_env w(70, false, true, "6.6+preempt=instant");
    ASSERT_TRUE(w.e.k.all_exited());
    // pids[69] is woken first (the queue's head), pids[69 - 64] 65th, pids[69 - 65] 66th
    const sim_time first_run = w.rec.first(w.rec.switch_ins, w.pids[69], w.released);
    const sim_time woken_65th = w.rec.first(w.rec.wakeups, w.pids[69 - 64], w.released);
    const sim_time woken_66th = w.rec.first(w.rec.wakeups, w.pids[69 - 65], w.released);
    ASSERT_GE(woken_65th, 0);
    EXPECT_GE(first_run, woken_65th);
    EXPECT_LT(first_run, woken_66th);
}

} // namespace
} // namespace schedlab
