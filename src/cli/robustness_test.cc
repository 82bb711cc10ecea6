// SPDX-License-Identifier: GPL-2.0-only
/*
 * Issue 16 through the real binary: every bad or extreme input ends with exit 2 and a
 * message naming it (never a crash, a runaway or a silent default), outputs are checked
 * before anything runs and written whole or not at all. The whole list is re-tried by
 * tests/robustness/reproducers.sh.
 */
#include "cli/bin_test_support.h"
#include "sim/scratch_dir_test_support.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace schedlab {
namespace {

namespace fs = std::filesystem;
using test_support::schedlab_bin;
using ::testing::HasSubstr;
using ::testing::Not;

using robustness = test_support::scratch_dir;

const std::string pipe_run = "run --machine ryzen-7950x ";
const std::string pipe_bench = " -- perf bench sched pipe -l 100";

void expect_refused(const test_support::bin_result& r, const std::string& message)
{
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr(message));
}

TEST_F(robustness, numbers_are_range_checked_with_readable_ranges)
{
    expect_refused(schedlab_bin(pipe_run + "--seed -1" + pipe_bench),
                   "--seed: '-1' is not a seed (a whole number from 0 to 18446744073709551615)");
    expect_refused(schedlab_bin(pipe_run + "--seed 18446744073709551616" + pipe_bench),
                   "--seed: 18446744073709551616 is larger than the largest seed");
    for (const char* t : {"nan", "1e10", "1e300", "0", "-1", "inf"})
        expect_refused(schedlab_bin(pipe_run + "--time-limit " + t + pipe_bench),
                       fmt::format("--time-limit: {} is outside (0, 1000000] seconds", t));
    expect_refused(schedlab_bin("compare --kernel 6.6 --runs 0" + pipe_bench),
                   "--runs: 0 is outside [1, 10000]");
    expect_refused(schedlab_bin("compare --kernel 6.6 --jobs 0" + pipe_bench),
                   "--jobs: 0 is outside [1, 1024]");
    expect_refused(schedlab_bin("fidelity --threshold -5 x.json"),
                   "--threshold: -5 is outside [0, 100] percent");
    expect_refused(schedlab_bin(pipe_run + "--html x.html --timeline-window 0,1e300" + pipe_bench),
                   "--timeline-window: '0,1e300': need 0 <= FROM < TO <= the time limit");
    expect_refused(schedlab_bin(pipe_run + "--timeline-window 0,1" + pipe_bench),
                   "--timeline-window: the timeline is drawn in the --html report");
    expect_refused(schedlab_bin("compare --kernel 6.6 --html x.html --timeline 2,-,0" + pipe_bench),
                   "--timeline: '2,-,0': arm 2 is not one of 1..1");
    // CLI11's PositiveNumber printed DBL_MAX's 309 digits as the range.
    EXPECT_THAT(schedlab_bin(pipe_run + "--time-limit 0" + pipe_bench).output,
                Not(HasSubstr("179769313486231570")));
    expect_refused(
        schedlab_bin(pipe_run + "--cost cstate_deep_exit=9223372036854775807" + pipe_bench),
        "--cost: cost 'cstate_deep_exit': 9223372036854775807 is implausibly large");
}

TEST_F(robustness, an_unknown_command_is_named)
{
    expect_refused(schedlab_bin("bogus"), "unknown command 'bogus'; the commands are machines,");
    expect_refused(schedlab_bin("topolgy bergamo-2s"), "(did you mean 'topology'?)");
}

TEST_F(robustness, malformed_inputs_are_named_not_crashes)
{
    expect_refused(schedlab_bin("topology " + write("x.json", "2E482")),
                   "x.json: malformed JSON: number overflow parsing '2E482'");
    const std::string deep =
        write("d.json", "{\"tasks\":" + std::string(50000, '[') + std::string(50000, ']') + "}");
    expect_refused(schedlab_bin(pipe_run + "-- rt-app " + deep),
                   "d.json:1:73: nested more than 64 levels deep");
    expect_refused(schedlab_bin("topology /dev/zero"),
                   "/dev/zero: the machine file is larger than the 16 MiB limit");
    expect_refused(schedlab_bin(pipe_run + "-- rt-app " + dir_.string()),
                   "is a directory, not a rt-app file");
    expect_refused(schedlab_bin(pipe_run + "-- rt-app " +
                                write("k.json", R"({"tasks": {"t1": {"bogus": 1}}})")),
                   "task 't1' has no event ('bogus' is not an rt-app property or event)");
    expect_refused(schedlab_bin(pipe_run + "-- perf bench sched messaging -g 1000000"),
                   "1000000 groups x 40 workers = 40000001 tasks, more than a kernel can run");
}

