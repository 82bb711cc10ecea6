// SPDX-License-Identifier: GPL-2.0-only
/*
 * replay: behaviour rebuilt from small trace excerpts (causes, fork and exit,
 * selection), the trace-side statistics of the shared traces, and replays run
 * to completion in a kernel.
 */
#include "workload/replay.h"

#include "metrics/sched_summary.h"
#include "trace/export_ftrace.h"
#include "trace/ftrace_text_test_support.h"
#include "workload/registry.h"

#include "sim/config_error.h"
#include "sim/scratch_dir_test_support.h"
#include "support/workload_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

namespace schedlab {
namespace {

using test_support::scratch_dir;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::test_env;

const std::string traces_dir = std::string(SCHEDLAB_SOURCE_DIR) + "/data/traces/";

constexpr const char* header = "# tracer: nop\n"
                               "# entries-in-buffer/entries-written: 1/1   #P:2\n";

using test_support::line;
using test_support::sw;

std::string waking(const std::string& comm, int pid, int target)
{
    return fmt::format("sched_waking: comm={} pid={} prio=120 target_cpu={:03}", comm, pid, target);
}

std::string steps_of(const replay_task& t)
{
    std::string s;
    for (const replay_step& st : t.steps.decode()) {
        switch (st.kind) {
        case replay_step::run:
            s += fmt::format("run {} ", st.ns);
            break;
        case replay_step::wake:
            s += fmt::format("wake {} ", st.pid);
            break;
        case replay_step::wait:
            s += fmt::format("wait {}:{} ", st.pid, st.k);
            break;
        case replay_step::sleep:
            s += fmt::format("sleep {} ", st.ns);
            break;
        case replay_step::sleep_until:
            s += fmt::format("until {} ", st.ns);
            break;
        case replay_step::fork:
            s += fmt::format("fork {} ", st.pid);
            break;
        case replay_step::wake_absent:
            s += fmt::format("absent {} ", st.pid);
            break;
        case replay_step::exit:
            s += "exit ";
            break;
        case replay_step::pending:
            s += "pending ";
            break;
        }
    }
    if (!s.empty())
        s.pop_back();
    return s;
}

/// A task's wake steps, each its wakee's pid and its part in a request-reply pair (" req",
/// " reply", " reply+req"), in order.
std::string wakes_of(const replay_task& t)
{
    std::string s;
    for (const replay_step& st : t.steps.decode()) {
        if (st.kind != replay_step::wake)
            continue;
        const bool req = st.flags & replay_step::request, reply = st.flags & replay_step::reply;
        s += fmt::format("{}{}{}{} ", st.pid, reply || req ? " " : "", reply ? "reply" : "",
                         req ? (reply ? "+req" : "req") : "");
    }
    if (!s.empty())
        s.pop_back();
    return s;
}

/// A sched_switch's fields with the tasks' prios.
std::string swp(const std::string& prev, int prev_pid, int prev_prio, const char* state,
                const std::string& next, int next_pid, int next_prio)
{
    return fmt::format("sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state={} "
                       "==> next_comm={} next_pid={} next_prio={}",
                       prev, prev_pid, prev_prio, state, next, next_pid, next_prio);
}

const replay_task& task(const replay_trace& t, int pid)
{
    for (const replay_task& rt : t.tasks)
        if (rt.pid == pid)
            return rt;
    throw std::runtime_error(fmt::format("no task {}", pid));
}

class replay_build : public scratch_dir {};

TEST(replay_steps, round_trip_compactly)
{
    const std::vector<replay_step> in = {
        {replay_step::run, 3'700, -1, 0},
        {replay_step::run, 0, -1, 0},
        {replay_step::wake, 0, 4'194'304, 300, replay_step::request | replay_step::reply},
        {replay_step::wake, 0, 3, 1, replay_step::reply},
        {replay_step::wait, 0, 17, 123'456'789},
        {replay_step::sleep, -5, -1, 0},
        {replay_step::sleep_until, INT64_MAX, -1, 0},
        {replay_step::sleep_until, INT64_MIN, -1, 0},
        {replay_step::fork, 0, 1, 0},
        {replay_step::wake_absent, 0, 2333, 0},
        {replay_step::pending, 0, -1, 0},
        {replay_step::exit, 0, -1, 0},
    };
    replay_steps steps;
    for (const replay_step& s : in)
        steps.push(s);
    EXPECT_EQ(steps.size(), in.size());
    const std::vector<replay_step> out = steps.decode();
    ASSERT_EQ(out.size(), in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(out[i].kind, in[i].kind);
        EXPECT_EQ(out[i].ns, in[i].ns);
        EXPECT_EQ(out[i].k, in[i].k);
        EXPECT_EQ(out[i].flags, in[i].flags);
        // a pid is stored for the steps that name a task only
        if (in[i].kind == replay_step::wake || in[i].kind == replay_step::wait ||
            in[i].kind == replay_step::fork || in[i].kind == replay_step::wake_absent) {
            EXPECT_EQ(out[i].pid, in[i].pid);
        }
    }
    // A short burst in 3 bytes, a pid in 4 (a wake's index in the wakee's order, 300, in 2
    // more), the 8-byte extremes in 11, an absent task's pid (2333) in 3; far from the 32 of
    // a replay_step.
    EXPECT_EQ(steps.bytes(),
              3u + 2u + (1u + 4u + 2u) + 3u + (1u + 1u + 4u) + 2u + 11u + 11u + 2u + 3u + 1u + 1u);
}

// Two tasks ping-pong on two CPUs; a third is woken by a timer, then from a softirq, then
// by a kernel thread; a kworker (not selected) runs in between.
TEST_F(replay_build, blocks_with_their_causes)
{
    std::string t = header;
    t += line("a-10", 0, "d..2.", 1000, sw("a", 10, "R+", "b", 11)); // a preempted by b
    t += line("b-11", 0, "d..3.", 1004, waking("c", 12, 1));         // c first seen woken by b
    t += line("b-11", 0, "d..2.", 1010, sw("b", 11, "S", "a", 10));  // b blocks
    t += line("a-10", 0, "d..3.", 1030, waking("b", 11, 0));         // a wakes b: an edge
    t += line("a-10", 0, "d..2.", 1040, sw("a", 10, "S", "b", 11));  // a blocks
    t += line("b-11", 0, "d.h2.", 1100, waking("a", 10, 0));         // a timer wakes a
    t += line("b-11", 0, "d..2.", 1120, sw("b", 11, "D", "a", 10));  // b blocks
    t += line("a-10", 0, "d..2.", 1125, waking("a", 10, 0));         // a wakes itself: ignored
    t += line("a-10", 0, "d.s2.", 1130, waking("b", 11, 0));         // softirq: external
    t += line("a-10", 0, "d..2.", 1140, sw("a", 10, "S", "kworker/0:1", 5));
    t += line("kworker/0:1-5", 0, "d..3.", 1150, waking("a", 10, 0)); // untraced waker
    t += line("kworker/0:1-5", 0, "d..2.", 1160, sw("kworker/0:1", 5, "I", "a", 10));
    t += line("a-10", 0, "d..2.", 1200, sw("a", 10, "R", "b", 11));
    const replay_trace r = load_replay_trace(write("t.txt", t), {});
    EXPECT_EQ(r.t0, 1'000'000);
    EXPECT_EQ(r.t1, 1'200'000);
    ASSERT_EQ(r.tasks.size(), 3u); // the kworker is a kernel thread
    // a: its CPU time before the window (before its first event) is not counted.
    EXPECT_EQ(steps_of(task(r, 10)),
              "run 20000 wake 11 run 10000 sleep 60000 run 20000 until 150000 run 40000");
    // b: the hardirq waking at 1100 and the softirq one at 1130 do not split its bursts.
    EXPECT_EQ(steps_of(task(r, 11)), "run 4000 wake 12 run 6000 wait 10:1 run 80000 until 130000");
    EXPECT_EQ(steps_of(task(r, 12)), "wait 11:1");
    EXPECT_EQ(r.causes.dependency, 2u); // b by a, c by b
    EXPECT_EQ(r.causes.timer, 1u);
    EXPECT_EQ(r.causes.external, 2u); // softirq, kworker
    EXPECT_EQ(r.causes.non_blocking_wakings, 1u);
    // The statistics count a, b and c only; the kworker's 20 us are idle time.
    EXPECT_EQ(r.summary.voluntary, 4u);
    EXPECT_EQ(r.summary.involuntary, 2u);
    EXPECT_EQ(r.summary.busy.at(0), 200'000 - 20'000);
}

/*
 * A window cut out of a longer recording (bench/tbhost/cut_trace.py, in the shape of the tbench
 * traces in data/traces): the tasks exist before it and the CPUs are mid-run. On CPU 1, c (21)
 * is running and wakes s (31) from the softirq its own send ran, as loopback TCP's receive
 * does ('s' flags); on CPU 0, d (22) is running and is preempted by t (32), whose waking came
 * before the window. Later s wakes c back from its softirq, and an interrupt's softirq on the
 * idle CPU 0 wakes d. Each is reported (before_window) and handled as the trace shows: c and
 * d were running (d's 5 us before its first event are not in the trace), t was runnable
 * (no arrival: it runs from the start), s asleep.
 */
TEST_F(replay_build, a_window_cut_mid_run)
{
    std::string t = header;
    t += line("c-21", 1, "d.s5.", 1000, waking("s", 31, 1)); // c's send wakes s
    t += line("c-21", 1, "d..2.", 1002, sw("c", 21, "S", "s", 31));
    t += line("d-22", 0, "d..2.", 1005, sw("d", 22, "R", "t", 32)); // t runnable before
    t += line("s-31", 1, "d.s5.", 1010, waking("c", 21, 1));        // s's send wakes c
    t += line("s-31", 1, "d..2.", 1012, sw("s", 31, "S", "c", 21));
    t += line("t-32", 0, "d..2.", 1020, sw("t", 32, "S", "d", 22));
    t += line("d-22", 0, "d..2.", 1025, sw("d", 22, "S", "swapper/0", 0));
    t += line("<idle>-0", 0, "d.s4.", 1027, waking("d", 22, 0)); // an interrupt's softirq
    t += line("<idle>-0", 0, "d..2.", 1028, sw("swapper/0", 0, "R", "d", 22));
    t += line("c-21", 1, "d..2.", 1030, sw("c", 21, "S", "swapper/1", 0));
    const std::string path = write("cut.txt", t);
    const replay_trace a = load_replay_trace(path, {});
    EXPECT_EQ(a.t0, 1'000'000);
    EXPECT_EQ(a.before_window.running, 2u);           // c, d
    EXPECT_EQ(a.before_window.runnable, 1u);          // t
    EXPECT_EQ(a.before_window.asleep, 1u);            // s
    EXPECT_EQ(a.before_window.running_unseen, 5'000); // d's first event, 5 us in
    EXPECT_THAT(a.warnings,
                ::testing::Contains(HasSubstr(
                    "4 selected tasks existed before the window (not forked in it): 2 running "
                    "at its start (their CPU time before their first event, at most 0.005 ms "
                    "in all, is not replayed), 1 runnable")));
    // t runs from the start: no arrival at its first switch-in (before: "until 5000 run 15000").
    EXPECT_EQ(steps_of(task(a, 32)), "run 15000");
    EXPECT_EQ(steps_of(task(a, 22)), "run 5000 until 27000 run 2000");
    // By default a softirq's waking is an external arrival at its traced time.
    EXPECT_EQ(steps_of(task(a, 21)), "run 2000 until 10000 run 18000");
    EXPECT_EQ(steps_of(task(a, 31)), "until 0 run 10000");
    EXPECT_EQ(a.causes.external, 3u);
    EXPECT_EQ(a.causes.dependency, 0u);
    // --softirq-wakes: the wakings in c's and s's softirqs are theirs, dependency edges; the
    // one on the idle CPU stays external.
    replay_options o;
    o.softirq_wakes = true;
    const replay_trace b = load_replay_trace(path, o);
    EXPECT_EQ(steps_of(task(b, 21)), "wake 31 run 2000 wait 31:1 run 18000");
    EXPECT_EQ(steps_of(task(b, 31)), "wait 21:1 run 8000 wake 21 run 2000");
    EXPECT_EQ(steps_of(task(b, 22)), "run 5000 until 27000 run 2000");
    EXPECT_EQ(b.causes.dependency, 2u);
    EXPECT_EQ(b.causes.external, 1u);
    EXPECT_EQ(b.causes.replies, 1u); // s's wake of c answers c's wake of s
    // The trace's wakings by a task (the wakeup-target kind), with the option: s's of c. c's
    // of s at 1000 comes before any switch on CPU 1, and the summary learns a CPU's current
    // task from its switches (wakeup_target_tracker): it counts as by an interrupt.
    EXPECT_EQ(b.summary.wakeup_targets.placed_by(waker_kind::task), 1u);
    EXPECT_EQ(a.summary.wakeup_targets.placed_by(waker_kind::task), 0u);
}

// A waking recorded just before the switch out it ends (the wakee was inside __schedule()),
// and one that ends nothing because the wakee went on running.
TEST_F(replay_build, wakings_that_race_with_the_switch_out)
{
    std::string t = header;
    t += line("b-11", 1, "d..2.", 3000, sw("b", 11, "S", "swapper/1", 0));
    t += line("a-10", 0, "d..3.", 3010, waking("c", 12, 0)); // a's own event
    t += line("<idle>-0", 1, "d..2.", 3011, sw("swapper/1", 0, "R", "c", 12));
    t += line("c-12", 1, "d..3.", 3012, waking("a", 10, 0)); // early: ends a's block
    t += line("a-10", 0, "d..2.", 3013, sw("a", 10, "S", "swapper/0", 0));
    t += line("c-12", 1, "d..3.", 3020, waking("b", 11, 0)); // b blocked: an edge
    t += line("c-12", 1, "d..3.", 3030, waking("a", 10, 0)); // a already woken
    t += line("<idle>-0", 0, "d..2.", 3031, sw("swapper/0", 0, "R", "a", 10));
    t += line("c-12", 1, "d..3.", 3040, waking("a", 10, 0)); // early, but then:
    t += line("a-10", 0, "d..3.", 3045, waking("b", 11, 0)); // a runs on: cancelled
    t += line("a-10", 0, "d..2.", 3050, sw("a", 10, "S", "swapper/0", 0));
    t += line("c-12", 1, "d..2.", 3060, sw("c", 12, "S", "swapper/1", 0));
    const replay_trace r = load_replay_trace(write("t.txt", t), {});
    // a's block at 3013 is ended by c's waking at 3012; its block at 3050 is open at the end.
    EXPECT_EQ(steps_of(task(r, 10)), "wake 12 run 3000 wait 12:1 run 19000");
    // c: its wake of a at 3040 ended nothing (a went on running): an empty run step.
    EXPECT_EQ(steps_of(task(r, 12)),
              "wait 10:1 run 1000 wake 10 run 8000 wake 11 run 20000 run 0 run 20000");
    EXPECT_EQ(steps_of(task(r, 11)), "wait 12:1");
    EXPECT_EQ(r.causes.early, 1u);
    EXPECT_EQ(r.causes.dependency, 3u); // c by a, a by c (early), b by c
    EXPECT_EQ(r.causes.unknown, 0u);
    // a's wake of c ended c's block and c's first wake of a after it (the early one at 3012,
    // which ended a's block at 3013) answered it: a request-reply pair. c's wake of b is
    // none (b did not start c's burst), nor c's cancelled waking of a at 3040.
    EXPECT_EQ(wakes_of(task(r, 10)), "12 req");
    EXPECT_EQ(wakes_of(task(r, 12)), "10 reply 11");
    EXPECT_EQ(r.causes.replies, 1u);
}

/*
 * A request-reply exchange, by hand (docs/replay.md, "Requests and replies"): m serves a and
 * b. m blocks at 1005; a wakes it at 1020 and blocks, m wakes a at 1030 (its first wake of a
 * since a's wake ended its block: the reply) and blocks; b, preempted at 1003 by d (not
 * selected) until 1095, wakes m at 1100 and blocks, m wakes it back at 1110 (the reply) and
 * runs on to its exit. a's and b's wakes of m are requests, m's two wakes replies.
 */
std::string request_reply_trace()
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 1/1   #P:3\n";
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "m", 10));
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "a", 11));
    t += line("<idle>-0", 2, "d..2.", 1000, sw("swapper/2", 0, "R", "b", 12));
    t += line("b-12", 2, "d..2.", 1003, sw("b", 12, "R", "d", 13));
    t += line("m-10", 0, "d..2.", 1005, sw("m", 10, "S", "swapper/0", 0));
    t += line("a-11", 1, "d..3.", 1020, waking("m", 10, 0));
    t += line("a-11", 1, "d..2.", 1021, sw("a", 11, "S", "swapper/1", 0));
    t += line("<idle>-0", 0, "d..2.", 1022, sw("swapper/0", 0, "R", "m", 10));
    t += line("m-10", 0, "d..3.", 1030, waking("a", 11, 1));
    t += line("m-10", 0, "d..2.", 1031, sw("m", 10, "S", "swapper/0", 0));
    t += line("<idle>-0", 1, "d..2.", 1032, sw("swapper/1", 0, "R", "a", 11));
    t += line("d-13", 2, "d..2.", 1095, sw("d", 13, "S", "b", 12));
    t += line("b-12", 2, "d..3.", 1100, waking("m", 10, 0));
    t += line("b-12", 2, "d..2.", 1101, sw("b", 12, "S", "swapper/2", 0));
    t += line("<idle>-0", 0, "d..2.", 1102, sw("swapper/0", 0, "R", "m", 10));
    t += line("m-10", 0, "d..3.", 1110, waking("b", 12, 2));
    t += line("<idle>-0", 2, "d..2.", 1112, sw("swapper/2", 0, "R", "b", 12));
    for (const auto& [task, pid, cpu] :
         {std::tuple{"m", 10, 0}, std::tuple{"a", 11, 1}, std::tuple{"b", 12, 2}}) {
        const std::string tp = fmt::format("{}-{}", task, pid);
        t += line(tp, cpu, "d..2.", 1300,
                  fmt::format("sched_process_exit: comm={} pid={} prio=120 group_dead=1", task, pid));
        t += line(tp, cpu, "d..2.", 1300, sw(task, pid, "X", fmt::format("swapper/{}", cpu), 0));
    }
    return t;
}

