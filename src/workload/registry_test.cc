// SPDX-License-Identifier: GPL-2.0-only
/*
 * The workload table: command lines to workloads.
 */
#include "workload/registry.h"

#include "sim/config_error.h"
#include "workload/hackbench.h"
#include "workload/perf_pipe.h"
#include "workload/test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

std::string error_of(const std::vector<std::string>& argv)
{
    try {
        make_workload(argv);
    } catch (const config_error& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(make_workload, perf_command_lines_select_the_benchmark_and_its_options)
{
    auto w = make_workload({"perf", "bench", "sched", "messaging", "-g", "4", "-p", "-l", "100"});
    EXPECT_EQ(w->name(), "sched/messaging");
    EXPECT_EQ(w->command_line(), "perf bench sched messaging --group 4 --nr_loops 100 --pipe");
    auto* m = dynamic_cast<messaging_workload*>(w.get());
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->params().groups, 4u);

    w = make_workload({"perf", "bench", "sched", "pipe", "-l", "50000"});
    EXPECT_EQ(w->name(), "sched/pipe");
    EXPECT_EQ(w->command_line(), "perf bench sched pipe --loop 50000 --variant=classic");
}

TEST(make_workload, hackbench_is_an_alias_of_perf_messaging)
{
    auto w = make_workload({"hackbench", "-g", "2", "-t"});
    auto* m = dynamic_cast<messaging_workload*>(w.get());
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->params().groups, 2u);
    EXPECT_TRUE(m->params().thread);
}

TEST(make_workload, unknown_workloads_list_the_known_ones)
{
    const std::string e = error_of({"perf", "bench", "sched", "mesaging", "-g", "4"});
    EXPECT_THAT(e, HasSubstr("unknown workload 'perf bench sched mesaging'"));
    EXPECT_THAT(e, HasSubstr("did you mean 'perf bench sched messaging'"));
    EXPECT_THAT(e, HasSubstr("perf bench sched pipe"));
    EXPECT_THAT(e, HasSubstr("hackbench"));
    EXPECT_THAT(error_of({}), HasSubstr("unknown workload"));
    EXPECT_THAT(error_of({"perf", "bench", "sched", "pipe", "--bogus"}), HasSubstr("'--bogus'"));
}

TEST(make_workload, every_known_workload_runs_to_completion)
{
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {"perf", "bench", "sched", "messaging", "-g", "1", "-l", "2"},
             {"hackbench", "-g", "1", "-l", "2", "-p", "-t"},
             {"perf", "bench", "sched", "pipe", "-l", "100"},
             {"perf", "bench", "sched", "pipe", "-l", "100", "-T", "--variant=2025"}}) {
        testing::test_env t(2);
        auto w = make_workload(argv);
        w->setup(t.k);
        t.k.run(secs(10));
        EXPECT_TRUE(w->finished()) << argv[0];
        EXPECT_TRUE(t.k.all_exited()) << w->command_line();
        EXPECT_THAT(w->report(), HasSubstr("Total time: ")) << w->command_line();
    }
}

} // namespace
} // namespace schedlab
