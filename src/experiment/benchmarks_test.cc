// SPDX-License-Identifier: GPL-2.0-only
#include "experiment/benchmarks.h"

#include "sim/config_error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedlab {
namespace {

using argv_t = std::vector<std::string>;

TEST(expand_load_list, one_command_line_per_group_count)
{
    const load_sweep s =
        expand_load_list({"perf", "bench", "sched", "messaging", "-g", "1,2,4,8", "-p"});
    EXPECT_EQ(s.loads, (argv_t{"1", "2", "4", "8"}));
    EXPECT_EQ(s.option, "-g");
    ASSERT_EQ(s.argv_per_load.size(), 4u);
    EXPECT_EQ(s.argv_per_load[2], (argv_t{"perf", "bench", "sched", "messaging", "-g", "4", "-p"}));
}

TEST(expand_load_list, joined_option_value_and_the_hackbench_alias)
{
    const load_sweep s = expand_load_list({"hackbench", "-g2,16", "-l", "5"});
    EXPECT_EQ(s.loads, (argv_t{"2", "16"}));
    EXPECT_EQ(s.option, "-g");
    EXPECT_EQ(s.argv_per_load[1], (argv_t{"hackbench", "-g16", "-l", "5"}));
}

TEST(expand_load_list, tbench_takes_its_load_as_the_first_argument)
{
    const load_sweep s = expand_load_list({"tbench", "-t", "2", "1,8,64"});
    EXPECT_EQ(s.loads, (argv_t{"1", "8", "64"}));
    EXPECT_EQ(s.argv_per_load[2], (argv_t{"tbench", "-t", "2", "64"}));
    EXPECT_EQ(argv_without_load({"tbench", "-t", "2", "8"}), (argv_t{"tbench", "-t", "2"}));
}

TEST(expand_load_list, a_single_value_or_no_load_option_leaves_the_command_alone)
{
    const argv_t one = {"perf", "bench", "sched", "messaging", "-g", "4"};
    EXPECT_EQ(expand_load_list(one).loads, (argv_t{"4"}));
    const argv_t none = {"perf", "bench", "sched", "messaging", "-p"};
    const load_sweep s = expand_load_list(none);
    EXPECT_TRUE(s.loads.empty());
    ASSERT_EQ(s.argv_per_load.size(), 1u);
    EXPECT_EQ(s.argv_per_load[0], none);
}

TEST(expand_load_list, rejects_empty_and_repeated_values_naming_the_option)
{
    try {
        expand_load_list({"perf", "bench", "sched", "messaging", "-g", "1,,4"});
        FAIL();
    } catch (const config_error& e) {
        EXPECT_THAT(e.what(), ::testing::HasSubstr("empty value in the load list '1,,4' of -g"));
    }
    EXPECT_THROW(expand_load_list({"perf", "bench", "sched", "messaging", "-g", "2,4,2"}),
                 config_error);
    EXPECT_THROW(expand_load_list({"nosuchbench", "1,2"}), config_error);
}

TEST(argv_without_load, drops_the_option_and_its_value)
{
    EXPECT_EQ(argv_without_load({"perf", "bench", "sched", "messaging", "-g", "4", "-p"}),
              (argv_t{"perf", "bench", "sched", "messaging", "-p"}));
    EXPECT_EQ(argv_without_load({"hackbench", "-g4", "-t"}), (argv_t{"hackbench", "-t"}));
}

TEST(benchmark_table, mmtests_names_follow_the_mode_and_ipc)
{
    const benchmark_info* b = find_benchmark({"perf", "bench", "sched", "messaging", "-p"});
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->mmtests_name({"-g", "4", "-p"}), "hackbench-process-pipes");
    EXPECT_EQ(b->mmtests_name({"-t"}), "hackbench-thread-sockets");
    EXPECT_EQ(b->mmtests_decimals, 4);
    EXPECT_EQ(find_benchmark({"nosuch"}), nullptr);
}

TEST(benchmark_table, lkp_hackbench_throughput_is_lkps_kb_over_the_time)
{
    // lkp-tests programs/hackbench/parse: kb = (tasks * messages * bytes) >> 10, kb / time.
    const benchmark_info* b = find_benchmark({"hackbench"});
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(b->lkp_stats.size(), 1u);
    const lkp_stat_info& s = b->lkp_stats[0];
    EXPECT_EQ(s.metric, "time");
    EXPECT_EQ(s.key, "throughput");
    // 10 groups x 40 tasks x 1000 messages x 100 bytes = 40000000 B = 39062 KB (truncated)
    EXPECT_DOUBLE_EQ(s.from_metric({"hackbench", "-g", "10", "-l", "1000"}, 2.0), 39062 / 2.0);
    EXPECT_DOUBLE_EQ(s.from_metric({"perf", "bench", "sched", "messaging", "-g", "1", "-p"}, 0.5),
                     static_cast<double>((40 * 100 * 100) >> 10) / 0.5);
    EXPECT_EQ(b->lkp_load_param, "nr_threads"); // lkp's hackbench -g $nr_threads
}

// Issue 16, item 21: an A/B of one rt-app file across kernels was refused ("no load option").
TEST(expand_load_list, a_workload_without_a_load_option_is_one_load)
{
    const argv_t rtapp = {"rt-app", "tasks.json"};
    const load_sweep s = expand_load_list(rtapp);
    EXPECT_TRUE(s.loads.empty());
    ASSERT_EQ(s.argv_per_load.size(), 1u);
    EXPECT_EQ(s.argv_per_load[0], rtapp);
}
} // namespace
} // namespace schedlab