TEST_F(replay_build, request_reply_pairs)
{
    replay_options o;
    o.comm_regex = "^(m|a|b)$";
    const replay_trace r = load_replay_trace(write("t.txt", request_reply_trace()), o);
    EXPECT_EQ(steps_of(task(r, 10)),
              "run 5000 wait 11:1 run 8000 wake 11 run 1000 wait 12:1 run 8000 wake 12 run 190000 "
              "exit");
    EXPECT_EQ(steps_of(task(r, 11)), "run 20000 wake 10 run 1000 wait 10:1 run 268000 exit");
    EXPECT_EQ(steps_of(task(r, 12)), "run 8000 wake 10 run 1000 wait 10:1 run 188000 exit");
    EXPECT_EQ(wakes_of(task(r, 10)), "11 reply 12 reply");
    EXPECT_EQ(wakes_of(task(r, 11)), "10 req");
    EXPECT_EQ(wakes_of(task(r, 12)), "10 req");
    EXPECT_EQ(r.causes.replies, 2u);

    // a wakes m and blocks; in that burst m wakes b (no reply: b did not start it) and
    // blocks; b, so woken, wakes m back (b's reply to m's wake of it); m then wakes a, after
    // blocking once since a's wake: no reply either (a's request stays a plain wake).
    std::string u = header;
    u += line("m-10", 0, "d..2.", 1000, sw("m", 10, "S", "swapper/0", 0));
    u += line("a-11", 1, "d..3.", 1010, waking("m", 10, 0));
    u += line("a-11", 1, "d..2.", 1011, sw("a", 11, "S", "b", 12));
    u += line("<idle>-0", 0, "d..2.", 1012, sw("swapper/0", 0, "R", "m", 10));
    u += line("b-12", 1, "d..2.", 1013, sw("b", 12, "S", "swapper/1", 0));
    u += line("m-10", 0, "d..3.", 1020, waking("b", 12, 1));
    u += line("m-10", 0, "d..2.", 1021, sw("m", 10, "S", "swapper/0", 0));
    u += line("<idle>-0", 1, "d..2.", 1022, sw("swapper/1", 0, "R", "b", 12));
    u += line("b-12", 1, "d..3.", 1030, waking("m", 10, 0));
    u += line("<idle>-0", 0, "d..2.", 1031, sw("swapper/0", 0, "R", "m", 10));
    u += line("m-10", 0, "d..3.", 1040, waking("a", 11, 1));
    const replay_trace v = load_replay_trace(write("u.txt", u), {});
    EXPECT_EQ(wakes_of(task(v, 10)), "12 req 11");
    EXPECT_EQ(wakes_of(task(v, 11)), "10");
    EXPECT_EQ(wakes_of(task(v, 12)), "10 reply");
    EXPECT_EQ(v.causes.replies, 1u);
}

/*
 * A reply the trace implies (docs/replay.md, "schbench: a reply to a preempted worker"): m
 * serves a. a wakes m across CPUs at 1020 and blocks; m answers (its traced wake of a, 1030).
 * At 1040 a wakes m on its own CPU, m preempts it (a out in R with m next, 1042) and blocks
 * again at 1050 before a runs, with no waking of a: a was runnable, so m's reply woke nothing.
 * m answered every request of a's the trace could show, so the builder gives m's burst a wake
 * of a at its end (a reply) and a a wait for it where it was preempted. Without that first
 * traced reply (m lets a's first request go unanswered, a's timer wakes it) nothing is
 * implied.
 */
std::string implied_reply_trace(bool first_answered)
{
    std::string t = header;
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "m", 10));
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "a", 11));
    t += line("m-10", 0, "d..2.", 1005, sw("m", 10, "S", "swapper/0", 0));
    t += line("a-11", 1, "d..3.", 1020, waking("m", 10, 0));
    t += line("a-11", 1, "d..2.", 1021, sw("a", 11, "S", "swapper/1", 0));
    t += line("<idle>-0", 0, "d..2.", 1022, sw("swapper/0", 0, "R", "m", 10));
    if (first_answered)
        t += line("m-10", 0, "d..3.", 1030, waking("a", 11, 1));
    else
        t += line("<idle>-0", 1, "d.h3.", 1030, waking("a", 11, 1));
    t += line("m-10", 0, "d..2.", 1031, sw("m", 10, "S", "swapper/0", 0));
    t += line("<idle>-0", 1, "d..2.", 1032, sw("swapper/1", 0, "R", "a", 11));
    t += line("a-11", 1, "d..3.", 1040, waking("m", 10, 1));
    t += line("a-11", 1, "d..2.", 1042, sw("a", 11, "R", "m", 10));
    t += line("m-10", 1, "d..2.", 1050, sw("m", 10, "S", "a", 11));
    t += line("a-11", 1, "d..2.", 1060, sw("a", 11, "S", "swapper/1", 0));
    t += line("<idle>-0", 1, "d.h3.", 1100, waking("a", 11, 1));
    t += line("<idle>-0", 1, "d..2.", 1101, sw("swapper/1", 0, "R", "a", 11));
    t += line("a-11", 1, "d..2.", 1300, "sched_process_exit: comm=a pid=11 prio=120 group_dead=1");
    t += line("a-11", 1, "d..2.", 1300, sw("a", 11, "X", "swapper/1", 0));
    return t;
}