TEST_F(robustness, output_paths_are_checked_before_anything_runs)
{
    // A directory: refused before the (here long) comparison, not after it.
    const auto r = schedlab_bin("compare --machine ryzen-7950x --kernel 6.6 --runs 1 --json " +
                                dir_.string() + " -- tbench 64 -t 600");
    expect_refused(r, "--json: '" + dir_.string() + "' is a directory; give a file name");
    EXPECT_THAT(r.output, Not(HasSubstr("Throughput")));
    expect_refused(schedlab_bin(pipe_run + "--trace " + path("no/such/t.txt") + pipe_bench),
                   "--trace: cannot write '" + path("no/such/t.txt") + "': the directory");
    expect_refused(schedlab_bin(pipe_run + "--trace " + path("t.xz") + pipe_bench),
                   ".xz compression is not supported");
    // calibrate measures for ~2-10 s: an unusable -o is refused first.
    expect_refused(schedlab_bin("calibrate --quick -o " + dir_.string()),
                   "--output: '" + dir_.string() + "' is a directory; give a file name");
    expect_refused(schedlab_bin("calibrate --quick -o /proc/no-such-dir/host.json"),
                   "--output: cannot write '/proc/no-such-dir/host.json': the directory");
}

TEST_F(robustness, write_errors_fail_the_command_and_leave_old_files_whole)
{
    expect_refused(schedlab_bin(pipe_run + "--explain /dev/full" + pipe_bench),
                   "--explain: cannot write '/dev/full': No space left on device");
    const std::string json = write("old.json", "old contents\n");
    expect_refused(
        schedlab_bin(pipe_run + "--json " + json + " -- perf bench sched messaging -g 0"),
        "must be at least 1");
    EXPECT_EQ(slurp(json), "old contents\n");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 1); // no temporary left over
}

TEST_F(robustness, a_gz_trace_is_gzip)
{
    const auto r = schedlab_bin(pipe_run + "--trace " + path("t.gz") + pipe_bench);
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string gz = slurp(path("t.gz"));
    ASSERT_GE(gz.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
}

TEST_F(robustness, report_refuses_the_same_run_twice)
{
    const std::string res = path("res.json");
    ASSERT_EQ(schedlab_bin(pipe_run + "--json " + res + pipe_bench).status, 0);
    expect_refused(schedlab_bin("report " + res + " " + res),
                   "runs[0] (arm 6.6, load -, seed 1) is the same run as " + res + " runs[0]");
}

TEST_F(robustness, a_benchmark_that_measured_nothing_is_an_error)
{
    const auto r = schedlab_bin(pipe_run + "-- tbench 2 -t 0.5");
    expect_refused(r, "tbench measured nothing: its 0.5 s time limit ended before");
    EXPECT_THAT(r.output, Not(HasSubstr("nan")));
}

TEST_F(robustness, one_rt_app_file_compares_across_kernels_and_deltas_off_their_base_warn)
{
    const std::string f = write("one.json", R"({"tasks": {"t": {"loop": 20, "run": 1000,
                                                 "sleep": 1000}}})");
    const auto r = schedlab_bin("compare --machine ryzen-7950x --kernel 6.6 --kernel 6.5 --runs 2 "
                                "--format amd -- rt-app " +
                                f);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("6.5"));
    const auto w = schedlab_bin(pipe_run + "--kernel 5.15+shared_runq_v3" + pipe_bench);
    EXPECT_EQ(w.status, 0) << w.output;
    EXPECT_THAT(w.output, HasSubstr("warning: kernel delta 'shared_runq_v3' was posted against "
                                    "tip-2023-08, not 5.15"));
}

} // namespace
} // namespace schedlab
