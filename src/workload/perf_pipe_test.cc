// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf bench sched pipe: options, the two loop variants, output format.
 */
#include "workload/perf_pipe.h"

#include "sim/config_error.h"
#include "support/workload_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::test_env;

struct pipe_run {
    std::string report;
    sim_dur usec = 0;
    u64 worker_switches = 0; ///< context switches (voluntary + involuntary) of the two workers
    bool all_exited = false;
    std::size_t nr_tasks = 0;
    std::vector<workload_metric> metrics;
};

pipe_run run_pipe(const std::vector<std::string>& args, int cores = 2, u64 seed = 1)
{
    test_env t(cores, seed);
    perf_pipe_workload w(parse_perf_pipe_options(args));
    w.setup(t.k.sys());
    t.k.run(secs(30));
    pipe_run r;
    EXPECT_TRUE(w.finished());
    r.report = w.report();
    r.usec = w.elapsed_usec().value_or(0);
    r.all_exited = t.k.all_exited();
    r.nr_tasks = t.k.tasks().size();
    r.metrics = w.metrics();
    // The workers: process mode = main (task 1) + child; threaded = the two threads.
    for (const auto& p : t.k.tasks())
        if (!(w.params().threaded && p.get() == w.main_task()))
            r.worker_switches += p->nvcsw + p->nivcsw;
    return r;
}

TEST(perf_pipe_options, defaults_and_forms)
{
    perf_pipe_params pp = parse_perf_pipe_options({});
    EXPECT_EQ(pp.loops, 1'000'000u);
    EXPECT_FALSE(pp.threaded);
    EXPECT_EQ(pp.variant, pipe_loop_variant::classic);
    pp = parse_perf_pipe_options({"-l", "50000", "-T", "--variant=2025"});
    EXPECT_EQ(pp.loops, 50'000u);
    EXPECT_TRUE(pp.threaded);
    EXPECT_EQ(pp.variant, pipe_loop_variant::v2025);
    pp = parse_perf_pipe_options({"--loop=7", "--threaded"});
    EXPECT_EQ(pp.loops, 7u);
}

TEST(perf_pipe_options, bad_and_unmodelled_options_are_rejected_by_name)
{
    auto message = [](const std::vector<std::string>& args) -> std::string {
        try {
            parse_perf_pipe_options(args);
        } catch (const config_error& e) {
            return e.what();
        }
        return "(accepted)";
    };
    EXPECT_THAT(message({"-t"}), HasSubstr("'-t'")) << "threaded is -T for pipe";
    EXPECT_THAT(message({"--variant=2024"}), HasSubstr("'--variant'"));
    EXPECT_THAT(message({"-G", "a,b"}), HasSubstr("'-G' is not modelled"));
    EXPECT_THAT(message({"-n"}), HasSubstr("'-n' is not modelled"));
    EXPECT_THAT(message({"-l", "x"}), HasSubstr("'-l'"));
}

TEST(perf_pipe, classic_loop_switches_twice_per_loop_with_plausible_cost)
{
    const pipe_run r = run_pipe({"-l", "1000"});
    EXPECT_TRUE(r.all_exited);
    EXPECT_EQ(r.nr_tasks, 2u);
    // One token: every loop each task sleeps once in read().
    EXPECT_GE(r.worker_switches, 1990u);
    EXPECT_LE(r.worker_switches, 2010u);
    const double usecs_per_op = static_cast<double>(r.usec) / 1000.0;
    EXPECT_GT(usecs_per_op, 1.0);
    EXPECT_LT(usecs_per_op, 30.0);
}

TEST(perf_pipe, classic_loop_on_one_cpu_switches_twice_per_loop)
{
    const pipe_run r = run_pipe({"-l", "1000"}, 1);
    EXPECT_GE(r.worker_switches, 1990u);
    EXPECT_LE(r.worker_switches, 2010u);
}

TEST(perf_pipe, variant_2025_keeps_two_tokens_in_flight)
{
    const pipe_run classic = run_pipe({"-l", "1000"});
    const pipe_run v2025 = run_pipe({"-l", "1000", "--variant=2025"});
    EXPECT_TRUE(v2025.all_exited);
    EXPECT_NE(classic.usec, v2025.usec);
    EXPECT_LT(v2025.worker_switches, classic.worker_switches);
}

TEST(perf_pipe, metrics_are_usecs_per_op_and_ops_per_sec)
{
    const pipe_run r = run_pipe({"-l", "1000"});
    ASSERT_EQ(r.metrics.size(), 2u);
    EXPECT_EQ(r.metrics[0].name, "usecs/op");
    EXPECT_DOUBLE_EQ(r.metrics[0].value, static_cast<double>(r.usec) / 1000.0);
    EXPECT_EQ(r.metrics[1].name, "ops/sec");
    EXPECT_TRUE(r.metrics[1].higher_is_better);
    EXPECT_NEAR(r.metrics[1].value * r.metrics[0].value, 1e6, 1e-3);
}

TEST(perf_pipe, threaded_mode_joins_both_threads)
{
    const pipe_run r = run_pipe({"-l", "500", "-T"});
    EXPECT_TRUE(r.all_exited);
    EXPECT_EQ(r.nr_tasks, 3u);
    EXPECT_THAT(r.report, HasSubstr("between two threads\n"));
}

TEST(perf_pipe, report_has_perfs_format)
{
    const pipe_run r = run_pipe({"-l", "1000"});
    EXPECT_THAT(r.report, MatchesRegex("# Running 'sched/pipe' benchmark:\n"
                                       "# Executed 1000 pipe operations between two processes\n"
                                       "\n"
                                       "     Total time: 0\\.[0-9][0-9][0-9] \\[sec\\]\n"
                                       "\n"
                                       " +[0-9]+\\.[0-9][0-9][0-9][0-9][0-9][0-9] usecs/op\n"
                                       " +[0-9]+ ops/sec\n"));
    // " %14lf usecs/op": the number is right-aligned in 14 columns after one space.
    const auto pos = r.report.find(" usecs/op");
    ASSERT_NE(pos, std::string::npos);
    const auto line_start = r.report.rfind('\n', pos) + 1;
    EXPECT_EQ(pos - line_start, 15u);
}

} // namespace
} // namespace schedlab