TEST_F(replay_build, a_reply_to_a_preempted_requester_is_implied)
{
    const replay_trace r = load_replay_trace(write("t.txt", implied_reply_trace(true)), {});
    EXPECT_EQ(steps_of(task(r, 11)), "run 20000 wake 10 run 1000 wait 10:1 run 8000 wake 10 "
                                     "run 2000 wait 10:2 run 10000 sleep 40000 run 199000 exit");
    EXPECT_EQ(steps_of(task(r, 10)),
              "run 5000 wait 11:1 run 8000 wake 11 run 1000 wait 11:2 run 8000 wake 11");
    // a's second wake of m answers m's first (a reply, and a request of its own)
    EXPECT_EQ(wakes_of(task(r, 11)), "10 req 10 reply+req");
    EXPECT_EQ(wakes_of(task(r, 10)), "11 reply+req 11 reply");
    EXPECT_EQ(r.causes.replies, 3u);
    EXPECT_EQ(r.causes.implied_replies, 1u);
    EXPECT_EQ(r.causes.dependency, 3u); // the traced blocks: the implied wait is none of them
    auto w = make_replay_workload({path("t.txt")});
    EXPECT_THAT(w->report(), HasSubstr("# implied replies: 1 replies to a requester its replier "
                                       "had preempted"));

    const replay_trace u = load_replay_trace(write("u.txt", implied_reply_trace(false)), {});
    EXPECT_EQ(steps_of(task(u, 11)), "run 20000 wake 10 run 1000 sleep 9000 run 8000 wake 10 "
                                     "run 12000 sleep 40000 run 199000 exit");
    EXPECT_EQ(wakes_of(task(u, 10)), "");
    EXPECT_EQ(u.causes.implied_replies, 0u);
}

// A selected task's wakings of tasks not selected, in its context or by an interrupt while it
// ran, are steps of its own (wake_absent): the kernel ran select_task_rq_fair() for them, and
// its record_wakee() charged a flip to that task. Not for a per-CPU kernel thread (no
// select_task_rq() for a task allowed on one CPU), nor an RT wakee (not the fair class's), nor
// a waking by the idle task or by a task not selected.
TEST_F(replay_build, wakings_of_tasks_not_replayed)
{
    std::string t = header;
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    t += line("a-10", 0, "d..3.", 1010, waking("memfd:x", 20, 1));     // a's own: a step
    t += line("a-10", 0, "d.h3.", 1020, waking("kworker/0:1", 5, 0));  // bound: none
    t += line("a-10", 0, "d.h3.", 1030, waking("kworker/u8:2", 6, 1)); // unbound: a step
    t += line("a-10", 0, "d.s3.", 1040,
              "sched_waking: comm=irq/24-nvme pid=7 prio=49 target_cpu=000"); // RT: none
    t += line("a-10", 0, "d..2.", 1050, sw("a", 10, "S", "b", 11));
    t += line("b-11", 0, "d..3.", 1060, waking("memfd:x", 20, 1)); // b is not selected
    t += line("b-11", 0, "d..2.", 1070, sw("b", 11, "S", "swapper/0", 0));
    t += line("<idle>-0", 0, "d.h3.", 1080, waking("memfd:x", 20, 1)); // the idle task's
    t += line("<idle>-0", 0, "d.h3.", 1090, waking("a", 10, 0));
    t += line("<idle>-0", 0, "d..2.", 1095, sw("swapper/0", 0, "R", "a", 10));
    t += line("a-10", 0, "d..2.", 1100, sw("a", 10, "S", "swapper/0", 0));
    replay_options o;
    o.comm_regex = "^a$";
    const replay_trace r = load_replay_trace(write("t.txt", t), o);
    EXPECT_EQ(steps_of(task(r, 10)), "run 10000 absent 20 run 20000 absent 6 run 20000 "
                                     "sleep 40000 run 5000");
    EXPECT_EQ(r.causes.absent_wakes, 2u);
    EXPECT_EQ(r.causes.absent_wakes_skipped, 2u);
    auto w = make_replay_workload({path("t.txt"), "--comm", "^a$"});
    EXPECT_THAT(w->report(), HasSubstr("# wakeups of tasks not replayed, by replayed ones (their "
                                       "context or an interrupt while they ran): 2 replayed as "
                                       "the waker's record_wakee() only"));
}

// A switch-in inferred after a task whose switch-out is not recorded (t preempts a at 1011; a
// is next seen at 1060): with t not replayed, a is back at the CPU's previous event (t's
// switch-in), so a's CPU time from 1011 is a's; with t replayed, at the revealing event, as
// before (the two tasks' shares are both replayed).
TEST_F(replay_build, a_switch_in_inferred_after_a_task_not_replayed_is_at_its_earliest)
{
    std::string t = header;
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    t += line("a-10", 0, "dNh3.", 1010, waking("t", 20, 0));
    t += line("a-10", 0, "d..2.", 1011, sw("a", 10, "R", "t", 20));
    t += line("a-10", 0, "d..2.", 1060, sw("a", 10, "S", "swapper/0", 0));
    replay_options o;
    o.comm_regex = "^a$";
    const replay_trace r = load_replay_trace(write("t.txt", t), o);
    EXPECT_EQ(steps_of(task(r, 10)), "run 10000 absent 20 run 50000");
    EXPECT_EQ(r.quirks.inferred_from_task, 1u);
    const replay_trace all = load_replay_trace(write("t.txt", t), {});
    EXPECT_EQ(steps_of(task(all, 10)), "run 11000");
}

// The traced kernel's tick grid, from its softirq-context events (replay_tick_phase()): ten
// softirq wakings of rcu_preempt while a runs, 1.2 ms + 0-27 us past each 4 ms boundary of the
// window (t0 = a's first event, 1000 us), and two elsewhere: the grid is at the cluster's 10th
// percentile event, 1.203 ms, and the workload's ticks fall there. Spread over the tick, the
// same events show no grid: -1, the workload's phase 0 (ticks on multiples of the tick, as
// before). Checked: without the change the workload's phase was 0 in both.
TEST_F(replay_build, the_tick_grid_is_read_from_the_softirq_events)
{
    auto trace = [&](auto phase_of) {
        std::string t = header;
        t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
        for (int k = 0; k < 12; ++k)
            t += line("a-10", 0, "d.s3.", 1000 + phase_of(k), waking("rcu_preempt", 15, 0));
        t += line("a-10", 0, "d..2.", 60000, sw("a", 10, "S", "swapper/0", 0));
        return t;
    };
    const int jitter[] = {0, 3, 5, 8, 11, 14, 17, 20, 24, 27};
    const std::string grid = trace([&](int k) {
        return k < 10 ? 1200 + k * 4000 + jitter[k] : (k == 10 ? 2500 + 40000 : 3100 + 44000);
    });
    replay_options o;
    o.comm_regex = "^a$";
    const replay_trace r = load_replay_trace(write("grid.txt", grid), o);
    EXPECT_EQ(r.softirq_events.size(), 12u);
    EXPECT_EQ(replay_tick_phase(r, 4'000'000), 1'203'000);
    const auto w = make_workload({"replay", path("grid.txt"), "--comm", "^a$"});
    EXPECT_EQ(w->tick_phase_ns(4'000'000), 1'203'000u);

    const std::string spread = trace([](int k) { return 100 + k * 4330; });
    EXPECT_EQ(replay_tick_phase(load_replay_trace(write("spread.txt", spread), o), 4'000'000), -1);
    EXPECT_EQ(
        make_workload({"replay", path("spread.txt"), "--comm", "^a$"})->tick_phase_ns(4'000'000),
        0u);
}

// Wakeup targets from a trace (trace/wakeup_target.h), by hand: the waking's CPU (the
// event's), the wakee's previous CPU (target_cpu) and its next switch in; a softirq, the idle
// task and a task not selected (the kworker) are not a traced waker.
TEST_F(replay_build, wakeup_targets_by_hand)
{
    std::string t = header;
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    t += line("b-11", 1, "d..2.", 1000, sw("b", 11, "S", "swapper/1", 0));
    t += line("a-10", 0, "d..3.", 1010, waking("b", 11, 1));         // a wakes b (prev cpu1)
    t += line("a-10", 0, "d..2.", 1020, sw("a", 10, "R+", "b", 11)); // on cpu0: the waker's
    t += line("b-11", 0, "d..2.", 1030, sw("b", 11, "S", "a", 10));
    t += line("<idle>-0", 1, "d.s3.", 1040, waking("b", 11, 0));               // softirq on cpu1
    t += line("<idle>-0", 1, "d..2.", 1050, sw("swapper/1", 0, "R", "b", 11)); // the waker's
    t += line("b-11", 1, "d..2.", 1060, sw("b", 11, "S", "kworker/1:1", 5));
    t += line("kworker/1:1-5", 1, "d..3.", 1070, waking("b", 11, 1)); // untraced, on prev
    t += line("kworker/1:1-5", 1, "d..2.", 1080, sw("kworker/1:1", 5, "I", "b", 11)); // both
    t += line("a-10", 0, "d..3.", 1090, waking("b", 11, 1)); // b in __schedule() on cpu1:
    t += line("b-11", 1, "d..2.", 1091, sw("b", 11, "S", "swapper/1", 0)); // ends this block
    t += line("a-10", 0, "d..2.", 1100, sw("a", 10, "R+", "b", 11));       // on cpu0: the waker's
    t += line("b-11", 0, "d..2.", 1110, sw("b", 11, "S", "a", 10));
    t += line("a-10", 0, "d..3.", 1120, waking("b", 11, 0)); // b never runs again: not run
    t += line("a-10", 0, "d..2.", 1200, sw("a", 10, "R", "swapper/0", 0));
    const replay_trace r = load_replay_trace(write("t.txt", t), {});
    const wakeup_target_counts& w = r.summary.wakeup_targets;
    const auto task = static_cast<int>(waker_kind::task),
               other = static_cast<int>(waker_kind::other);
    const auto at = [](wakeup_target k) { return static_cast<int>(k); };
    EXPECT_EQ(w.placed[task][at(wakeup_target::waker)], 2u);  // 1010, 1090
    EXPECT_EQ(w.placed[other][at(wakeup_target::waker)], 1u); // 1040 (softirq)
    EXPECT_EQ(w.placed[other][at(wakeup_target::both)], 1u);  // 1070 (kworker)
    EXPECT_EQ(w.of(wakeup_target::prev) + w.of(wakeup_target::other), 0u);
    EXPECT_EQ(w.not_placed, 0u);
    EXPECT_EQ(w.not_run, 1u); // 1120
    EXPECT_EQ(r.sched_waking_events, 5u);
    EXPECT_THAT(r.warnings, Not(::testing::Contains(HasSubstr("no sched_waking"))));
}

// A trace recorded without sched_waking: its blocks have no cause, and the trace's wakeup
// targets cannot be told; the replay says so (a note, and a WARNING line in its report).
TEST_F(replay_build, a_trace_without_sched_waking_is_reported)
{
    std::string t = header;
    t += line("a-10", 0, "d..2.", 1000, sw("a", 10, "S", "swapper/0", 0));
    t += line("<idle>-0", 0, "dNh3.", 1010, "sched_wakeup: comm=a pid=10 prio=120 target_cpu=000");
    t += line("<idle>-0", 0, "d..2.", 1020, sw("swapper/0", 0, "R", "a", 10));
    t += line("a-10", 0, "d..2.", 1030, sw("a", 10, "S", "swapper/0", 0));
    const replay_trace r = load_replay_trace(write("t.txt", t), {});
    EXPECT_EQ(r.sched_waking_events, 0u);
    EXPECT_EQ(r.causes.unknown, 1u);
    EXPECT_THAT(r.warnings, ::testing::Contains(HasSubstr("the trace has no sched_waking events")));
    auto w = make_replay_workload({write("t.txt", t)});
    EXPECT_THAT(w->report(), HasSubstr("# WARNING: the trace has no sched_waking events"));
}

