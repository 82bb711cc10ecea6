// SPDX-License-Identifier: GPL-2.0-only
/*
 * Issue 16: benchmark sizes. Zero sizes are errors naming the option; requests that cannot
 * fit are refused before anything is allocated, with the estimate and the limit; seconds may
 * have fractions (netperf -l, schbench -r).
 */
#include "workload/options.h"
#include "workload/registry.h"

#include "sim/config_error.h"
#include "sim/file_io.h"
#include "sim/test_support.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace schedlab {
namespace {

using test_support::error_of;
using ::testing::HasSubstr;

std::string error_of_command(std::vector<std::string> argv)
{
    return error_of([&] { make_workload(argv); }, "(accepted)");
}

TEST(benchmark_sizes, zero_sizes_are_errors_naming_the_option)
{
    EXPECT_EQ(error_of_command({"perf", "bench", "sched", "messaging", "-g", "0"}),
              "perf bench sched messaging: option '-g/--group' must be at least 1");
    EXPECT_EQ(error_of_command({"perf", "bench", "sched", "messaging", "-l", "0"}),
              "perf bench sched messaging: option '-l/--nr_loops' must be at least 1");
    EXPECT_EQ(error_of_command({"hackbench", "-g", "0"}),
              "perf bench sched messaging: option '-g/--group' must be at least 1");
    EXPECT_EQ(error_of_command({"perf", "bench", "sched", "pipe", "-l", "0"}),
              "perf bench sched pipe: option '-l/--loop' must be at least 1");
    EXPECT_THAT(error_of_command({"stream", "--threads", "0"}),
                HasSubstr("option '--threads' (OMP_NUM_THREADS) must be at least 1"));
    EXPECT_THAT(error_of_command({"netperf", "-t", "TCP_RR", "-l", "0"}),
                HasSubstr("option '-l': 0 is not a test length"));
    // netperf's negative -l is a transaction count, as in netperf.
    EXPECT_EQ(error_of_command({"netperf", "-t", "TCP_RR", "-l", "-1"}), "(accepted)");
}

TEST(benchmark_sizes, what_cannot_fit_is_refused_with_the_estimate_and_the_limit)
{
    EXPECT_EQ(error_of_command({"perf", "bench", "sched", "messaging", "-g", "1000000"}),
              "perf bench sched messaging: 1000000 groups x 40 workers = 40000001 tasks, more "
              "than a kernel can run (PID_MAX_LIMIT, 4194304)");
    EXPECT_THAT(error_of_command({"schbench", "-m", "2000000000", "-t", "2000000000"}),
                HasSubstr("more than a kernel can run (PID_MAX_LIMIT, 4194304)"));
    // Within PID_MAX_LIMIT but not within memory: schbench's tasks take 45 KB each (42 GiB for
    // a million); any machine with less than 84 GiB refuses it.
    const double budget = memory_budget_bytes();
    ASSERT_GT(budget, 0);
    if (1000100 * 45e3 > budget) {
        const std::string e = error_of_command({"schbench", "-m", "100", "-t", "10000"});
        EXPECT_THAT(e, HasSubstr("schbench: 100 message threads x 10000 workers = 1000100 tasks "
                                 "(at most "));
        EXPECT_THAT(e, HasSubstr("need about 42 GiB"));
    }
    // tbench's largest NPROCS (100000; 5 KB per task) fits wherever 1 GiB does.
    if (200000 * 5e3 < budget) {
        EXPECT_EQ(error_of_command({"tbench", "100000"}), "(accepted)");
    }
    EXPECT_EQ(error_of_command({"perf", "bench", "sched", "messaging", "-g", "100"}), "(accepted)");
    EXPECT_THAT(error_of([] { check_task_count(5e6, 1, "five million", "x"); }),
                HasSubstr("x: five million = 5000000 tasks, more than a kernel can run"));
}

TEST(benchmark_sizes, seconds_may_have_fractions)
{
    EXPECT_EQ(make_workload({"netperf", "-t", "TCP_RR", "-l", "0.2"})->command_line().substr(0, 52),
              "netperf --instances 1 -t TCP_RR -H localhost -l 0.2 ");
    EXPECT_THAT(make_workload({"schbench", "-m", "1", "-t", "2", "-r", "0.5"})->command_line(),
                HasSubstr(" -r 0.5 "));
    EXPECT_THAT(make_workload({"schbench", "-m", "1", "-t", "2", "-r", "30"})->command_line(),
                HasSubstr(" -r 30 "));
}

TEST(benchmark_sizes, seconds_too_long_to_sum_are_refused_naming_the_option)
{
    // The fuzz target's finding: 38 digits overflowed the sum before the length was refused.
    const std::string many(38, '6');
    EXPECT_THAT(error_of_command({"tbench", "8", "-t", many}),
                HasSubstr("option '-t' expects a number of seconds, got '" + many + "'"));
    EXPECT_THAT(error_of_command({"tbench", "8", "-t", "1000000001"}),
                HasSubstr("option '-t' expects a number of seconds"));
}

} // namespace
} // namespace schedlab

namespace schedlab {
namespace {

// perf's OPT_UINTEGER options take an unsigned int: 2^32 and 10^18 are refused, and the
// message said only "a non-negative integer", which they are; it now gives the range.
TEST(benchmark_sizes, unsigned_options_past_an_unsigned_int_name_the_range)
{
    EXPECT_NO_THROW(make_workload({"hackbench", "-l", "4294967295"})); // UINT_MAX itself
    for (const char* v : {"4294967296", "1000000000000000000", "-1", "1e3"})
        EXPECT_EQ(error_of_command({"hackbench", "-l", v}),
                  fmt::format("perf bench sched messaging: option '-l' expects an integer from 0 "
                              "to 4294967295 (perf's OPT_UINTEGER, an unsigned int), got '{}'",
                              v));
}

} // namespace
} // namespace schedlab
