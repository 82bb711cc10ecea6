// SPDX-License-Identifier: GPL-2.0-only
/*
 * STREAM: options, the bandwidth share, barrier-separated kernels, output.
 */
#include "workload/stream.h"

#include "sim/config_error.h"
#include "support/workload_env.h"
#include "workload/registry.h"

#include <gmock/gmock.h>
#include "sim/test_support.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using testing::test_env;

std::string stream_error(const std::vector<std::string>& argv)
{
    return test_support::error_of([&] { make_workload(argv); }, "(accepted)");
}

TEST(stream_options, defaults_the_omp_environment_and_rejections)
{
    const stream_params sp = parse_stream_options({});
    EXPECT_EQ(sp.threads, 0u);
    EXPECT_EQ(sp.array_size, 10'000'000u);
    EXPECT_EQ(sp.ntimes, 10u);
    auto w = make_workload({"OMP_NUM_THREADS=16", "stream", "--ntimes", "3"});
    EXPECT_EQ(w->command_line(), "stream --threads 16 --array-size 10000000 --ntimes 3 --core-bw 20 "
                                 "--llc-bw 40 --node-bw 100");
    EXPECT_THAT(stream_error({"OMP_PROC_BIND=true", "stream"}), HasSubstr("'OMP_PROC_BIND=true'"));
    EXPECT_THAT(stream_error({"OMP_NUM_THREADS=2", "tbench", "2"}), HasSubstr("OMP_NUM_THREADS"));
    EXPECT_THAT(stream_error({"stream", "--ntimes", "1"}), HasSubstr("'--ntimes'"));
    EXPECT_THAT(stream_error({"stream", "--node-bw", "0"}), HasSubstr("'--node-bw'"));
    EXPECT_THAT(stream_error({"stream", "--array-size", "-5"}), HasSubstr("'--array-size'"));
    EXPECT_THAT(stream_error({"stream", "-t", "4"}), HasSubstr("'-t'"));
}

struct st_run {
    std::unique_ptr<stream_workload> w;
    std::unique_ptr<test_env> t;
};

st_run run_stream(const std::vector<std::string>& args, int cores)
{
    st_run r;
    r.t = std::make_unique<test_env>(cores);
    r.w = std::make_unique<stream_workload>(parse_stream_options(args));
    r.w->setup(r.t->k.sys());
    r.t->k.run(secs(60));
    return r;
}

TEST(stream, one_thread_runs_at_the_core_bandwidth)
{
    const st_run r = run_stream({"--threads", "1", "--array-size", "1000000", "--ntimes", "3"}, 1);
    ASSERT_TRUE(r.w->finished());
    // Copy: 16 MB at 20 GB/s = 800 us; the clock and barrier costs add a few us.
    EXPECT_NEAR(r.w->best_rate(0), 20'000.0, 200.0);
    EXPECT_NEAR(r.w->best_rate(3), 20'000.0, 200.0);
    const auto m = r.w->metrics();
    ASSERT_EQ(m.size(), 4u);
    EXPECT_EQ(m[3].name, "Triad");
    EXPECT_DOUBLE_EQ(m[3].value, r.w->best_rate(3));
}

TEST(stream, threads_of_one_llc_share_its_bandwidth)
{
    // Four threads on four CPUs of one LLC: min(20, 40 / 4, 100 / 4) = 10 GB/s each, 40 in all.
    const st_run r = run_stream({"--threads", "4", "--array-size", "1000000", "--ntimes", "3"}, 4);
    ASSERT_TRUE(r.w->finished());
    EXPECT_EQ(r.w->max_llc_sharing(), 4u);
    // (A thread that starts a kernel alone runs at 20 GB/s until the others arrive: a few % more.)
    EXPECT_NEAR(r.w->best_rate(0), 40'000.0, 2500.0);
    // Raising the LLC limit leaves the node's 100 GB/s as the bound: 80 GB/s for 4 x 20.
    const st_run wide = run_stream({"--threads", "4", "--array-size", "1000000", "--ntimes", "3",
                                    "--llc-bw", "1000"},
                                   4);
    EXPECT_NEAR(wide.w->best_rate(0), 80'000.0, 3000.0);
}

TEST(stream, two_threads_stacked_on_one_cpu_are_no_faster_than_one)
{
    const st_run one_cpu = run_stream({"--threads", "2", "--array-size", "1000000", "--ntimes", "3"}, 1);
    const st_run two_cpus = run_stream({"--threads", "2", "--array-size", "1000000", "--ntimes", "3"}, 2);
    EXPECT_NEAR(one_cpu.w->best_rate(2), 20'000.0, 400.0);
    EXPECT_NEAR(two_cpus.w->best_rate(2), 40'000.0, 1000.0);
}

TEST(stream, each_kernel_starts_after_every_thread_finished_the_previous_one)
{
    const st_run r = run_stream({"--threads", "3", "--array-size", "300000", "--ntimes", "2"}, 2);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    const auto& reg = r.w->regions();
    ASSERT_EQ(reg.size(), 2u + 4 * 2); // init, timer test, 2 x 4 kernels
    for (std::size_t i = 0; i + 1 < reg.size(); ++i) {
        EXPECT_LT(reg[i].first, reg[i].second);
        EXPECT_GE(reg[i + 1].first, reg[i].second) << "region " << i + 1 << " overlaps " << i;
    }
    EXPECT_EQ(r.w->team().size(), 3u);
    EXPECT_EQ(r.w->team()[1]->tgid, r.w->team()[0]->tgid);
}

TEST(stream, output_has_streams_table)
{
    const st_run r = run_stream({"--threads", "2", "--array-size", "200000", "--ntimes", "3"}, 2);
    const std::string out = r.w->report();
    EXPECT_THAT(out, HasSubstr("Array size = 200000 (elements), Offset = 0 (elements)\n"
                               "Memory per array = 1.5 MiB (= 0.0 GiB).\n"));
    EXPECT_THAT(out, HasSubstr("Number of Threads requested = 2\n"));
    EXPECT_THAT(out, ContainsRegex("Function    Best Rate MB/s  Avg time     Min time     Max time\n"
                                   "Copy:      [ 0-9]{10}\\.[0-9]  [ 0-9]{4}\\.[0-9]{6}  "
                                   "[ 0-9]{4}\\.[0-9]{6}  [ 0-9]{4}\\.[0-9]{6}\n"
                                   "Scale:      .*\nAdd:        .*\nTriad:      .*\n---"));
}

} // namespace
} // namespace schedlab