TEST_F(replay_build, fork_exit_and_selection)
{
    std::string t = header;
    t += line("sh-20", 0, ".....", 2000,
              "sched_process_fork: comm=sh pid=20 child_comm=sh child_pid=21");
    t +=
        line("sh-20", 0, "d..2.", 2001, "sched_wakeup_new: comm=sh pid=21 prio=120 target_cpu=001");
    t += line("sh-20", 0, "d..2.", 2002, sw("sh", 20, "S", "swapper/0", 0));
    t += line("<idle>-0", 1, "d..2.", 2003, sw("swapper/1", 0, "R", "sh", 21));
    t += line("sh-21", 1, ".....", 2010,
              "sched_process_fork: comm=app pid=21 child_comm=app child_pid=22");
    t += line("app-21", 1, ".....", 2020,
              "sched_process_exit: comm=app pid=21 prio=120 group_dead=1");
    t += line("app-21", 1, "d..3.", 2022, waking("sh", 20, 0));
    t += line("app-21", 1, "d..2.", 2025, sw("app", 21, "X", "app", 22));
    t += line("app-22", 1, "d..2.", 2050, sw("app", 22, "R", "swapper/1", 0));
    const std::string p = write("t.txt", t);
    const replay_trace all = load_replay_trace(p, {});
    ASSERT_EQ(all.tasks.size(), 3u);
    EXPECT_EQ(steps_of(task(all, 20)), "fork 21 run 2000 wait 21:1");
    EXPECT_EQ(steps_of(task(all, 21)), "run 7000 fork 22 run 12000 wake 20 run 3000 exit");
    EXPECT_EQ(task(all, 21).parent, 20);
    EXPECT_EQ(steps_of(task(all, 22)), "run 25000");
    EXPECT_EQ(task(all, 22).parent, 21);

    // --comm app: task 21 was "sh" before its exec; any of its comms selects it. Its parent
    // is not selected, so it is a root starting at its fork.
    replay_options o;
    o.comm_regex = "^app$";
    const replay_trace apps = load_replay_trace(p, o);
    ASSERT_EQ(apps.tasks.size(), 2u);
    EXPECT_EQ(task(apps, 21).parent, -1);
    EXPECT_EQ(task(apps, 21).start, 0); // the window opens at its fork
    // Its waking of sh (not selected) is a wake_absent step.
    EXPECT_EQ(steps_of(task(apps, 21)), "run 7000 fork 22 run 12000 absent 20 run 3000 exit");
    EXPECT_EQ(apps.t0, 2'000'000);

    o.comm_regex = "nothing";
    try {
        load_replay_trace(p, o);
        ADD_FAILURE() << "no error";
    } catch (const config_error& e) {
        EXPECT_EQ(e.where(), "--comm");
        EXPECT_THAT(e.what(), HasSubstr("its tasks include app, sh"));
    }
    o.comm_regex = "(";
    EXPECT_THROW(load_replay_trace(p, o), config_error);
}

// Nice from the traced prio (120 + nice); RT prios and prio changes are reported, not guessed.
TEST_F(replay_build, nice_from_the_traced_prio)
{
    std::string t = header;
    t += line("n-30", 0, "d..2.", 4000, swp("n", 30, 130, "S", "rt", 31, 49));
    t += line("rt-31", 0, "d..2.", 4010, swp("rt", 31, 49, "S", "m", 32, 125));
    t += line("m-32", 0, "d..2.", 4020, swp("m", 32, 115, "S", "swapper/0", 0, 120));
    const std::string p = write("t.txt", t);
    const replay_trace r = load_replay_trace(p, {});
    EXPECT_EQ(task(r, 30).prio, 130);
    EXPECT_EQ(replay_nice(task(r, 30)), 10);
    EXPECT_EQ(task(r, 31).prio, 49);
    EXPECT_EQ(replay_nice(task(r, 31)), 0);
    EXPECT_EQ(task(r, 32).prio, 125); // the first seen
    EXPECT_TRUE(task(r, 32).prio_changed);
    std::string notes;
    for (const std::string& w : r.warnings)
        notes += w + "\n";
    EXPECT_THAT(notes, HasSubstr("2 tasks replay at the nice their traced prio gives"));
    EXPECT_THAT(notes, HasSubstr("1 tasks ran at an RT prio (0-98); they replay as SCHED_FIFO "
                                 "tasks at rt_priority 99 - prio"));
    EXPECT_THAT(notes, HasSubstr("1 tasks changed prio during the trace"));

    for (const bool rr : {false, true}) {
        SCOPED_TRACE(rr ? "--rt-policy rr" : "default");
        test_env env(2, 1, "6.6");
        std::vector<std::string> args = {p};
        if (rr)
            args.insert(args.end(), {"--rt-policy", "rr"});
        auto w = make_replay_workload(args);
        EXPECT_EQ(w->command_line().ends_with(" --rt-policy rr"), rr);
        w->setup(env.k.sys());
        std::map<std::string, const task_struct*> by_comm;
        for (const auto& task : env.k.tasks())
            by_comm[task->comm] = task.get();
        ASSERT_EQ(by_comm.size(), 3u);
        EXPECT_EQ(by_comm["n"]->task_nice(), 10);
        EXPECT_EQ(by_comm["n"]->policy, SCHED_NORMAL);
        EXPECT_EQ(by_comm["rt"]->policy, rr ? SCHED_RR : SCHED_FIFO);
        EXPECT_EQ(by_comm["rt"]->rt_priority, 50); // prio 49 = 99 - rt_priority
        EXPECT_EQ(by_comm["rt"]->prio, 49);
        EXPECT_EQ(by_comm["rt"]->task_nice(), 0);
        EXPECT_EQ(by_comm["m"]->task_nice(), 5);
    }
    try {
        make_replay_workload({p, "--rt-policy", "deadline"});
        ADD_FAILURE() << "no error";
    } catch (const config_error& e) {
        EXPECT_EQ(e.where(), "--rt-policy");
    }
}

// A SCHED_DEADLINE task prints prio -1 (MAX_DL_PRIO - 1); no tracepoint carries its runtime,
// deadline or period, so it replays as a nice-0 fair task, and the report says so loudly. An
// event without a prio field (sched_process_fork) is not a prio of -1.
TEST_F(replay_build, deadline_prio_is_reported_not_replayed)
{
    std::string t = header;
    t += line("dl-40", 0, "d..2.", 4000, swp("dl", 40, -1, "S", "n", 41, 120));
    t += line("n-41", 0, ".....", 4005,
              "sched_process_fork: comm=n pid=41 child_comm=c child_pid=42");
    t += line("n-41", 0, "d..2.", 4010, swp("n", 41, 120, "S", "swapper/0", 0, 120));
    const std::string p = write("t.txt", t);
    const replay_trace r = load_replay_trace(p, {});
    EXPECT_EQ(task(r, 40).prio, -1);
    EXPECT_EQ(task(r, 42).prio, ftrace_no_prio); // only its fork names it
    EXPECT_EQ(r.deadline_tasks, 1u);
    EXPECT_EQ(replay_sched_of(task(r, 40), {}), replay_sched{});
    std::string notes;
    for (const std::string& w : r.warnings)
        notes += w + "\n";
    EXPECT_THAT(notes, HasSubstr("WARNING: 1 tasks ran at a deadline prio (-1, SCHED_DEADLINE)"));
    EXPECT_THAT(notes, ::testing::Not(HasSubstr("prio 99")));
    EXPECT_THAT(make_replay_workload({p})->report(),
                HasSubstr("# WARNING: 1 SCHED_DEADLINE tasks (traced prio -1) replayed as nice-0 "
                          "SCHED_NORMAL tasks"));
}

// A deadline task's prio (-1) is not an RT one: reported, replayed as a nice-0 fair task.
TEST_F(replay_build, a_deadline_prio_is_reported)
{
    std::string t = header;
    t += line("dl-40", 0, "d..2.", 4000,
              "sched_switch: prev_comm=dl prev_pid=40 prev_prio=-1 prev_state=S ==> "
              "next_comm=swapper/0 next_pid=0 next_prio=120");
    t += line("<idle>-0", 0, "dNh2.", 4100, "sched_waking: comm=dl pid=40 prio=-1 target_cpu=000");
    const replay_trace r = load_replay_trace(write("t.txt", t), {});
    EXPECT_EQ(task(r, 40).prio, -1);
    EXPECT_EQ(replay_sched_of(task(r, 40), {}), replay_sched{});
    std::string notes;
    for (const std::string& w : r.warnings)
        notes += w + "\n";
    EXPECT_THAT(notes, HasSubstr("WARNING: 1 tasks ran at a deadline prio (-1, SCHED_DEADLINE)"));
}

TEST_F(replay_build, options)
{
    EXPECT_THROW(make_replay_workload({}), config_error);
    EXPECT_THROW(make_replay_workload({"a", "b"}), config_error);
    try {
        make_replay_workload({traces_dir + "schbench_m1_t2_r3.trace.txt.xz", "--speed", "0"});
        ADD_FAILURE() << "no error";
    } catch (const config_error& e) {
        EXPECT_EQ(e.where(), "--speed");
    }
    EXPECT_THROW(make_replay_workload({traces_dir + "schbench_m1_t2_r3.trace.txt.xz", "--bogus"}),
                 config_error);
    EXPECT_THAT(make_replay_workload({traces_dir + "schbench_m1_t2_r3.trace.txt.xz", "--sync-wakes",
                                      "--deps", "edge", "--bursts", "gross", "--softirq-wakes"})
                    ->command_line(),
                HasSubstr("--bursts gross --deps edge --sync-wakes --softirq-wakes"));
    // --deps flow is the default and not printed; count is.
    EXPECT_THAT(
        make_replay_workload({traces_dir + "schbench_m1_t2_r3.trace.txt.xz", "--deps", "flow"})
            ->command_line(),
        Not(HasSubstr("--deps")));
    EXPECT_THAT(
        make_replay_workload({traces_dir + "schbench_m1_t2_r3.trace.txt.xz", "--deps", "count"})
            ->command_line(),
        HasSubstr("--deps count"));
    EXPECT_THAT(
        make_replay_workload({traces_dir + "schbench_m1_t2_r3.trace.txt.xz", "--deps", "reply"})
            ->command_line(),
        HasSubstr("--deps reply"));
    for (const char* opt : {"--bursts", "--deps"})
        try {
            make_replay_workload({traces_dir + "schbench_m1_t2_r3.trace.txt.xz", opt, "both"});
            ADD_FAILURE() << opt << ": no error";
        } catch (const config_error& e) {
            EXPECT_EQ(e.where(), opt);
            if (std::string(opt) == "--deps") {
                EXPECT_THAT(e.what(), HasSubstr("'both' is not flow, reply, count, edge or keep"));
            }
        }
}

/*
 * The shared traces (data/traces): every wait of a rebuilt task can be satisfied (as many
 * wake steps of its waker target it as its highest wait on that waker asks for, and the waits
 * on one waker count up by one), so a replay cannot deadlock; and the
 * causes are those of each benchmark's code: the pipe ping-pong's blocks are ended by the
 * other task, schbench's workers sleep in usleep() (hrtimer wakeups in hardirq context).
 */
