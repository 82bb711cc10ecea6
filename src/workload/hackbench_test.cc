// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf bench sched messaging: options, topology, message counts, output
 * format and determinism.
 */
#include "workload/hackbench.h"

#include "sim/config_error.h"
#include "support/workload_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::test_env;

struct run_result {
    std::string report;
    u64 digest = 0;
    u64 bytes_received = 0;
    u64 workers_exited = 0;
    bool all_exited = false;
    std::size_t nr_tasks = 0;
    int main_tgid = 0;
    std::size_t same_tgid = 0; ///< workers in the main task's thread group
};

run_result run_messaging(const std::vector<std::string>& args, u64 seed = 1, int cores = 2)
{
    test_env t(cores, seed);
    messaging_workload w(parse_messaging_options(args));
    w.setup(t.k.sys());
    t.k.run(secs(30));
    run_result r;
    r.report = w.report();
    r.digest = t.k.schedule_digest();
    r.bytes_received = w.bytes_received();
    r.workers_exited = w.nr_workers_exited();
    r.all_exited = t.k.all_exited();
    r.nr_tasks = t.k.tasks().size();
    r.main_tgid = w.main_task()->tgid;
    for (const auto& p : t.k.tasks())
        if (p.get() != w.main_task() && p->tgid == r.main_tgid)
            ++r.same_tgid;
    EXPECT_TRUE(w.finished());
    return r;
}

TEST(messaging_options, defaults_are_perfs)
{
    const messaging_params mp = parse_messaging_options({});
    EXPECT_EQ(mp.groups, 10u);
    EXPECT_EQ(mp.loops, 100u);
    EXPECT_FALSE(mp.pipe);
    EXPECT_FALSE(mp.thread);
}

TEST(messaging_options, short_long_attached_and_clustered_forms_parse)
{
    messaging_params mp = parse_messaging_options({"-g", "4", "-p", "-l", "100"});
    EXPECT_EQ(mp.groups, 4u);
    EXPECT_EQ(mp.loops, 100u);
    EXPECT_TRUE(mp.pipe);
    mp = parse_messaging_options({"-g4", "-pt", "--nr_loops=7"});
    EXPECT_EQ(mp.groups, 4u);
    EXPECT_EQ(mp.loops, 7u);
    EXPECT_TRUE(mp.pipe && mp.thread);
    mp = parse_messaging_options({"--group", "3", "--thread", "--pipe", "--no-pipe", "--nr", "9"});
    EXPECT_EQ(mp.groups, 3u);
    EXPECT_EQ(mp.loops, 9u);
    EXPECT_FALSE(mp.pipe);
    EXPECT_TRUE(mp.thread);
    mp = parse_messaging_options({"-tl5"});
    EXPECT_TRUE(mp.thread);
    EXPECT_EQ(mp.loops, 5u);
}

TEST(messaging_options, unknown_or_malformed_options_are_rejected_by_name)
{
    auto message = [](const std::vector<std::string>& args) -> std::string {
        try {
            parse_messaging_options(args);
        } catch (const config_error& e) {
            return e.what();
        }
        return "(accepted)";
    };
    EXPECT_THAT(message({"-x"}), HasSubstr("'-x'"));
    EXPECT_THAT(message({"-f", "20"}), HasSubstr("'-f'")) << "perf has no -f (rt-tests does)";
    EXPECT_THAT(message({"--groups", "4"}), HasSubstr("'--groups'"));
    EXPECT_THAT(message({"--loops=4"}), HasSubstr("'--loops'"));
    EXPECT_THAT(message({"-g", "four"}), HasSubstr("'-g'"));
    EXPECT_THAT(message({"-g", "-1"}), HasSubstr("'-g'"));
    EXPECT_THAT(message({"-l"}), HasSubstr("'-l' requires a value"));
    EXPECT_THAT(message({"--pipe=1"}), HasSubstr("'--pipe' takes no value"));
    EXPECT_THAT(message({"4"}), HasSubstr("unexpected argument '4'"));
    EXPECT_THAT(message({"-x"}), HasSubstr("perf bench sched messaging"));
}

TEST(messaging, pipe_mode_delivers_every_message_and_reaps_every_worker)
{
    const run_result r = run_messaging({"-g", "1", "-l", "10", "-p"});
    EXPECT_EQ(r.bytes_received, 20u * 20 * 10 * messaging_params::datasize);
    EXPECT_EQ(r.workers_exited, 40u);
    EXPECT_TRUE(r.all_exited);
    EXPECT_EQ(r.nr_tasks, 41u) << "the main task and 40 workers";
    EXPECT_EQ(r.same_tgid, 0u) << "process mode forks";
}

