// SPDX-License-Identifier: GPL-2.0-only
/*
 * schedlab replay: the run summary and the trace-vs-replay table, determinism,
 * and bad input through the real binary.
 */
#include "cli/bin_test_support.h"
#include "cli/commands.h"
#include "sim/config_error.h"
#include "sim/scratch_dir_test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <sstream>

namespace schedlab {
namespace {

using test_support::schedlab_bin;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string traces_dir = std::string(SCHEDLAB_SOURCE_DIR) + "/data/traces/";
const std::string schbench_trace = traces_dir + "schbench_m1_t2_r3.trace.txt.xz";

// The schbench trace's tasks, replayed on `machine`.
replay_command_options schbench_replay_on(const std::string& machine)
{
    replay_command_options o;
    o.trace = schbench_trace;
    o.machine = machine;
    o.comm = "^schbench";
    return o;
}

std::string replay_output(const replay_command_options& o)
{
    std::ostringstream out, err;
    EXPECT_EQ(cmd_replay(out, err, o), 0) << err.str();
    return out.str();
}

TEST(cmd_replay, prints_the_summary_and_the_table_bit_identically)
{
    replay_command_options o = schbench_replay_on("ryzen-7950x");
    const std::string a = replay_output(o);
    EXPECT_THAT(a, HasSubstr("# blocks ended by: a traced task"));
    EXPECT_THAT(a, HasSubstr("replay: elapsed"));
    EXPECT_THAT(a, HasSubstr("kernel 6.18 (EEVDF), seed 1"));
    EXPECT_THAT(a, HasSubstr("# trace vs replay: 4 tasks; trace 2 CPUs, replay 32 CPUs"));
    EXPECT_THAT(a, HasSubstr("# context switches, voluntary"));
    EXPECT_THAT(a, HasSubstr("# wakeup-to-run p99 (us)"));
    EXPECT_THAT(a, HasSubstr("# CPUs busy (sum of utilisation)")); // no per-CPU rows past 16
    EXPECT_EQ(replay_output(o), a);
    o.speed = "2"; // half the CPU time: a different schedule
    EXPECT_NE(replay_output(o), a);
}

class cmd_replay_trace : public test_support::scratch_dir {};

// The replay's own trace (--trace) is a trace schedlab replay reads: the same tasks again.
TEST_F(cmd_replay_trace, the_replays_trace_replays)
{
    replay_command_options o = schbench_replay_on("ryzen-7950x");
    o.trace_path = path("replayed.txt.zst");
    const std::string first = replay_output(o);
    replay_command_options again = o;
    again.trace = o.trace_path;
    again.trace_path.clear();
    const std::string second = replay_output(again);
    EXPECT_THAT(second, HasSubstr("# trace vs replay: 4 tasks; trace 32 CPUs, replay 32 CPUs"));
    EXPECT_THAT(second, HasSubstr("unknown 0 (0 by a waking recorded before the switch out)"));
}

// --explain: the replay's decision log, as schedlab run writes it. Writing it leaves the
// schedule as it is; `schedlab latency` joins it to the wakeups of the replay's --trace.
TEST_F(cmd_replay_trace, explain_writes_the_decision_log_of_the_replay)
{
    replay_command_options o = schbench_replay_on("host");
    const std::string plain = replay_output(o);
    o.explain_path = path("decisions.txt");
    o.trace_path = path("replayed.txt");
    EXPECT_EQ(replay_output(o), plain);
    const std::string log = slurp(o.explain_path);
    EXPECT_THAT(log, HasSubstr(" select_task_rq "));
    EXPECT_THAT(log, HasSubstr("(schbench-worker) prev cpu"));
    const auto joined =
        schedlab_bin("latency " + o.trace_path + " --wakeups --explain " + o.explain_path);
    EXPECT_EQ(joined.status, 0) << joined.output;
    EXPECT_THAT(joined.output, HasSubstr("select_idle_sibling: "));
    const auto refused = schedlab_bin("replay " + schbench_trace + " --explain /nonexistent/d/log");
    EXPECT_EQ(refused.status, 2);
    EXPECT_THAT(refused.output, HasSubstr("--explain: cannot write '/nonexistent/d/log'"));
}

// --json: the run's result with forks and idle time, and the trace's side of the table. The
// schbench trace's main thread forks its 3 threads inside the window; the replay forks them
// again; each CPU's idle time is its span less its busy time, in the trace as in the run.
TEST_F(cmd_replay_trace, json_has_forks_idle_and_the_traces_figures)
{
    replay_command_options o;
    o.trace = schbench_trace;
    o.comm = "^schbench";
    o.json_path = path("r.json");
    const std::string out = replay_output(o);
    EXPECT_THAT(out, ::testing::ContainsRegex("# forks +3 +3 +1.00"));
    EXPECT_THAT(out, HasSubstr("# CPU idle time (s, all CPUs)"));
    const auto j = nlohmann::json::parse(slurp(o.json_path));
    const auto& run = j.at("sched_summary");
    EXPECT_EQ(run.at("forks"), 3);
    ASSERT_EQ(run.at("idle_ns").size(), 2u);
    for (std::size_t cpu = 0; cpu < 2; ++cpu)
        EXPECT_EQ(run.at("idle_ns")[cpu].get<s64>() + run.at("busy_ns")[cpu].get<s64>(),
                  run.at("simulated_ns").get<s64>());
    const auto& tr = j.at("replay_trace");
    EXPECT_EQ(tr.at("tasks"), 4);
    EXPECT_EQ(tr.at("deadline_tasks"), 0);
    const auto& ts = tr.at("sched_summary");
    EXPECT_EQ(ts.at("forks"), 3);
    EXPECT_EQ(ts.at("voluntary"), 2165); // docs/replay.md's table
    EXPECT_EQ(ts.at("involuntary"), 901);
    for (std::size_t cpu = 0; cpu < 2; ++cpu)
        EXPECT_EQ(ts.at("idle_ns")[cpu].get<s64>() + ts.at("busy_ns")[cpu].get<s64>(),
                  ts.at("span_ns").get<s64>());
    EXPECT_GT(tr.at("blocks_ended_by").at("timer"), 0);
    // The wakeup targets, both sides: each sched_waking in one class, so they sum to at most
    // the wakeups (which count sched_wakeup_new too).
    EXPECT_THAT(out,
                ::testing::ContainsRegex("# wakeup target: waker's CPU +[0-9]+ \\([0-9]+%\\)"));
    for (const auto* side : {&ts, &run}) {
        const auto& w = side->at("wakeup_targets");
        u64 sum = w.at("not_placed").get<u64>() + w.at("not_run").get<u64>();
        for (const char* k : {"waker_cpu", "prev_cpu", "prev_is_waker_cpu", "other_cpu"}) {
            sum += w.at(k).get<u64>();
            EXPECT_LE(w.at("by_interrupt_or_untraced").at(k).get<u64>(), w.at(k).get<u64>());
        }
        EXPECT_GT(sum, 0u);
        EXPECT_LE(sum, side->at("wakeups").get<u64>());
    }
    EXPECT_GT(tr.at("sched_waking_events"), 0);
}

// A trace recorded without sched_waking replays (its blocks as arrivals), and says so: the
// trace's wakeups, latencies and wakeup targets are '-' in the table, null in --json.
TEST_F(cmd_replay_trace, a_trace_without_sched_waking_says_so)
{
    const auto ln = [](const std::string& task, int cpu, long us, const std::string& ev) {
        return fmt::format("{:>16} [{:03}] d..2. {:>5}.{:06}: {}\n", task, cpu, us / 1000000,
                           us % 1000000, ev);
    };
    const auto sw = [](const char* prev, int pp, const char* st, const char* next, int np) {
        return fmt::format("sched_switch: prev_comm={} prev_pid={} prev_prio=120 prev_state={} "
                           "==> next_comm={} next_pid={} next_prio=120",
                           prev, pp, st, next, np);
    };
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 4/4   #P:2\n";
    t += ln("a-10", 0, 1000, sw("a", 10, "S", "swapper/0", 0));
    t += ln("<idle>-0", 0, 1020, sw("swapper/0", 0, "R", "a", 10));
    t += ln("a-10", 0, 1030, sw("a", 10, "S", "swapper/0", 0));
    replay_command_options o;
    o.trace = write("nowaking.txt", t);
    o.json_path = path("r.json");
    std::ostringstream out, err;
    ASSERT_EQ(cmd_replay(out, err, o), 0) << err.str();
    EXPECT_THAT(err.str(), HasSubstr("the trace has no sched_waking events"));
    EXPECT_THAT(out.str(), HasSubstr("# WARNING: the trace has no sched_waking events"));
    EXPECT_THAT(out.str(), ::testing::ContainsRegex(
                               "# wakeup target: waker's CPU +- +[0-9]+ \\([0-9]+%\\) +-"));
    EXPECT_THAT(out.str(), ::testing::ContainsRegex("# wakeup-to-run p50 \\(us\\) +- "));
    const auto j = nlohmann::json::parse(slurp(o.json_path));
    EXPECT_TRUE(j.at("replay_trace").at("sched_summary").at("wakeup_targets").is_null());
    EXPECT_EQ(j.at("replay_trace").at("sched_waking_events"), 0);
}

// issue 17's "compare runs on a trace": the A/B tables on a recorded workload, the replay's
// elapsed time as the figure, each arm replaying the same trace under its kernel.
TEST(cmd_replay, compare_runs_on_a_trace)
{
    const auto r = schedlab_bin("compare --runs 1 --kernel 6.6 --kernel 6.18 -- replay " +
                                schbench_trace + " --comm ^schbench");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("(\"6.6\")"));
    EXPECT_THAT(r.output, HasSubstr("(\"6.18\")"));
    EXPECT_THAT(r.output, HasSubstr("schbench_m1_t2_r3.trace.txt.xz.elapsed"));
}

TEST(cmd_replay, bad_input_is_refused_with_the_input_named)
{
    auto refused = [](const std::string& args, const std::string& message) {
        const auto r = schedlab_bin("replay " + args);
        EXPECT_EQ(r.status, 2) << r.output;
        EXPECT_THAT(r.output, HasSubstr(message));
    };
    refused("/nonexistent/trace.txt", "/nonexistent/trace.txt: cannot open the trace");
    refused(std::string(SCHEDLAB_SOURCE_DIR) + "/README.md", "README.md:3: not ftrace text");
    refused(schbench_trace + " --speed 0", "--speed: '0' is not a number in [0.01, 100]");
    refused(schbench_trace + " --speed x", "--speed");
    refused(schbench_trace + " --comm '('", "--comm: '(' is not a valid regular expression");
    refused(schbench_trace + " --comm nomatch", "--comm: no task of");
    refused(schbench_trace + " --kernel 9.9", "--kernel");
    refused("", "trace is required");
    refused(schbench_trace + " --trace /nonexistent/dir/t.txt", "--trace");
    refused(schbench_trace + " --trace t.txt.xz", "--trace");
    const auto help = schedlab_bin("replay --help");
    EXPECT_EQ(help.status, 0);
    EXPECT_THAT(help.output, HasSubstr("--speed"));
    EXPECT_THAT(help.output, HasSubstr("--comm"));
}

// A trace whose tasks end up waiting for each other (a sched_waking whose waker the trace
// shows asleep; src/workload/replay_test.cc has the rebuild) is bad input, exit 2 with the
// file named, from replay and from compare: not a run cut short by --time-limit (exit 3).
TEST_F(cmd_replay_trace, a_trace_that_stalls_is_refused_with_the_file_named)
{
    const std::string t = write(
        "stall.txt",
        "# tracer: nop\n"
        "           c-12   [001] d..2.  1.001000: sched_switch: prev_comm=b prev_pid=11 "
        "prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120\n"
        "           b-11   [000] d..2.  1.001100: sched_waking: comm=a pid=10 prio=120 "
        "target_cpu=001\n"
        "           a-10   [001] d..2.  1.001200: sched_waking: comm=b pid=11 prio=120 "
        "target_cpu=000\n");
    const auto r = schedlab_bin("replay --machine ryzen-7950x " + t);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(t + ": the replay stalled at "));
    EXPECT_THAT(r.output, Not(HasSubstr("--time-limit")));
    const auto c = schedlab_bin("compare --runs 1 --machine ryzen-7950x --kernel 6.6 "
                                "--kernel 6.18 -- replay " + t);
    EXPECT_EQ(c.status, 2) << c.output;
    EXPECT_THAT(c.output, HasSubstr(t + ": the replay stalled at "));
}