TEST(replay_shared, waits_are_satisfiable_and_causes_fit_the_benchmarks)
{
    const char* files[] = {"perf_messaging_g1_l200.trace.txt.xz",
                           "perf_messaging_g4_pipe_l100.trace.txt.xz",
                           "perf_pipe_l50000.trace.txt.xz",
                           "schbench_m1_t2_r3.trace.txt.xz",
                           "tracecmd_perf_messaging_g2_l100.report.txt.xz",
                           "perf_sched_pipe_l1000.perf-script.txt.xz"};
    for (const char* f : files) {
        SCOPED_TRACE(f);
        const replay_trace r = load_replay_trace(traces_dir + f, {});
        std::map<std::pair<int, int>, u64> wakes, max_wait; // (waker, wakee)
        // (requester, replier): each request has its one reply, and no reply is without one.
        std::map<std::pair<int, int>, u64> requests, replies;
        for (const replay_task& t : r.tasks) {
            const std::vector<replay_step> steps = t.steps.decode();
            for (const replay_step& st : steps) {
                EXPECT_NE(st.kind, replay_step::pending);
                if (st.kind == replay_step::wake)
                    ++wakes[{t.pid, st.pid}];
                EXPECT_TRUE(st.kind == replay_step::wake || st.flags == 0);
                if (st.flags & replay_step::request)
                    ++requests[{t.pid, st.pid}];
                if (st.flags & replay_step::reply)
                    ++replies[{st.pid, t.pid}];
                if (st.kind == replay_step::wait) {
                    u64& m = max_wait[{st.pid, t.pid}];
                    EXPECT_EQ(st.k, m + 1) << "task " << t.pid << " waits for " << st.pid;
                    m = st.k;
                }
            }
        }
        for (const auto& [edge, k] : max_wait)
            EXPECT_EQ(wakes[edge], k) << "edge " << edge.first << "->" << edge.second;
        u64 nr_wakes = 0;
        for (const auto& [pid, n] : wakes)
            nr_wakes += n;
        EXPECT_EQ(nr_wakes, r.causes.dependency + r.causes.implied_replies);
        EXPECT_EQ(requests, replies);
        u64 nr_replies = 0;
        for (const auto& [pair, n] : replies)
            nr_replies += n;
        EXPECT_EQ(nr_replies, r.causes.replies);
        // Blocks with no waking recorded before the task ran again: at most 1 in 1000 (once
        // wakings recorded just before the switch out count; 1 of 2229 in schbench's).
        EXPECT_LE(r.causes.unknown * 1000,
                  r.causes.dependency + r.causes.timer + r.causes.external + r.causes.unknown);
    }
    const replay_trace pipe =
        load_replay_trace(traces_dir + "perf_pipe_l50000.trace.txt.xz", {"^sched-pipe$", 1.0});
    EXPECT_GE(pipe.causes.dependency, 99'900u); // 2 tasks x 50000 loops
    EXPECT_LE(pipe.causes.timer + pipe.causes.external, 10u);
    const replay_trace sb =
        load_replay_trace(traces_dir + "schbench_m1_t2_r3.trace.txt.xz", {"^schbench", 1.0});
    EXPECT_GT(sb.causes.timer, 800u);
    EXPECT_GT(sb.causes.dependency, 800u);
}

/*
 * The round trip: a simulated run written by the ftrace exporter and read back. The trace's
 * statistics must be the run's own (its sched_summary): the counts exactly, the latencies to
 * the microsecond the text keeps. No switch-in is inferred (the exporter records them all).
 */
class replay_round_trip : public scratch_dir {
protected:
    /// Runs the benchmark `argv` on 2 CPUs (6.6, `seed`), writes its trace to `file` (in the
    /// scratch directory) and returns the run's statistics; `nr_tasks` gets its task count.
    sched_summary_result record(const std::vector<std::string>& argv, u64 seed,
                                const std::string& file, std::size_t* nr_tasks = nullptr)
    {
        test_env env(2, seed, "6.6");
        auto w = make_workload(argv);
        ftrace_exporter out;
        sched_summary summary(2);
        env.k.add_sink(&out);
        env.k.add_sink(&summary);
        w->setup(env.k.sys());
        env.k.run(secs(30));
        EXPECT_TRUE(w->finished());
        out.write_file(path(file), 2);
        if (nr_tasks)
            *nr_tasks = env.k.tasks().size();
        return summary.finish(env.sim.now());
    }

    /// Replays `trace` (the tasks `comm` selects) with `--deps deps` on `nr_cpus` CPUs (6.6,
    /// seed 1) for up to a second: each option's statistics and report, by its name.
    void replay_each(const std::string& trace, const std::string& comm, int nr_cpus,
                     std::initializer_list<const char*> deps,
                     std::map<std::string, sched_summary_result>& replayed,
                     std::map<std::string, std::string>& reports)
    {
        for (const char* d : deps) {
            test_env env(nr_cpus, 1, "6.6");
            sched_summary summary(nr_cpus);
            env.k.add_sink(&summary);
            auto w = make_replay_workload({trace, "--comm", comm, "--deps", d});
            w->setup(env.k.sys());
            env.k.run(secs(1));
            EXPECT_TRUE(w->finished()) << d;
            replayed[d] = summary.finish(env.sim.now());
            reports[d] = w->report();
        }
    }
};

TEST_F(replay_round_trip, the_trace_statistics_are_the_runs_own)
{
    std::size_t nr_tasks = 0;
    const sched_summary_result run = record(
        {"perf", "bench", "sched", "messaging", "-g", "1", "-l", "20"}, 3, "run.txt", &nr_tasks);
    const std::string p = path("run.txt");

    const replay_trace t = load_replay_trace(p, {});
    EXPECT_EQ(t.quirks.total_inferred(), 0u);
    EXPECT_EQ(t.summary.voluntary, run.voluntary);
    EXPECT_EQ(t.summary.involuntary, run.involuntary);
    EXPECT_EQ(t.summary.wakeups, run.wakeups);
    EXPECT_EQ(t.summary.migrations, run.migrations);
    // The wakeup targets: the same code on the trace's events as on the run's.
    EXPECT_EQ(t.summary.wakeup_targets, run.wakeup_targets);
    EXPECT_GT(run.wakeup_targets.placed_by(waker_kind::task), 0u);
    EXPECT_EQ(t.summary.wakeup_latency.count(), run.wakeup_latency.count());
    EXPECT_NEAR(static_cast<double>(t.summary.wakeup_latency.percentile(99)),
                static_cast<double>(run.wakeup_latency.percentile(99)),
                1000 + 0.01 * static_cast<double>(run.wakeup_latency.percentile(99)));
    EXPECT_EQ(t.tasks.size(), nr_tasks);
    EXPECT_EQ(t.causes.unknown, 0u);
    // Busy time, to the text's microseconds (within 0.1%: 0.4 and 3.4 us of 17 and 15 ms).
    for (std::size_t cpu = 0; cpu < 2; ++cpu)
        EXPECT_NEAR(static_cast<double>(t.summary.busy.at(cpu)),
                    static_cast<double>(run.busy.at(cpu)),
                    0.001 * static_cast<double>(run.busy.at(cpu)))
            << "cpu " << cpu;
}

/*
 * --bursts net: a simulated pipe ping-pong recorded and replayed on the same machine and
 * costs. Each recorded burst holds the kernel work the simulation charged (the switch into
 * the task, the wakeup of its partner); a net replay subtracts what it charges again, so its
 * CPU time is the recording's (to the jitter of the charged costs and the text's
 * microseconds), while a gross replay charges that work twice: each task's recorded burst
 * per round trip is a write (1 us), a read (0.9 us), the switch into it (1.2 us) and the
 * wakeup of its partner (0.6 us; the partner's CPU is idle and polls: no IPI), 3.7 us, of
 * which the gross replay charges 1.8 us again: 1.486 times the recorded CPU time.
 */
TEST_F(replay_round_trip, net_bursts_keep_the_recorded_cpu_time)
{
    const auto busy = [](const sched_summary_result& r) {
        sim_dur b = 0;
        for (const sim_dur x : r.busy)
            b += x;
        return static_cast<double>(b);
    };
    const double recorded_busy =
        busy(record({"perf", "bench", "sched", "pipe", "-l", "2000"}, 1, "pipe.txt"));
    const std::string p = path("pipe.txt");

    std::map<std::string, double> replayed;
    for (const char* mode : {"net", "gross"}) {
        test_env env(2, 1, "6.6");
        sched_summary summary(2);
        env.k.add_sink(&summary);
        auto r = make_replay_workload({p, "--bursts", mode});
        r->setup(env.k.sys());
        env.k.run(secs(30));
        ASSERT_TRUE(r->finished()) << mode;
        replayed[mode] = busy(summary.finish(env.sim.now()));
    }
    EXPECT_NEAR(replayed["net"] / recorded_busy, 1.0, 0.03);
    EXPECT_NEAR(replayed["gross"] / recorded_busy, 1.0 + 1800.0 / 3700.0, 0.03);
}

/*
 * --bursts net and the exit: a traced task's last burst holds its exit's work (atexit
 * handlers, library destructors, do_exit()), which the simulation charges again at the
 * exit (cpu_charges::exit_cost(): `exit`, 20 us by default, for a process). Task a runs
 * 100 us and exits, b runs 30 us, wakes its parent-less peer c (which had blocked), runs
 * 20 us more and exits: a's and b's runs give up the exit cost (a: 100 -> 80 us; b: the
 * exit work is taken from the 30 us before the wake first, then from the 20 us after it),
 * so each task's CPU time is the traced 100 and 50 us (and the switch into it, which the
 * first run gives up likewise). c blocks for good: it is alive at the end of the trace, and
 * its run keeps its 40 us. Before, a and b each ran the exit's 20 us twice.
 */
TEST_F(replay_round_trip, net_bursts_take_the_exit_out_of_the_last_runs)
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 1/1   #P:3\n";
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "b", 11));
    t += line("<idle>-0", 2, "d..2.", 1000, sw("swapper/2", 0, "R", "c", 12));
    t += line("c-12", 2, "d..2.", 1010, sw("c", 12, "S", "swapper/2", 0));
    t += line("b-11", 1, "d..2.", 1030, "sched_waking: comm=c pid=12 prio=120 target_cpu=002");
    t += line("<idle>-0", 2, "d..2.", 1035, sw("swapper/2", 0, "R", "c", 12));
    t += line("b-11", 1, "d..2.", 1050, "sched_process_exit: comm=b pid=11 prio=120 group_dead=1");
    t += line("b-11", 1, "d..2.", 1050, sw("b", 11, "X", "swapper/1", 0));
    t += line("c-12", 2, "d..2.", 1065, sw("c", 12, "S", "swapper/2", 0));
    t += line("a-10", 0, "d..2.", 1100, "sched_process_exit: comm=a pid=10 prio=120 group_dead=1");
    t += line("a-10", 0, "d..2.", 1100, sw("a", 10, "X", "swapper/0", 0));
    const std::string p = write("t.txt", t);
    const replay_trace r = load_replay_trace(p, {});
    EXPECT_EQ(steps_of(task(r, 10)), "run 100000 exit");
    EXPECT_EQ(steps_of(task(r, 11)), "run 30000 wake 12 run 20000 exit");
    EXPECT_EQ(steps_of(task(r, 12)), "run 10000 wait 11:1 run 30000");

    std::map<std::string, std::map<int, sim_dur>> cpu_time;
    for (const char* mode : {"net", "gross"}) {
        test_env env(3, 1, "6.6");
        auto w = make_replay_workload({p, "--bursts", mode});
        w->setup(env.k.sys());
        env.k.run(secs(1));
        ASSERT_TRUE(w->finished()) << mode;
        for (const auto& task : env.k.tasks())
            if (task->pid > 0)
                cpu_time[mode][task->comm == "a" ? 10 : task->comm == "b" ? 11 : 12] =
                    static_cast<sim_dur>(task->se.sum_exec_runtime);
    }
    const sim_dur exit = test_env(3, 1, "6.6").k.charges().params().exit;
    ASSERT_EQ(exit, 20000);
    EXPECT_NEAR(cpu_time["net"][10], 100000, 1500) << "the traced 100 us, exit included";
    EXPECT_NEAR(cpu_time["net"][11], 50000, 1500);
    EXPECT_NEAR(cpu_time["gross"][10], 100000 + exit, 3000) << "the exit charged on top";
    EXPECT_NEAR(cpu_time["gross"][11], 50000 + exit, 3000);
    EXPECT_NEAR(cpu_time["net"][12], cpu_time["gross"][12] - 1200, 1500)
        << "no exit to take out of c's runs: net gives up only the switch";
}

