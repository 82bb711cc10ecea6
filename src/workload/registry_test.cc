// SPDX-License-Identifier: GPL-2.0-only
/*
 * The workload table: command lines to workloads.
 */
#include "workload/registry.h"

#include "sim/config_error.h"
#include "support/workload_env.h"
#include "workload/hackbench.h"
#include "workload/perf_pipe.h"

#include <gmock/gmock.h>
#include "sim/test_support.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;

std::string registry_error(const std::vector<std::string>& argv)
{
    return test_support::error_of([&] { make_workload(argv); }, "(accepted)");
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
    const std::string e = registry_error({"perf", "bench", "sched", "mesaging", "-g", "4"});
    EXPECT_THAT(e, HasSubstr("unknown workload 'perf bench sched mesaging'"));
    EXPECT_THAT(e, HasSubstr("did you mean 'perf bench sched messaging'"));
    EXPECT_THAT(e, HasSubstr("perf bench sched pipe"));
    EXPECT_THAT(e, HasSubstr("hackbench"));
    EXPECT_THAT(registry_error({}), HasSubstr("unknown workload"));
    EXPECT_THAT(registry_error({"perf", "bench", "sched", "pipe", "--bogus"}), HasSubstr("'--bogus'"));
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
        w->setup(t.k.sys());
        t.k.run(secs(10));
        EXPECT_TRUE(w->finished()) << argv[0];
        EXPECT_TRUE(t.k.all_exited()) << w->command_line();
        EXPECT_THAT(w->report(), HasSubstr("Total time: ")) << w->command_line();
    }
}

} // namespace
} // namespace schedlab

namespace schedlab {
namespace {

TEST(with_load, sets_each_benchmarks_load_option)
{
    using v = std::vector<std::string>;
    EXPECT_EQ(with_load({"hackbench", "-g", "4", "-p"}, "8"), (v{"hackbench", "-g", "8", "-p"}));
    EXPECT_EQ(with_load({"perf", "bench", "sched", "messaging", "-g4"}, "2"),
              (v{"perf", "bench", "sched", "messaging", "-g2"}));
    EXPECT_EQ(with_load({"tbench", "-t", "3", "8", "127.0.0.1"}, "64"),
              (v{"tbench", "-t", "3", "64", "127.0.0.1"}));
    EXPECT_EQ(with_load({"netperf", "-t", "TCP_RR", "--", "-r", "100"}, "16"),
              (v{"netperf", "-t", "TCP_RR", "--instances", "16", "--", "-r", "100"}));
    EXPECT_EQ(with_load({"schbench", "-m", "2", "-t", "4"}, "32"), (v{"schbench", "-m", "2", "-t", "32"}));
    EXPECT_EQ(with_load({"context_switch1_threads", "-s", "3"}, "8"),
              (v{"context_switch1_threads", "-s", "3", "-t", "8"}));
    EXPECT_EQ(with_load({"stream", "--threads=4"}, "16"), (v{"stream", "--threads=16"}));
    EXPECT_EQ(with_load({"make", "-j", "8", "vmlinux"}, "64"), (v{"make", "-j", "64", "vmlinux"}));
    EXPECT_THROW(with_load({"rt-app", "x.json"}, "2"), config_error);
    EXPECT_THROW(with_load({"replay", "trace.txt"}, "2"), config_error); // no load either
    // Found by the bench_cmdline fuzz target: an environment word made a null dereference.
    EXPECT_EQ(with_load({"OMP_NUM_THREADS=4", "stream"}, "8"),
              (v{"OMP_NUM_THREADS=4", "stream", "--threads", "8"}));
    for (const auto& w : known_workloads()) {
        if (w.command != "rt-app" && w.command != "replay") {
            EXPECT_FALSE(w.load_option.empty()) << w.command;
        }
    }
}

TEST(make_workload, the_new_benchmarks_are_in_the_table)
{
    for (const auto& argv : std::vector<std::vector<std::string>>{
             {"tbench", "-t", "1.5", "1"}, // 0.5 s measures nothing (no report)
             {"netperf", "-l", "-20"},
             {"schbench", "-t", "2", "-r", "1", "-F", "8", "-n", "1"},
             {"context_switch1_processes", "-s", "1", "--warmup", "0", "--interval", "0.01"},
             {"stream", "--threads", "2", "--array-size", "10000", "--ntimes", "2"},
             {"make", "-j", "2", "--objects", "10", "--dirs", "2", "--compile-ms", "5"}}) {
        testing::test_env t(2);
        t.k.set_check_level(check_level::sampled, 64);
        auto w = make_workload(argv);
        w->setup(t.k.sys());
        t.k.run(secs(20));
        EXPECT_TRUE(w->finished()) << argv[0];
        EXPECT_TRUE(t.k.all_exited()) << w->command_line();
        EXPECT_FALSE(w->metrics().empty()) << argv[0];
        // The canonical command line builds the same workload.
        std::vector<std::string> again;
        std::string cl = w->command_line();
        for (std::size_t i = 0, j; i < cl.size(); i = j + 1) {
            j = cl.find(' ', i);
            if (j == std::string::npos)
                j = cl.size();
            again.push_back(cl.substr(i, j - i));
        }
        EXPECT_EQ(make_workload(again)->command_line(), cl);
    }
}

} // namespace
} // namespace schedlab