TEST(messaging, socket_mode_delivers_every_message_and_reaps_every_worker)
{
    const run_result r = run_messaging({"-g", "1", "-l", "10"});
    EXPECT_EQ(r.bytes_received, 20u * 20 * 10 * messaging_params::datasize);
    EXPECT_EQ(r.workers_exited, 40u);
    EXPECT_TRUE(r.all_exited);
}

TEST(messaging, thread_mode_creates_threads_of_the_main_task)
{
    const run_result r = run_messaging({"-g", "2", "-l", "5", "--thread", "--pipe"});
    EXPECT_EQ(r.bytes_received, 2u * 20 * 20 * 5 * messaging_params::datasize);
    EXPECT_EQ(r.workers_exited, 80u);
    EXPECT_EQ(r.same_tgid, 80u);
    EXPECT_TRUE(r.all_exited);
}

TEST(messaging, every_receiver_channel_carries_twenty_senders_worth_of_messages)
{
    test_env t(2);
    messaging_workload w(parse_messaging_options({"-g", "2", "-l", "7", "-p"}));
    w.setup(t.k.sys());
    t.k.run(secs(30));
    ASSERT_TRUE(w.finished());
    std::size_t nr_group_channels = 0;
    for (const auto& ch : w.state().channels()) {
        if (ch->name() == "ready") {
            EXPECT_EQ(ch->stats().bytes_read, 80u) << "one byte per worker";
            continue;
        }
        if (ch->name() == "wake") {
            EXPECT_EQ(ch->stats().bytes_written, 1u);
            EXPECT_EQ(ch->stats().bytes_read, 0u) << "workers only poll it";
            continue;
        }
        ++nr_group_channels;
        EXPECT_EQ(ch->stats().writes, 20u * 7) << ch->name();
        EXPECT_EQ(ch->stats().bytes_read, 20u * 7 * messaging_params::datasize) << ch->name();
    }
    EXPECT_EQ(nr_group_channels, 2u * 20);
}

TEST(messaging, report_has_perfs_format)
{
    const run_result r = run_messaging({"-g", "1", "-l", "10", "-p"});
    EXPECT_THAT(r.report, MatchesRegex("# Running 'sched/messaging' benchmark:\n"
                                       "# 20 sender and receiver processes per group\n"
                                       "# 1 groups == 40 processes run\n"
                                       "\n"
                                       "     Total time: [0-9]+\\.[0-9][0-9][0-9] \\[sec\\]\n"));
    const run_result rt = run_messaging({"-g", "1", "-l", "10", "-t"});
    EXPECT_THAT(rt.report, HasSubstr("# 20 sender and receiver threads per group\n"
                                     "# 1 groups == 40 threads run\n"));
}

TEST(messaging, total_time_line_truncates_to_milliseconds)
{
    EXPECT_EQ(perf_total_time_line(126'999), "     Total time: 0.126 [sec]\n");
    EXPECT_EQ(perf_total_time_line(12'345'678), "     Total time: 12.345 [sec]\n");
    EXPECT_EQ(perf_total_time_line(999), "     Total time: 0.000 [sec]\n");
}

TEST(messaging, same_seed_gives_the_same_schedule_and_a_different_seed_does_not)
{
    const run_result a = run_messaging({"-g", "1", "-l", "10", "-p"}, 42);
    const run_result b = run_messaging({"-g", "1", "-l", "10", "-p"}, 42);
    const run_result c = run_messaging({"-g", "1", "-l", "10", "-p"}, 43);
    EXPECT_EQ(a.digest, b.digest);
    EXPECT_EQ(a.report, b.report);
    EXPECT_NE(a.digest, c.digest);
}

TEST(messaging, unfinished_run_says_so)
{
    test_env t(2);
    messaging_workload w(parse_messaging_options({"-g", "1", "-l", "10"}));
    w.setup(t.k.sys());
    t.k.run(usecs(100));
    EXPECT_FALSE(w.finished());
    EXPECT_THAT(w.report(), HasSubstr("not finished"));
    EXPECT_TRUE(w.metrics().empty());
}

TEST(messaging, metrics_give_the_measured_time_in_seconds)
{
    test_env t(2);
    messaging_workload w(parse_messaging_options({"-g", "1", "-l", "10", "-p"}));
    w.setup(t.k.sys());
    t.k.run(secs(60));
    ASSERT_TRUE(w.finished());
    const auto m = w.metrics();
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].name, "time");
    EXPECT_FALSE(m[0].higher_is_better);
    EXPECT_DOUBLE_EQ(m[0].value, static_cast<double>(*w.elapsed_usec()) / 1e6);
    EXPECT_GT(m[0].value, 0.0);
}

} // namespace
} // namespace schedlab