/*
 * --bursts net and a wake's own charges: the traced burst from b's waking of c to b's block
 * holds the kernel's whole try_to_wake_up() (the IPI send among it); the simulation charges
 * its own model of that work to b at the wake (here ipi_send, 8 us: c's CPU is idle and halts,
 * cstate_polls 0, so the wake-list IPI is sent; and `wakeup`), owed to b's next burst, and
 * the net replay takes it out of that burst, the one from the waking to the block: b blocks
 * 10 us after its waking, as traced. Before, the owed charges were taken out only once spent
 * (task_runtime()), from the burst after the block, and b blocked 10 + 8.6 us after its
 * waking: late for a wakee's wake back (schbench's hand-offs on host-amd-calibrated.json,
 * docs/replay.md). --bursts gross runs the 10 us after the charges.
 */
TEST_F(replay_round_trip, net_bursts_take_a_wakes_charges_out_of_the_burst_after_it)
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 1/1   #P:2\n";
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "c", 12));
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "b", 11));
    t += line("c-12", 0, "d..2.", 1010, sw("c", 12, "S", "swapper/0", 0));
    t += line("b-11", 1, "d..2.", 1030, waking("c", 12, 0));
    t += line("<idle>-0", 0, "d..2.", 1035, sw("swapper/0", 0, "R", "c", 12));
    t += line("b-11", 1, "d..2.", 1040, sw("b", 11, "S", "swapper/1", 0));
    t += line("c-12", 0, "d..2.", 1065, waking("b", 11, 1));
    t += line("<idle>-0", 1, "d..2.", 1070, sw("swapper/1", 0, "R", "b", 11));
    t += line("c-12", 0, "d..2.", 1080, sw("c", 12, "S", "swapper/0", 0));
    t += line("b-11", 1, "d..2.", 1100, "sched_process_exit: comm=b pid=11 prio=120 group_dead=1");
    t += line("b-11", 1, "d..2.", 1100, sw("b", 11, "X", "swapper/1", 0));
    const std::string p = write("t.txt", t);
    const replay_trace r = load_replay_trace(p, {});
    EXPECT_EQ(steps_of(task(r, 11)), "run 30000 wake 12 run 10000 wait 12:1 run 30000 exit");
    EXPECT_EQ(steps_of(task(r, 12)), "run 10000 wait 11:1 run 30000 wake 11 run 15000");

    // b's waking of c and b's first block, in the replay.
    struct waking_to_block : trace_sink {
        sim_time waking = -1, block = -1;
        void sched_waking(const trace_sched_wakeup& e) override
        {
            if (*e.comm == "c" && waking < 0)
                waking = e.ts;
        }
        void sched_switch(const trace_sched_switch& e) override
        {
            if (*e.prev_comm == "b" && e.prev_state == trace_task_state::S && block < 0)
                block = e.ts;
        }
    };
    cost_params costs;
    costs.jitter_pct = 0;
    costs.cstate_polls = 0;
    costs.ipi_send = 8000;
    std::map<std::string, sim_dur> interval;
    for (const char* mode : {"net", "gross"}) {
        test_env env(2, 1, "6.18", costs);
        waking_to_block sink;
        env.k.add_sink(&sink);

        auto w = make_replay_workload({p, "--bursts", mode});
        w->setup(env.k.sys());
        env.k.run(secs(1));
        ASSERT_TRUE(w->finished()) << mode;

        ASSERT_GE(sink.waking, 0) << mode;
        ASSERT_GT(sink.block, sink.waking) << mode;
        interval[mode] = sink.block - sink.waking;
    }
    const sim_dur charged = costs.ipi_send + costs.wakeup; // 8.6 us
    EXPECT_NEAR(interval["net"], 10000, 500) << "the traced 10 us, the wake's charges in it";
    EXPECT_NEAR(interval["gross"], 10000 + charged, 500) << "the charges, then the traced 10 us";
}

/*
 * Policy and prio through a replay and back: a hand-made trace of a nice-5 task (prio 125)
 * and an RT task (prio 49: SCHED_FIFO at rt_priority 50) that forks a child; the replay's
 * own trace, as text and as a trace-cmd .dat, prints each task's p->prio as the kernel's
 * tracepoints do, and reading it back gives the traced prios again. The RT task preempts
 * the fair one the moment its timer wakes it (the fair task is switched out R+).
 */
TEST_F(replay_round_trip, policy_and_prio_from_the_trace_and_back)
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 1/1   #P:1\n";
    t += line("n-30", 0, "d..2.", 1000, swp("n", 30, 125, "R+", "rt", 31, 49));
    t += line("rt-31", 0, "d..2.", 1010, swp("rt", 31, 49, "S", "n", 30, 125));
    t += line("n-30", 0, "d.h2.", 1100, "sched_waking: comm=rt pid=31 prio=49 target_cpu=000");
    t += line("n-30", 0, "d..2.", 1101, swp("n", 30, 125, "R+", "rt", 31, 49));
    t += line("rt-31", 0, ".....", 1105,
              "sched_process_fork: comm=rt pid=31 child_comm=rt pid=32 child_pid=32");
    t += line("rt-31", 0, "d..2.", 1120, swp("rt", 31, 49, "S", "n", 30, 125));
    t += line("n-30", 0, "d..2.", 1300, swp("n", 30, 125, "R+", "rt", 32, 49));
    t += line("rt-32", 0, "d..2.", 1310, swp("rt", 32, 49, "S", "n", 30, 125));
    t += line("n-30", 0, "d..2.", 1400, swp("n", 30, 125, "S", "swapper/0", 0, 120));
    const std::string p = write("t.txt", t);

    test_env env(1, 1, "6.6");
    auto w = make_replay_workload({p});
    ftrace_exporter out;
    env.k.add_sink(&out);
    w->setup(env.k.sys());
    env.k.run(secs(1));
    ASSERT_TRUE(w->finished());
    for (const auto& task : env.k.tasks())
        if (task->comm == "rt") { // the root and its forked child
            EXPECT_EQ(task->policy, SCHED_FIFO) << task->pid;
            EXPECT_EQ(task->rt_priority, 50) << task->pid;
        }
    for (const char* file : {"replayed.txt", "replayed.dat"}) {
        SCOPED_TRACE(file);
        out.write_file(path(file), 1);
        const replay_trace back = load_replay_trace(path(file), {});
        std::map<std::string, std::set<int>> prios;
        for (const replay_task& rt : back.tasks) {
            prios[rt.comm].insert(rt.prio);
            EXPECT_FALSE(rt.prio_changed) << rt.comm;
        }
        EXPECT_EQ(prios["n"], std::set<int>{125});
        EXPECT_EQ(prios["rt"], std::set<int>{49});
        // The timer wakeup of the RT task preempts the fair one.
        EXPECT_GE(back.summary.involuntary, 1u);
    }
    std::ostringstream text;
    out.write(text, 1);
    EXPECT_THAT(text.str(), HasSubstr("prev_comm=n prev_pid=1 prev_prio=125 prev_state=R+ ==> "
                                      "next_comm=rt next_pid=2 next_prio=49"));
}

/*
 * A wake that reaches its wakee before the wakee's wait: b wakes a after 16 us of b's CPU
 * time (b was preempted by c, not selected, from 10 to 95 us), a blocked after 100 us of
 * its own. With both tasks on their own CPUs from the start, the replayed b reaches its wake
 * at about 16 us, long before a reaches its wait at about 100 us: --deps count passes a
 * through its wait without a switch (the traced block and its waking are lost), --deps keep
 * sleeps it anyway (1 ns) and has one voluntary switch and one wakeup more.
 */
TEST_F(replay_round_trip, a_wake_before_its_wait_is_lost_unless_kept)
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 1/1   #P:2\n";
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "b", 11));
    t += line("b-11", 1, "d..2.", 1010, sw("b", 11, "R", "c", 12));
    t += line("c-12", 1, "d..2.", 1095, sw("c", 12, "S", "b", 11));
    t += line("a-10", 0, "d..2.", 1100, sw("a", 10, "S", "swapper/0", 0));
    t += line("b-11", 1, "d..2.", 1101, "sched_waking: comm=a pid=10 prio=120 target_cpu=000");
    t += line("<idle>-0", 0, "d..2.", 1104, sw("swapper/0", 0, "R", "a", 10));
    t += line("a-10", 0, "d..2.", 1200, "sched_process_exit: comm=a pid=10 prio=120 group_dead=1");
    t += line("a-10", 0, "d..2.", 1200, sw("a", 10, "X", "swapper/0", 0));
    t += line("b-11", 1, "d..2.", 1200, "sched_process_exit: comm=b pid=11 prio=120 group_dead=1");
    t += line("b-11", 1, "d..2.", 1200, sw("b", 11, "X", "swapper/1", 0));
    write("t.txt", t);
    const std::string p = path("t.txt");
    replay_options o;
    o.comm_regex = "^(a|b)$";
    const replay_trace r = load_replay_trace(p, o);
    EXPECT_EQ(steps_of(task(r, 10)), "run 100000 wait 11:1 run 96000 exit");
    EXPECT_EQ(steps_of(task(r, 11)), "run 16000 wake 10 run 99000 exit");

    std::map<std::string, sched_summary_result> replayed;
    std::map<std::string, std::string> reports;
    replay_each(p, "^(a|b)$", 2, {"count", "keep"}, replayed, reports);
    EXPECT_THAT(reports["keep"], HasSubstr("# dependency waits: 0 slept until their wake, 1 "
                                           "found it already there (its waker ran ahead; 0 "
                                           "found more wakes than that one); --deps keep: "
                                           "those slept 1 ns"));
    EXPECT_THAT(reports["count"], HasSubstr("1 found it already there (its waker ran ahead; 0 "
                                            "found more wakes than that one): the traced "
                                            "block is lost"));
    EXPECT_EQ(replayed["count"].voluntary, 2u); // the two exits
    EXPECT_EQ(replayed["keep"].voluntary, 3u);  // and a's block
    EXPECT_EQ(replayed["keep"].wakeups, replayed["count"].wakeups + 1);
}

/*
 * The wakee flips of tasks the replay does not run (wake_absent). a (CPU 0) and b (CPU 1) run
 * for 400 ms (b sleeps 299-302 ms); m last ran on CPU 1 at 301 ms, for 10 us after a 300 ms
 * sleep, on the idle CPU, so its load as of that dequeue, which task_h_load() reads, is about 2
 * (a new task's 1024 halved every 32 ms). a wakes m at 351 ms. By kernel/sched/fair.c (6.6-6.18): record_wakee() charges a flip to a per change of
 * wakee. With the wakings of the tasks not replayed (a: x1 x2 x1 x2, m: x3 x4), a has 5 flips
 * at m's wakeup and m 2: wake_wide() (the smaller >= sd_llc_size 2, the larger >= twice it)
 * skips wake_affine(), and select_idle_sibling(m, prev 1, target 1) finds neither CPU idle:
 * m stays on its busy prev, as in the trace. Without them a has 1 flip and m 0: not wide, and
 * wake_affine_weight() compares (a's load ~1000 + 2) * 100 with (b's ~1000 + 2 - 2) * 108
 * and takes the waker's CPU: a migration the trace does not have (schbench_m1_t2_r3's
 * message thread, docs/replay.md).
 */
