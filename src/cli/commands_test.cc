// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line end to end: subcommand output, a whole hackbench run,
 * determinism of the printed result, and the exit code and message of the
 * real binary for every kind of bad input.
 */
#include "cli/commands.h"

#include "sim/config_error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(cmd_machines, lists_every_preset)
{
    std::ostringstream out;
    EXPECT_EQ(cmd_machines(out), 0);
    for (const char* name : {"bergamo-2s", "milan-2s", "spr-2s", "ryzen-7950x", "skylake-18c",
                             "host"})
        EXPECT_THAT(out.str(), HasSubstr(name));
}

TEST(cmd_topology, prints_the_bergamo_domain_tree_like_the_kernel)
{
    std::ostringstream out;
    EXPECT_EQ(cmd_topology(out, "bergamo-2s", false, false), 0);
    const std::string s = out.str();
    EXPECT_THAT(s, HasSubstr("CPU0 attaching sched-domain(s):\n domain-0: span=0,256 level=SMT\n"));
    EXPECT_THAT(s, HasSubstr("  domain-1: span=0-7,256-263 level=MC\n"));
    EXPECT_THAT(s, HasSubstr("   domain-2: span=0-127,256-383 level=DIE\n"));
    EXPECT_THAT(s, HasSubstr("    domain-3: span=0-511 level=NUMA\n"));
}

TEST(cmd_features, marks_features_a_kernel_lacks)
{
    std::ostringstream out;
    cmd_features(out, "");
    EXPECT_THAT(out.str(), ::testing::ContainsRegex("PLACE_LAG +on +- +- +-"));
    std::ostringstream one;
    cmd_features(one, "6.6+NO_RUN_TO_PARITY");
    EXPECT_THAT(one.str(), ::testing::ContainsRegex("RUN_TO_PARITY +off"));
}

std::string run_hackbench(u64 seed, const std::string& machine = "skylake-18c")
{
    run_options o;
    o.machine = machine;
    o.kernel = "6.6";
    o.seed = seed;
    o.workload_argv = {"perf", "bench", "sched", "messaging", "-g", "1", "-l", "20"};
    std::ostringstream out, err;
    EXPECT_EQ(cmd_run(out, err, o), 0) << err.str();
    return out.str();
}

TEST(cmd_run, hackbench_prints_perf_output_then_the_scheduler_summary)
{
    const std::string s = run_hackbench(7);
    EXPECT_THAT(s, HasSubstr("# 20 sender and receiver processes per group"));
    EXPECT_THAT(s, ::testing::ContainsRegex("Total time: [0-9]+\\.[0-9]{3} \\[sec\\]"));
    EXPECT_THAT(s, HasSubstr("# context switches:"));
    EXPECT_THAT(s, HasSubstr("# wakeup-to-run latency (us): p50"));
    EXPECT_THAT(s, HasSubstr("# per-cpu utilisation (%):"));
}

TEST(cmd_run, output_is_bit_identical_for_a_seed_and_differs_across_seeds)
{
    const std::string a = run_hackbench(7), b = run_hackbench(7), c = run_hackbench(8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
}

TEST(cmd_run, rejects_bad_input_before_simulating)
{
    run_options o;
    o.machine = "skylake-18c";
    o.workload_argv = {"perf", "bench", "sched", "messaging"};
    std::ostringstream out, err;
    o.features = "NO_RUN_TO_PARTY";
    EXPECT_THROW(cmd_run(out, err, o), config_error);
    o.features = "";
    o.costs = {"nosuch=1"};
    EXPECT_THROW(cmd_run(out, err, o), config_error);
}

/* ---- the binary: exit codes and messages ---- */

struct proc_result {
    int status;
    std::string output; // stdout + stderr
};

proc_result run_bin(const std::string& args)
{
    const std::string cmd = std::string(SCHEDLAB_BIN) + " " + args + " 2>&1";
    FILE* f = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), f))
        out += buf.data();
    const int st = pclose(f);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

TEST(schedlab_binary, unknown_flag_exits_2_naming_the_flag)
{
    const auto r = run_bin("run --bogus -- perf bench sched pipe");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("--bogus"));
}

TEST(schedlab_binary, unknown_preset_exits_2_with_a_hint)
{
    const auto r = run_bin("run --machine milan-s2 -- perf bench sched pipe -l 10");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("milan-s2"));
    EXPECT_THAT(r.output, HasSubstr("milan-2s"));
}

TEST(schedlab_binary, unknown_feature_exits_2_naming_it)
{
    const auto r = run_bin("run --machine skylake-18c --features NO_RUN_TO_PARTY -- perf bench "
                           "sched pipe -l 10");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("--features: unknown sched feature 'NO_RUN_TO_PARTY'"));
}

TEST(schedlab_binary, unknown_kernel_exits_2)
{
    const auto r = run_bin("run --kernel 9.9 -- perf bench sched pipe -l 10");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("unknown kernel profile '9.9'"));
}

TEST(schedlab_binary, malformed_machine_file_exits_2_naming_the_file)
{
    const std::string path = ::testing::TempDir() + "/bad-machine.json";
    std::ofstream(path) << "{ \"format\": \"schedlab-machine-v1\", \"generate\": { \"sockets\": 2,\n"
                           "  \"cores_per_socket\": }\n}\n";
    const auto r = run_bin("topology " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("bad-machine.json"));
}

TEST(schedlab_binary, unknown_benchmark_exits_2)
{
    const auto r = run_bin("run --machine skylake-18c -- nosuchbench -x");
    EXPECT_EQ(r.status, 2);
    EXPECT_THAT(r.output, HasSubstr("nosuchbench"));
}

TEST(schedlab_binary, a_run_prints_the_benchmark_result)
{
    const auto r = run_bin("run --machine skylake-18c --kernel 6.5 --seed 3 -- perf bench sched "
                           "pipe -l 2000");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("usecs/op"));
    EXPECT_THAT(r.output, Not(HasSubstr("warning")));
}

} // namespace
} // namespace schedlab
