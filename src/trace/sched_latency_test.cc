// SPDX-License-Identifier: GPL-2.0-only
/*
 * schedlab latency: a small trace whose figures follow by hand (see the comments at each
 * event), merged by comm and per pid, the per-wakeup view and its decision-log reasons.
 */
#include "trace/sched_latency.h"

#include "sim/config_error.h"
#include "sim/scratch_dir_test_support.h"
#include "trace/ftrace_text_test_support.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

namespace schedlab {
namespace {

using test_support::scratch_dir;
using test_support::sw;
using ::testing::HasSubstr;

std::string line(const std::string& task, int cpu, long us, const std::string& ev)
{
    return test_support::line(task, cpu, "d..2.", us, ev);
}

// a (pid 10) and two tasks named w (11, 12) on two CPUs; times in microseconds.
std::string small_trace()
{
    std::string t = "# tracer: nop\n# entries-in-buffer/entries-written: 9/9   #P:2\n";
    t += line("a-10", 0, 1000, sw("a", 10, "R+", "w", 11)); // a current at the start: 0 us run;
                                                            // preempted: waits from 1000
    t += line("w-11", 0, 1005, "sched_waking: comm=w pid=12 prio=120 target_cpu=001"); // 12 waits
    t += line("<idle>-0", 1, 1006, "sched_wakeup: comm=w pid=12 prio=120 target_cpu=001");
    t += line("<idle>-0", 1, 1007, sw("swapper/1", 0, "R", "w", 12)); // 12: delay 2 us on cpu1
    t += line("w-11", 0, 1010, sw("w", 11, "S", "a", 10)); // 11 ran 10 us; a: delay 10 us
    t += line("w-12", 1, 1020, "sched_waking: comm=w pid=11 prio=120 target_cpu=000"); // 11 waits
    t += line("w-12", 1, 1030, sw("w", 12, "S", "swapper/1", 0)); // 12 ran 23 us
    t += line("a-10", 0, 1040, sw("a", 10, "R+", "w", 11));       // a ran 30 us; 11: delay 20 us
    t += line("w-11", 0, 1050, sw("w", 11, "S", "a", 10));        // 11 ran 10 us; a: delay 10 us
    t += line("a-10", 0, 1060, sw("a", 10, "S", "swapper/0", 0)); // a ran 10 us
    return t;
}

class sched_latency_test : public scratch_dir {};

TEST_F(sched_latency_test, per_pid_figures_by_hand)
{
    latency_options o;
    o.merge_by_comm = false;
    const latency_result r = sched_latency(write("t.txt", small_trace()), o);
    ASSERT_EQ(r.rows.size(), 3u);
    // Sorted by average delay: 11 (20 us), a (10 us), 12 (2 us).
    const latency_row& w11 = r.rows[0];
    EXPECT_EQ(w11.pid, 11);
    EXPECT_EQ(w11.runtime, 20'000); // 1000-1010, 1040-1050
    EXPECT_EQ(w11.switches, 2u);
    EXPECT_EQ(w11.delays, 1u); // its first switch in had no known wakeup
    EXPECT_EQ(w11.max_delay, 20'000);
    EXPECT_EQ(w11.max_start, 1'020'000);
    EXPECT_EQ(w11.max_end, 1'040'000);
    EXPECT_EQ(w11.max_cpu, 0);
    const latency_row& a = r.rows[1];
    EXPECT_EQ(a.pid, 10);
    EXPECT_EQ(a.runtime, 40'000); // 1010-1040, 1050-1060 (and 0 us from the trace's start)
    EXPECT_EQ(a.switches, 3u);
    EXPECT_EQ(a.delays, 2u);
    EXPECT_EQ(a.total_delay, 20'000);
    EXPECT_EQ(a.max_start, 1'000'000); // the first of two equal delays
    const latency_row& w12 = r.rows[2];
    EXPECT_EQ(w12.runtime, 23'000);
    EXPECT_EQ(w12.max_delay, 2'000);
    EXPECT_EQ(w12.max_cpu, 1);
    EXPECT_EQ(r.total_runtime, 83'000);
    EXPECT_EQ(r.total_switches, 6u);

    o.sort = "runtime";
    const latency_result by_runtime = sched_latency(path("t.txt"), o);
    EXPECT_EQ(by_runtime.rows[0].pid, 10);
    EXPECT_EQ(by_runtime.rows[1].pid, 12);
    o.sort = "avg,bogus";
    try {
        sched_latency(path("t.txt"), o);
        ADD_FAILURE() << "no error";
    } catch (const config_error& e) {
        EXPECT_EQ(e.where(), "--sort");
    }
}

TEST_F(sched_latency_test, merged_by_comm_in_perfs_layout)
{
    const latency_result r = sched_latency(write("t.txt", small_trace()), {});
    ASSERT_EQ(r.rows.size(), 2u);
    const latency_row& w = r.rows[0]; // avg 11 us against a's 10
    EXPECT_EQ(w.comm, "w");
    EXPECT_EQ(w.merged, 2);
    EXPECT_EQ(w.runtime, 43'000);
    EXPECT_EQ(w.switches, 3u);
    EXPECT_EQ(w.total_delay / static_cast<sim_dur>(w.delays), 11'000);
    EXPECT_EQ(w.max_delay, 20'000);
    std::ostringstream out;
    print_latency(out, r);
    EXPECT_THAT(out.str(), HasSubstr("  w:(2)                 |      0.043 ms |        3 | avg:   "
                                     "0.011 ms | max:   0.020 ms | max start:     0.001020 s | "
                                     "max end:     0.001040 s | cpu0\n"));
    EXPECT_THAT(out.str(), HasSubstr("  a:10                  |      0.040 ms |        3 |"));
    EXPECT_THAT(out.str(), HasSubstr("  TOTAL:                |      0.083 ms |        6 |\n"));
}

TEST_F(sched_latency_test, wakeups_with_their_placement_reasons)
{
    const std::string log = "      0.001000 cpu0    newidle_balance  gate closed\n"
                            "      0.001005 cpu0    select_task_rq   pid 12 (w) prev cpu1 -> "
                            "cpu1: wake_affine: prev cpu; select_idle_sibling: prev idle\n"
                            "      0.001030 cpu1    load_balance     nothing to pull\n";
    latency_options o;
    o.wakeups = true;
    o.explain_path = write("explain.txt", log);
    const latency_result r = sched_latency(write("t.txt", small_trace()), o);
    ASSERT_EQ(r.wakeups.size(), 2u);
    const wakeup_row& first = r.wakeups[0];
    EXPECT_EQ(first.ts, 1'005'000);
    EXPECT_EQ(first.waker, 11);
    EXPECT_EQ(first.wakee, 12);
    EXPECT_EQ(first.prev_cpu, 1);
    EXPECT_EQ(first.target_cpu, 1);
    EXPECT_EQ(first.ran_cpu, 1);
    EXPECT_EQ(first.ran - first.ts, 2'000);
    EXPECT_EQ(first.reason, "wake_affine: prev cpu; select_idle_sibling: prev idle");
    const wakeup_row& second = r.wakeups[1];
    EXPECT_EQ(second.wakee, 11);
    EXPECT_EQ(second.target_cpu, -1); // no sched_wakeup recorded
    EXPECT_EQ(second.ran - second.ts, 20'000);
    EXPECT_EQ(second.reason, ""); // the log has no decision for it
    EXPECT_EQ(r.explained, 1u);
    std::ostringstream out;
    print_latency(out, r);
    EXPECT_THAT(out.str(), HasSubstr("awakened: w[12]"));
    EXPECT_THAT(out.str(), HasSubstr("select_idle_sibling: prev idle"));
    // Both wakees ran next on their previous CPU, woken by a task on the other CPU.
    EXPECT_EQ(r.sched_waking_events, 2u);
    EXPECT_EQ(
        r.targets.placed[static_cast<int>(waker_kind::task)][static_cast<int>(wakeup_target::prev)],
        2u);
    EXPECT_EQ(r.targets.total(), 2u);
    EXPECT_THAT(out.str(), HasSubstr("the waker's CPU 0 (0%), its previous CPU 2 (100%), both"));

    o.explain_path = write("bad.txt", "      0.001000 cpu0    x\nnot a log\n");
    try {
        sched_latency(path("t.txt"), o);
        ADD_FAILURE() << "no error";
    } catch (const config_error& e) {
        EXPECT_THAT(e.where(), HasSubstr("bad.txt:2"));
    }
    o.explain_path = path("missing.txt");
    EXPECT_THROW(sched_latency(path("t.txt"), o), config_error);
}

// A directory was read as an empty log and /dev/zero until std::getline's allocation failed,
// which it reports as the end of the log: both gave every wakeup without its placement, exit 0.
TEST_F(sched_latency_test, an_explain_log_that_is_not_a_file_of_lines_is_refused)
{
    latency_options o;
    o.wakeups = true;
    const std::string trace = write("t.txt", small_trace());
    o.explain_path = path("");
    try {
        sched_latency(trace, o);
        ADD_FAILURE() << "a directory was read as a decision log";
    } catch (const config_error& e) {
        EXPECT_EQ(e.where(), "--explain");
        EXPECT_THAT(e.what(), HasSubstr("is a directory, not a decision log"));
    }
    o.explain_path = write("long.txt", std::string(65537, '0'));
    try {
        sched_latency(trace, o);
        ADD_FAILURE() << "a 65537-byte line was read";
    } catch (const config_error& e) {
        EXPECT_THAT(e.where(), HasSubstr("long.txt:1"));
        EXPECT_THAT(e.what(), HasSubstr("a line longer than 65536 bytes: not a decision log"));
    }
    o.explain_path = "/dev/zero";
    EXPECT_THROW(sched_latency(trace, o), config_error);
    // A last line without its newline is still read.
    o.explain_path = write("nonl.txt", "      0.001005 cpu0    select_task_rq   pid 12 (w) prev "
                                       "cpu1 -> cpu1: wake_affine: prev cpu");
    EXPECT_EQ(sched_latency(trace, o).explained, 1u);
}

// With a sink, the rows come as they complete, in time order, holding at most the window:
// the same rows as collected; a window too small for the rows waiting gives some without
// their delay, counted, never out of order or lost.
TEST_F(sched_latency_test, wakeups_stream_in_time_order_within_a_bounded_window)
{
    const std::string trace =
        std::string(SCHEDLAB_SOURCE_DIR) + "/data/traces/schbench_m1_t2_r3.trace.txt.xz";
    latency_options o;
    o.wakeups = true;
    const latency_result all = sched_latency(trace, o);
    ASSERT_GT(all.wakeups.size(), 100u);
    std::vector<wakeup_row> rows;
    const auto collect = [&](const wakeup_row& w) { rows.push_back(w); };
    const latency_result streamed = sched_latency(trace, o, collect);
    EXPECT_TRUE(streamed.wakeups.empty());
    EXPECT_EQ(streamed.wakeups_total, all.wakeups.size());
    EXPECT_EQ(streamed.wakeups_cut, 0u);
    ASSERT_EQ(rows.size(), all.wakeups.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].ts, all.wakeups[i].ts) << i;
        EXPECT_EQ(rows[i].wakee, all.wakeups[i].wakee) << i;
        EXPECT_EQ(rows[i].ran, all.wakeups[i].ran) << i;
        EXPECT_EQ(rows[i].target_cpu, all.wakeups[i].target_cpu) << i;
    }

    rows.clear();
    o.wakeup_window = 2;
    const latency_result cut = sched_latency(trace, o, collect);
    EXPECT_GT(cut.wakeups_cut, 0u);
    ASSERT_EQ(rows.size(), all.wakeups.size());
    u64 without_delay = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].ts, all.wakeups[i].ts) << i;
        if (rows[i].ran != all.wakeups[i].ran) {
            EXPECT_EQ(rows[i].ran, -1) << i;
            ++without_delay;
        }
    }
    EXPECT_GT(without_delay, 0u);
    EXPECT_LE(without_delay, cut.wakeups_cut);
    std::ostringstream out;
    print_wakeups_footer(out, cut);
    EXPECT_THAT(out.str(), HasSubstr("printed before their wakee ran"));
}

} // namespace
} // namespace schedlab