TEST_F(replay_round_trip, wakings_of_tasks_not_replayed_count_as_the_wakers_flips)
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 1/1   #P:2\n";
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "m", 12));
    t += line("m-12", 1, "d..2.", 1010, sw("m", 12, "S", "b", 11));
    t += line("a-10", 0, "d..3.", 100000, waking("x1", 21, 0));
    t += line("a-10", 0, "d..3.", 150000, waking("x2", 22, 0));
    t += line("a-10", 0, "d..3.", 200000, waking("x1", 21, 0));
    t += line("a-10", 0, "d..3.", 250000, waking("x2", 22, 0));
    t += line("b-11", 1, "d..2.", 299000, sw("b", 11, "S", "swapper/1", 0));
    t += line("<idle>-0", 1, "d.h3.", 301000, waking("m", 12, 1)); // m's timer, CPU 1 idle
    t += line("<idle>-0", 1, "d..2.", 301002, sw("swapper/1", 0, "R", "m", 12));
    t += line("m-12", 1, "d..3.", 301005, waking("x3", 23, 1));
    t += line("m-12", 1, "d..3.", 301008, waking("x4", 24, 1));
    t += line("m-12", 1, "d..2.", 301012, sw("m", 12, "S", "swapper/1", 0));
    t += line("<idle>-0", 1, "d.h3.", 302000, waking("b", 11, 1)); // b's timer
    t += line("<idle>-0", 1, "d..2.", 302002, sw("swapper/1", 0, "R", "b", 11));
    t += line("a-10", 0, "d..3.", 351000, waking("m", 12, 1)); // a wakes m: to its prev
    t += line("b-11", 1, "d..2.", 351005, sw("b", 11, "R+", "m", 12));
    t += line("m-12", 1, "d..2.", 351015, "sched_process_exit: comm=m pid=12 prio=120 group_dead=1");
    t += line("m-12", 1, "d..2.", 351015, sw("m", 12, "X", "b", 11));
    for (const auto& [task, pid, cpu] : {std::tuple{"a", 10, 0}, std::tuple{"b", 11, 1}}) {
        const std::string tp = fmt::format("{}-{}", task, pid);
        t += line(tp, cpu, "d..2.", 401000,
                  fmt::format("sched_process_exit: comm={} pid={} prio=120 group_dead=1", task, pid));
        t += line(tp, cpu, "d..2.", 401000,
                  sw(task, pid, "X", fmt::format("swapper/{}", cpu), 0));
    }
    write("t.txt", t);
    const std::string p = path("t.txt");
    replay_options o;
    o.comm_regex = "^(a|b|m)$";
    const replay_trace r = load_replay_trace(p, o);
    EXPECT_EQ(r.causes.absent_wakes, 6u);
    EXPECT_THAT(steps_of(task(r, 10)), HasSubstr("absent 21 run 50000000 absent 22 run 50000000 "
                                                 "absent 21 run 50000000 absent 22 run 101000000 "
                                                 "wake 12"));
    EXPECT_THAT(steps_of(task(r, 12)), HasSubstr("absent 23 run 3000 absent 24 run 4000 wait 10:1"));

    test_env env(2, 1, "6.18");
    sched_summary summary(2);
    env.k.add_sink(&summary);
    auto w = make_replay_workload({p, "--comm", "^(a|b|m)$"});
    w->setup(env.k.sys());
    env.k.run(secs(1));
    ASSERT_TRUE(w->finished());
    const sched_summary_result res = summary.finish(env.sim.now());
    const auto task_waker = static_cast<int>(waker_kind::task);
    const auto at = [](wakeup_target k) { return static_cast<int>(k); };
    EXPECT_EQ(res.wakeup_targets.placed[task_waker][at(wakeup_target::prev)], 1u);   // m by a
    EXPECT_EQ(res.wakeup_targets.placed[task_waker][at(wakeup_target::waker)], 0u);
    EXPECT_EQ(res.migrations, 0u);
}

/*
 * --wakee-flips N: a task that existed before the trace (a root of the replay) starts with N
 * flips, and a child it forks inherits them (kernel::fork(), as dup_task_struct() copies
 * record_wakee()'s fields). sh (a root) forks app, which wakes sh once and exits. By hand:
 * with --wakee-flips 5, sh starts at 5 and wakes no one: 5; app starts with sh's 5 and sh's
 * last_wakee (none), so its wake of sh is a flip: 6. Default (trace: sh wakes none of its
 * children, so the trace does not tell its flips: 0): sh 0, app 1. Before
 * (the model's fork gave a child 0 flips, and no option): app 1 whatever sh had.
 */
TEST_F(replay_round_trip, a_roots_flips_from_before_the_trace_pass_to_its_children)
{
    std::string t = header;
    t += line("sh-20", 0, ".....", 2000,
              "sched_process_fork: comm=sh pid=20 child_comm=app child_pid=21");
    t += line("sh-20", 0, "d..2.", 2001,
              "sched_wakeup_new: comm=app pid=21 prio=120 target_cpu=001");
    t += line("sh-20", 0, "d..2.", 2002, sw("sh", 20, "S", "swapper/0", 0));
    t += line("<idle>-0", 1, "d..2.", 2003, sw("swapper/1", 0, "R", "app", 21));
    t += line("app-21", 1, "d..3.", 2020, waking("sh", 20, 0));
    t += line("app-21", 1, "d..2.", 2022,
              "sched_process_exit: comm=app pid=21 prio=120 group_dead=1");
    t += line("app-21", 1, "d..2.", 2022, sw("app", 21, "X", "swapper/1", 0));
    t += line("<idle>-0", 0, "d..2.", 2025, sw("swapper/0", 0, "R", "sh", 20));
    t += line("sh-20", 0, "d..2.", 2100,
              "sched_process_exit: comm=sh pid=20 prio=120 group_dead=1");
    t += line("sh-20", 0, "d..2.", 2100, sw("sh", 20, "X", "swapper/0", 0));
    const std::string p = write("t.txt", t);
    for (const auto& [flips, sh_flips, app_flips] :
         {std::tuple{"", 0u, 1u}, std::tuple{"5", 5u, 6u}}) {
        test_env env(2, 1, "6.18");
        std::vector<std::string> args = {p};
        if (*flips) {
            args.emplace_back("--wakee-flips");
            args.emplace_back(flips);
        }
        auto w = make_replay_workload(args);
        w->setup(env.k.sys());
        env.k.run(secs(1));
        ASSERT_TRUE(w->finished()) << flips;
        const task_struct* sh = nullptr;
        const task_struct* app = nullptr;
        for (const auto& task_ptr : env.k.tasks())
            (task_ptr->comm == "sh" ? sh : app) = task_ptr.get();
        ASSERT_TRUE(sh && app && app->comm == "app") << flips;
        EXPECT_EQ(sh->wakee_flips, sh_flips) << "--wakee-flips " << flips;
        EXPECT_EQ(app->wakee_flips, app_flips) << "--wakee-flips " << flips;
    }
    EXPECT_THAT(make_replay_workload({p, "--wakee-flips", "5"})->command_line(),
                HasSubstr("--wakee-flips 5"));
    EXPECT_THAT(make_replay_workload({p, "--wakee-flips", "0"})->command_line(),
                HasSubstr("--wakee-flips 0"));
    EXPECT_THAT(make_replay_workload({p, "--wakee-flips", "trace"})->command_line(),
                Not(HasSubstr("--wakee-flips")));
    for (const char* bad : {"-1", "x", "1.5", "2000000"})
        try {
            make_replay_workload({p, "--wakee-flips", bad});
            ADD_FAILURE() << bad << ": no error";
        } catch (const config_error& e) {
            EXPECT_EQ(e.where(), "--wakee-flips") << bad;
        }
}

/*
 * --deps flow: b wakes a twice; in the trace b was preempted by c (not selected) before each
 * waking, so a had blocked each time. Replayed with each task on its own CPU, b reaches its
 * second wake at about 31 us, long before a has passed its first wait (about 100 us). --deps
 * count lets b run on (no block of b's); --deps flow holds b's second wake until a has
 * consumed the first, a wait of b's that the trace does not have (counted in the report).
 */
TEST_F(replay_round_trip, flow_holds_a_wake_until_the_previous_one_is_consumed)
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 1/1   #P:2\n";
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "b", 11));
    t += line("b-11", 1, "d..2.", 1010, sw("b", 11, "R", "c", 12));
    t += line("c-12", 1, "d..2.", 1095, sw("c", 12, "S", "b", 11));
    t += line("a-10", 0, "d..2.", 1100, sw("a", 10, "S", "swapper/0", 0));
    t += line("b-11", 1, "d..2.", 1101, "sched_waking: comm=a pid=10 prio=120 target_cpu=000");
    t += line("<idle>-0", 0, "d..2.", 1104, sw("swapper/0", 0, "R", "a", 10));
    t += line("b-11", 1, "d..2.", 1110, sw("b", 11, "R", "c", 12));
    t += line("c-12", 1, "d..2.", 1195, sw("c", 12, "S", "b", 11));
    t += line("a-10", 0, "d..2.", 1200, sw("a", 10, "S", "swapper/0", 0));
    t += line("b-11", 1, "d..2.", 1201, "sched_waking: comm=a pid=10 prio=120 target_cpu=000");
    t += line("<idle>-0", 0, "d..2.", 1204, sw("swapper/0", 0, "R", "a", 10));
    t += line("a-10", 0, "d..2.", 1300, "sched_process_exit: comm=a pid=10 prio=120 group_dead=1");
    t += line("a-10", 0, "d..2.", 1300, sw("a", 10, "X", "swapper/0", 0));
    t += line("b-11", 1, "d..2.", 1300, "sched_process_exit: comm=b pid=11 prio=120 group_dead=1");
    t += line("b-11", 1, "d..2.", 1300, sw("b", 11, "X", "swapper/1", 0));
    write("t.txt", t);
    const std::string p = path("t.txt");
    replay_options o;
    o.comm_regex = "^(a|b)$";
    const replay_trace r = load_replay_trace(p, o);
    EXPECT_EQ(steps_of(task(r, 10)), "run 100000 wait 11:1 run 96000 wait 11:2 run 96000 exit");
    EXPECT_EQ(steps_of(task(r, 11)), "run 16000 wake 10 run 15000 wake 10 run 99000 exit");

    std::map<std::string, sched_summary_result> replayed;
    std::map<std::string, std::string> reports;
    replay_each(p, "^(a|b)$", 2, {"count", "flow"}, replayed, reports);
    // count: a's first wait finds both of b's wakes there (two outstanding, which the trace's
    // order never has); flow held the second, so a found one at each wait.
    EXPECT_THAT(reports["count"], HasSubstr("0 slept until their wake, 2 found it already there "
                                            "(its waker ran ahead; 1 found more wakes than that "
                                            "one)"));
    EXPECT_THAT(reports["flow"], HasSubstr("(its waker ran ahead; 0 found more wakes than that "
                                           "one)"));
    EXPECT_THAT(reports["count"], Not(HasSubstr("flow control")));
    EXPECT_THAT(reports["flow"], HasSubstr("# flow control (--deps flow): 1 dependency wakes "
                                           "waited for their wakee"));
    EXPECT_EQ(replayed["count"].voluntary, 2u); // the two exits
    EXPECT_EQ(replayed["flow"].voluntary, 3u);  // and b's held wake
    EXPECT_EQ(replayed["flow"].wakeups, replayed["count"].wakeups + 1); // a's pass wakes b
}

/*
 * --deps flow's window is the wakee's, shared by its wakers: a is woken by b, then by c (each
 * preempted by a task not selected before its waking, so a had blocked each time). Replayed
 * with each task on its own CPU, b and c both reach their wakes at about 16 us, long before a
 * reaches its first wait (about 100 us). c's wake is a's second in the trace's order, made
 * there after a had passed its first wait: flow holds it until a has (a wait of c's that the
 * trace does not have), so a never has two wakes outstanding, as in the trace. A window per
 * (waker, wakee) pair held neither (each was its waker's first wake of a), and a's first wait
 * found both wakes there, as with count.
 */