TEST(cmd_replay, bursts_deps_and_rt_policy_are_checked)
{
    for (const char* opt : {"--bursts", "--deps", "--rt-policy"}) {
        const auto r = schedlab_bin("replay " + schbench_trace + " --comm ^schbench " + opt + " x");
        EXPECT_EQ(r.status, 2) << r.output;
        EXPECT_THAT(r.output, HasSubstr(std::string(opt) + ": 'x' is not"));
    }
}

// schedlab latency on a shared trace: perf sched latency's figures for the benchmark's
// tasks (their switches, 2195 + 864 + 7, are the replay table's voluntary + involuntary
// ones: 2165 + 901; their runtime, 5.81 s of the 3.0 s trace's 2 CPUs, its CPUs busy 1.93).
TEST(cmd_latency, the_per_task_table_and_bad_input)
{
    const auto r = schedlab_bin("latency " + schbench_trace + " --sort max");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("  Task                  |    Runtime ms | Switches |"));
    EXPECT_THAT(r.output, HasSubstr("  schbench-worker:(2)   |   5805.620 ms |     2195 | avg:"));
    EXPECT_THAT(r.output, HasSubstr("  schbench-msg:15999    |      6.540 ms |      864 | avg:"));
    EXPECT_THAT(r.output, HasSubstr("  schbench:15998        |      1.042 ms |        7 | avg:"));
    const auto missing = schedlab_bin("latency /nonexistent/trace.txt");
    EXPECT_EQ(missing.status, 2);
    EXPECT_THAT(missing.output, HasSubstr("/nonexistent/trace.txt: cannot open the trace"));
    const auto json = schedlab_bin("latency " + std::string(SCHEDLAB_SOURCE_DIR) + "/package.json");
    EXPECT_EQ(json.status, 2);
    EXPECT_THAT(json.output, HasSubstr("package.json: a JSON document (a schedlab result?)"));
    const auto sort = schedlab_bin("latency " + schbench_trace + " --sort nothing");
    EXPECT_EQ(sort.status, 2);
    EXPECT_THAT(sort.output, HasSubstr("--sort: 'nothing' is not a sort key"));
    const auto log = schedlab_bin("latency " + schbench_trace + " --explain /nonexistent/log");
    EXPECT_EQ(log.status, 2);
    EXPECT_THAT(log.output, HasSubstr("--explain: cannot read '/nonexistent/log'"));
}

TEST(cmd_replay, runs_as_a_benchmark_of_schedlab_run)
{
    const auto r = schedlab_bin("run --machine ryzen-7950x --kernel 6.18 -- replay " +
                                schbench_trace + " --comm ^schbench --speed 1.5");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("replay: elapsed"));
    EXPECT_THAT(r.output, HasSubstr("# schedule digest"));
}

} // namespace
} // namespace schedlab
