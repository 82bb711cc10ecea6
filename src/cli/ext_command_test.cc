// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ext class through the real binary (docs/classes.md): a `+ext:POLICY` kernel spec
 * in run and compare, a policy that cannot load refused before anything runs, and a
 * policy the watchdog ejects reported with its task, CPU and time and exit status 2.
 */
#include "cli/bin_test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace schedlab {
namespace {

using test_support::schedlab_bin;
using ::testing::HasSubstr;

TEST(ext_command, compare_runs_the_fair_class_against_an_ext_policy)
{
    const auto r = schedlab_bin("compare --machine ryzen-7950x --runs 1 --kernel 6.12 "
                                "--kernel 6.12+ext:simple -- perf bench sched pipe -l 200");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("6.12+ext:simple"));
    // lkp's commit lines name each arm by its configuration: the ext policy is part of it.
    const auto id_of = [&](const std::string& arm) {
        const auto end = r.output.find(" (\"" + arm + "\")");
        const auto begin = r.output.rfind('\n', end);
        return end == std::string::npos || begin == std::string::npos
                   ? std::string()
                   : r.output.substr(begin + 1, end - begin - 1);
    };
    EXPECT_FALSE(id_of("6.12").empty()) << r.output;
    EXPECT_FALSE(id_of("6.12+ext:simple").empty()) << r.output;
    EXPECT_NE(id_of("6.12"), id_of("6.12+ext:simple")) << r.output;
}

TEST(ext_command, a_policy_that_cannot_run_is_refused_naming_the_kernel_flag)
{
    const std::string bench = " -- perf bench sched pipe -l 10";
    auto r = schedlab_bin("run --kernel 6.12+ext:/nonexistent/policy.so" + bench);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("--kernel: cannot load ext policy '/nonexistent/policy.so'"));
    // A directory escaped as std::ios_failure (terminate, exit 134) and /dev/zero was read
    // until memory ran out (std::bad_alloc) before both went through read_input_file().
    r = schedlab_bin("run --kernel 6.12+ext:/tmp" + bench);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output,
                HasSubstr("--kernel: cannot load ext policy '/tmp': '/tmp' is a directory"));
    r = schedlab_bin("run --kernel 6.12+ext:/dev/zero" + bench);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("--kernel: cannot load ext policy '/dev/zero': the shared "
                                    "object '/dev/zero' is larger than the 64 MiB limit"));
    r = schedlab_bin("run --kernel 6.6+ext:simple" + bench);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("kernel 6.6 has no sched_ext"));
    r = schedlab_bin("run --kernel 6.12+ext:simpel" + bench);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("unknown ext policy 'simpel'"));
}

#ifdef SCHEDLAB_STALL_POLICY
TEST(ext_command, an_ejected_policy_fails_the_run_with_task_cpu_and_time)
{
    // examples/ext_policy/stall_policy.c keeps every task it is given (timeout_ms 100): 80
    // hackbench tasks on 32 CPUs leave some with it, and the watchdog ejects the policy.
    const auto r = schedlab_bin(std::string("run --machine ryzen-7950x --kernel 6.12+ext:") +
                                SCHEDLAB_STALL_POLICY +
                                " -- perf bench sched messaging -g 2 -l 10");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("--kernel: ext policy '"));
    EXPECT_THAT(r.output, HasSubstr("was ejected at 0.150000000 s on cpu"));
    EXPECT_THAT(r.output, HasSubstr("(runnable task stall): sched-messaging["));
    EXPECT_THAT(r.output, HasSubstr("failed to run for"));
}
#endif

} // namespace
} // namespace schedlab