TEST_F(replay_round_trip, flow_holds_a_wake_until_the_wakee_passed_its_previous_wait)
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 1/1   #P:3\n";
    t += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    t += line("<idle>-0", 1, "d..2.", 1000, sw("swapper/1", 0, "R", "b", 11));
    t += line("<idle>-0", 2, "d..2.", 1000, sw("swapper/2", 0, "R", "c", 12));
    t += line("b-11", 1, "d..2.", 1010, sw("b", 11, "R", "d", 13));
    t += line("c-12", 2, "d..2.", 1010, sw("c", 12, "R", "e", 14));
    t += line("d-13", 1, "d..2.", 1095, sw("d", 13, "S", "b", 11));
    t += line("a-10", 0, "d..2.", 1100, sw("a", 10, "S", "swapper/0", 0));
    t += line("b-11", 1, "d..2.", 1101, "sched_waking: comm=a pid=10 prio=120 target_cpu=000");
    t += line("<idle>-0", 0, "d..2.", 1104, sw("swapper/0", 0, "R", "a", 10));
    t += line("e-14", 2, "d..2.", 1195, sw("e", 14, "S", "c", 12));
    t += line("a-10", 0, "d..2.", 1200, sw("a", 10, "S", "swapper/0", 0));
    t += line("c-12", 2, "d..2.", 1201, "sched_waking: comm=a pid=10 prio=120 target_cpu=000");
    t += line("<idle>-0", 0, "d..2.", 1204, sw("swapper/0", 0, "R", "a", 10));
    for (const auto& [task, pid, cpu] :
         {std::tuple{"a", 10, 0}, std::tuple{"b", 11, 1}, std::tuple{"c", 12, 2}}) {
        const std::string tp = fmt::format("{}-{}", task, pid);
        t += line(tp, cpu, "d..2.", 1300,
                  fmt::format("sched_process_exit: comm={} pid={} prio=120 group_dead=1", task, pid));
        t += line(tp, cpu, "d..2.", 1300, sw(task, pid, "X", fmt::format("swapper/{}", cpu), 0));
    }
    write("t.txt", t);
    const std::string p = path("t.txt");
    replay_options o;
    o.comm_regex = "^(a|b|c)$";
    const replay_trace r = load_replay_trace(p, o);
    EXPECT_EQ(steps_of(task(r, 10)), "run 100000 wait 11:1 run 96000 wait 12:1 run 96000 exit");
    EXPECT_EQ(steps_of(task(r, 11)), "run 16000 wake 10 run 199000 exit");
    EXPECT_EQ(steps_of(task(r, 12)), "run 16000 wake 10 run 99000 exit");
    // Each wake carries its index among a's dependency wakes in the trace's order.
    EXPECT_EQ(task(r, 11).steps.decode().at(1).k, 1u);
    EXPECT_EQ(task(r, 12).steps.decode().at(1).k, 2u);

    std::map<std::string, sched_summary_result> replayed;
    std::map<std::string, std::string> reports;
    replay_each(p, "^(a|b|c)$", 3, {"count", "flow"}, replayed, reports);
    EXPECT_THAT(reports["count"], HasSubstr("0 slept until their wake, 2 found it already there "
                                            "(its waker ran ahead; 1 found more wakes than that "
                                            "one)"));
    EXPECT_THAT(reports["flow"], HasSubstr("0 slept until their wake, 2 found it already there "
                                           "(its waker ran ahead; 0 found more wakes than that "
                                           "one)"));
    EXPECT_THAT(reports["flow"], HasSubstr("# flow control (--deps flow): 1 dependency wakes "
                                           "waited for their wakee to pass its previous "
                                           "dependency wait"));
    EXPECT_EQ(replayed["count"].voluntary, 3u); // the three exits
    EXPECT_EQ(replayed["flow"].voluntary, 4u);  // and c's held wake
}

/*
 * --deps reply, worked by hand on request_reply_trace() (above): replayed on 3 CPUs, each
 * task on its traced CPU, b (8 us of CPU before its request, the trace's preemption by d
 * gone) asks m before a does (20 us). --deps flow holds b's request, m's second wake in the
 * trace's order, until m has passed its first wait, which a's request ends: a>m, m's pass
 * releases b (m>b), m's reply m>a, then m>b (b's request found m running: no waking).
 * --deps reply does not hold a request: b's ends m's first wait (b>m); m's first reply
 * step (to a, at about 17 us) finds a's request not made yet and waits for it; a's request
 * wakes m (a>m), which replies (m>a), finds b's request there at its second wait and
 * replies to b (m>b). Without the wait, m would wake a at about 17 us, before a asked.
 */
TEST_F(replay_round_trip, a_reply_waits_for_its_request)
{
    const std::string p = write("t.txt", request_reply_trace());
    std::map<std::string, std::string> order, reports;
    for (const char* d : {"flow", "reply"}) {
        SCOPED_TRACE(d);
        test_env env(3, 1, "6.6");
        ftrace_exporter out;
        env.k.add_sink(&out);
        auto w = make_replay_workload({p, "--comm", "^(m|a|b)$", "--deps", d});
        w->setup(env.k.sys());
        env.k.run(secs(1));
        ASSERT_TRUE(w->finished());
        reports[d] = w->report();
        out.write_file(path(std::string(d) + ".txt"), 3);
        // The wakings among m, a and b, in order, as "waker>wakee" (the replay's pids are
        // its own).
        std::istringstream in(slurp(path(std::string(d) + ".txt")));
        const std::regex waking_re(R"(^\s*([mab])-\d+ .*sched_waking: comm=([mab]) )");
        std::smatch m;
        for (std::string ln; std::getline(in, ln);)
            if (std::regex_search(ln, m, waking_re))
                order[d] += (order[d].empty() ? "" : " ") + m[1].str() + ">" + m[2].str();
    }
    EXPECT_EQ(order["flow"], "a>m m>b m>a m>b");
    EXPECT_EQ(order["reply"], "b>m a>m m>a m>b");
    EXPECT_THAT(reports["flow"], HasSubstr("# flow control (--deps flow): 1 dependency wakes"));
    EXPECT_THAT(reports["flow"], Not(HasSubstr("# replies")));
    EXPECT_THAT(reports["reply"], HasSubstr("# flow control (--deps reply): 0 dependency wakes"));
    EXPECT_THAT(reports["reply"],
                HasSubstr("# replies (--deps reply): the trace has 2 request-reply pairs; 2 "
                          "replies made, 1 of them waited for their request (requests are not "
                          "flow-held)"));
}

/*
 * A trace whose events contradict each other (found by mutating a recorded schbench trace:
 * one sched_switch's prev_pid changed): b is switched out asleep at 1000 us (on a CPU whose
 * TASK-PID column says c ran), then a
 * sched_waking of a is made by b (the TASK-PID column) while the trace has b asleep, and a
 * wakes b. Rebuilt, b waits for a's wake and a (its first event a wakeup: a block before
 * it) waits for b's, each before its own wake: under every --deps mode each task waits
 * for the other. The run is not cut short by the limit: it can never finish, and
 * stalled() says so, naming both tasks and what each waits for. A run that the limit
 * stops while a task still runs is not stalled.
 */
TEST_F(replay_round_trip, a_trace_whose_tasks_wait_for_each_other_stalls_and_says_which)
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 3/3   #P:2\n";
    t += line("c-12", 1, "d..2.", 1000, sw("b", 11, "S", "swapper/1", 0));
    t += line("b-11", 0, "d..2.", 1100, "sched_waking: comm=a pid=10 prio=120 target_cpu=001");
    t += line("a-10", 1, "d..2.", 1200, "sched_waking: comm=b pid=11 prio=120 target_cpu=000");
    write("t.txt", t);
    const std::string p = path("t.txt");
    for (const char* d : {"flow", "reply", "count", "edge", "keep"}) {
        test_env env(2, 1, "6.6");
        auto w = make_replay_workload({p, "--deps", d});
        w->setup(env.k.sys());
        env.k.run(secs(1));
        EXPECT_FALSE(w->finished()) << d;
        const std::string why = w->stalled();
        EXPECT_THAT(why, HasSubstr(p + ": the replay stalled at 0.000")) << d;
        EXPECT_THAT(why, HasSubstr("each of the 2 tasks left waits for a wake that only "
                                   "another of them can make"))
            << d;
        if (std::string(d) == "edge") {
            EXPECT_THAT(why, HasSubstr("pid 10 (a) waits for wake number 1 of it by pid 11 "
                                       "(0 came)"));
            EXPECT_THAT(why, HasSubstr("pid 11 (b) waits for wake number 1 of it by pid 10"));
        } else {
            EXPECT_THAT(why, HasSubstr("pid 10 (a) waits for its dependency wake number 1 (0 "
                                       "came; the trace's waker: pid 11)"))
                << d;
            EXPECT_THAT(why, HasSubstr("pid 11 (b) waits for its dependency wake number 1"))
                << d;
        }
    }

    // The limit, not a stall: a's 5 ms burst cut at 1 ms.
    std::string u = "# tracer: nop\n# entries-in-buffer/entries-written: 3/3   #P:1\n";
    u += line("<idle>-0", 0, "d..2.", 1000, sw("swapper/0", 0, "R", "a", 10));
    u += line("a-10", 0, "d..2.", 6000, "sched_process_exit: comm=a pid=10 prio=120 group_dead=1");
    u += line("a-10", 0, "d..2.", 6000, sw("a", 10, "X", "swapper/0", 0));
    write("u.txt", u);
    test_env env(1, 1, "6.6");
    auto w = make_replay_workload({path("u.txt")});
    w->setup(env.k.sys());
    env.k.run(msecs(1));
    EXPECT_FALSE(w->finished());
    EXPECT_EQ(w->stalled(), "");
    env.k.run(secs(1));
    EXPECT_TRUE(w->finished());
    EXPECT_EQ(w->stalled(), "");
}

/*
 * A replay's own trace keeps its timers: a replayed timed sleep ends in the timer's hardirq
 * (hrtimer_wakeup()), which --trace prints with the 'h' flag (text) or TRACE_FLAG_HARDIRQ
 * (.dat), so reading the replay's trace back takes those blocks for timers again, not for
 * external arrivals (before, every waking was printed in process context: 0 timer blocks).
 */
TEST_F(replay_round_trip, a_replays_trace_keeps_its_timers_in_hardirq_context)
{
    replay_options o;
    o.comm_regex = "^schbench";
    const std::string trace = traces_dir + "schbench_m1_t2_r3.trace.txt.xz";
    const replay_trace orig = load_replay_trace(trace, o);
    ASSERT_GT(orig.causes.timer, 800u);
    test_env env(2, 1, "6.6");
    ftrace_exporter out;
    env.k.add_sink(&out);
    auto w = make_replay_workload({trace, "--comm", "^schbench"});
    w->setup(env.k.sys());
    env.k.run(secs(60));
    ASSERT_TRUE(w->finished());
    for (const char* f : {"r.txt", "r.dat"}) {
        SCOPED_TRACE(f);
        out.write_file(path(f), 2);
        const replay_trace back = load_replay_trace(path(f), o);
        // No timer became an external arrival (the hardirq context is kept), and every
        // replayed timed sleep is a timer block again (the replay may lose a few dependency
        // blocks, not timer ones). In the .dat, the per-CPU buffers are merged by timestamp,
        // ties in CPU order (as trace-cmd report does): a waking and the switch out whose
        // block it ends, at the same nanosecond on two CPUs (this test machine charges no
        // hardware costs), can come back in the other order, and that block then reads as
        // unknown (7 timer blocks here since the wake_absent steps moved this replay's
        // message thread to its prev CPU; the text keeps the run's own order).
        EXPECT_LE(back.causes.external, orig.causes.external);
        if (std::string(f) == "r.txt")
            EXPECT_GE(back.causes.timer, orig.causes.timer);
        else
            EXPECT_GE(back.causes.timer + back.causes.unknown, orig.causes.timer);
    }
}

TEST(replay_shared, a_replay_runs_to_completion)
{
    test_env env(2, 1, "6.6");
    replay_options o;
    o.comm_regex = "^schbench";
    auto w = make_replay_workload(
        {traces_dir + "schbench_m1_t2_r3.trace.txt.xz", "--comm", "^schbench"});
    w->setup(env.k.sys());
    env.k.run(secs(60));
    EXPECT_TRUE(w->finished());
    EXPECT_TRUE(env.k.all_exited());
    EXPECT_THAT(w->report(), HasSubstr("replay: elapsed"));
    ASSERT_EQ(w->metrics().size(), 1u);
    const auto& rw = static_cast<const replay_workload&>(*w);
    // The replay cannot finish before the traced window's last external arrival.
    EXPECT_GE(w->metrics()[0].value,
              0.9 * static_cast<double>(rw.trace().t1 - rw.trace().t0) / 1e9);
}

} // namespace
} // namespace schedlab
