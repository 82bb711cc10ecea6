// SPDX-License-Identifier: GPL-2.0-only
/*
 * make -j N: options, the DAG, the job limit, the serial link tail and
 * /usr/bin/time's output.
 */
#include "workload/kbuild.h"

#include "sim/config_error.h"
#include "support/workload_env.h"

#include <gmock/gmock.h>
#include "sim/test_support.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::test_env;

std::string kbuild_error(const std::vector<std::string>& args)
{
    return test_support::error_of([&] { parse_kbuild_options(args); }, "(accepted)");
}

TEST(kbuild_options, make_job_forms_and_rejections)
{
    EXPECT_EQ(parse_kbuild_options({}).jobs, 1u);
    EXPECT_EQ(parse_kbuild_options({"-j", "8", "vmlinux"}).jobs, 8u);
    EXPECT_EQ(parse_kbuild_options({"-j8"}).jobs, 8u);
    EXPECT_EQ(parse_kbuild_options({"--jobs=16"}).jobs, 16u);
    EXPECT_EQ(parse_kbuild_options({"-j", "vmlinux"}).jobs, 0u) << "-j without N: unlimited";
    EXPECT_EQ(parse_kbuild_options({"-j", "vmlinux"}).targets.at(0), "vmlinux");
    EXPECT_THAT(kbuild_error({"-j0"}), HasSubstr("'-j'"));
    EXPECT_THAT(kbuild_error({"-k"}), HasSubstr("'-k' is not modelled"));
    EXPECT_THAT(kbuild_error({"CC=clang"}), HasSubstr("'CC=clang'"));
    EXPECT_THAT(kbuild_error({"--objects", "0"}), HasSubstr("'--objects'"));
}

TEST(kbuild_dag, compiles_then_archives_then_a_fixed_link_tail)
{
    kbuild_params kp;
    kp.objects = 50;
    kp.dirs = 5;
    const auto dag = kbuild_dag(kp);
    ASSERT_EQ(dag.size(), 50u + 5 + 5);
    for (std::size_t i = 0; i < 50; ++i)
        EXPECT_EQ(dag[i].kind, kbuild_job::compile);
    for (std::size_t i = 50; i < 55; ++i)
        EXPECT_EQ(dag[i].kind, kbuild_job::archive);
    EXPECT_EQ(dag.back().name, "vmlinux");
    // The tree is the same for every run.
    const auto again = kbuild_dag(kp);
    for (std::size_t i = 0; i < dag.size(); ++i)
        EXPECT_EQ(dag[i].cpu, again[i].cpu);
}

struct kb_run {
    std::unique_ptr<kbuild_workload> w;
    std::unique_ptr<test_env> t;
};

kb_run run_make(const std::vector<std::string>& args, int cores, u64 seed = 1)
{
    kb_run r;
    r.t = std::make_unique<test_env>(cores, seed);
    r.t->k.set_check_level(check_level::sampled, 64);
    r.w = std::make_unique<kbuild_workload>(parse_kbuild_options(args));
    r.w->setup(r.t->k.sys());
    r.t->k.run(secs(600));
    return r;
}

TEST(kbuild, make_never_runs_more_than_n_jobs_and_the_link_tail_is_serial)
{
    const kb_run r = run_make({"-j", "3", "--objects", "60", "--dirs", "4", "--compile-ms", "20"}, 4);
    ASSERT_TRUE(r.w->finished());
    EXPECT_TRUE(r.t->k.all_exited());
    EXPECT_EQ(r.w->max_running(), 3u);
    const auto& dag = r.w->dag();
    const auto& tm = r.w->job_times();
    sim_time last_archive = 0;
    sim_time last_compile = 0;
    for (std::size_t i = 0; i < dag.size(); ++i) {
        ASSERT_GE(tm[i].first, 0);
        if (dag[i].kind == kbuild_job::compile)
            last_compile = std::max(last_compile, tm[i].second);
        if (dag[i].kind == kbuild_job::archive)
            last_archive = std::max(last_archive, tm[i].second);
    }
    EXPECT_GT(last_archive, 0);
    std::size_t first_link = dag.size() - 5;
    EXPECT_GE(tm[first_link].first, last_archive);
    for (std::size_t i = first_link + 1; i < dag.size(); ++i)
        EXPECT_GE(tm[i].first, tm[i - 1].second) << dag[i].name << " overlaps " << dag[i - 1].name;
    // Each directory's archive starts after that directory's objects.
    for (std::size_t i = 0; i < dag.size(); ++i) {
        if (dag[i].kind != kbuild_job::archive)
            continue;
        for (std::size_t j = 0; j < dag.size(); ++j) {
            if (dag[j].kind == kbuild_job::compile && dag[j].dir == dag[i].dir) {
                EXPECT_GE(tm[i].first, tm[j].second);
            }
        }
    }
    (void)last_compile;
}

TEST(kbuild, more_jobs_finish_sooner_until_the_cpus_are_used_up)
{
    const std::vector<std::string> tree = {"--objects", "80", "--dirs", "4", "--compile-ms", "30"};
    auto with = [&](const char* j) {
        std::vector<std::string> a = {"-j", j};
        a.insert(a.end(), tree.begin(), tree.end());
        return run_make(a, 4);
    };
    const kb_run j1 = with("1");
    const kb_run j4 = with("4");
    const kb_run j8 = with("8");
    EXPECT_LT(j4.w->elapsed(), j1.w->elapsed() / 2);
    // Beyond the CPU count no big gain; the serial tail bounds the speed-up.
    EXPECT_GT(j8.w->elapsed(), j4.w->elapsed() * 8 / 10);
    EXPECT_EQ(j1.w->max_running(), 1u);
    // User time is the same work whatever -j; system time is small next to it.
    EXPECT_NEAR(static_cast<double>(j1.w->user_time()), static_cast<double>(j4.w->user_time()),
                0.1 * static_cast<double>(j1.w->user_time()));
    EXPECT_LT(j4.w->system_time(), j4.w->user_time() / 2);
}

TEST(kbuild, prints_usr_bin_times_two_lines)
{
    const kb_run r = run_make({"-j", "2", "--objects", "20", "--dirs", "2", "--compile-ms", "10"}, 2);
    EXPECT_THAT(r.w->report(),
                MatchesRegex("[0-9]+\\.[0-9][0-9]user [0-9]+\\.[0-9][0-9]system "
                             "0:[0-9][0-9]\\.[0-9][0-9]elapsed [0-9]+%CPU \\(0avgtext\\+0avgdata "
                             "0maxresident\\)k\n"
                             "0inputs\\+0outputs \\(0major\\+0minor\\)pagefaults 0swaps\n"
                             "# schedlab: 27 jobs \\(20 compiles, 2 archives, 5 link steps\\), at "
                             "most 2 running at once\n"));
    const auto m = r.w->metrics();
    ASSERT_EQ(m.size(), 3u);
    EXPECT_EQ(m[0].name, "elapsed");
    EXPECT_DOUBLE_EQ(m[0].value, static_cast<double>(r.w->elapsed()) / 1e9);
}

TEST(kbuild, the_same_seed_gives_the_same_schedule)
{
    const std::vector<std::string> a = {"-j", "3", "--objects", "30", "--dirs", "3", "--compile-ms", "10"};
    const kb_run x = run_make(a, 2, 8);
    const kb_run y = run_make(a, 2, 8);
    EXPECT_EQ(x.t->k.schedule_digest(), y.t->k.schedule_digest());
    EXPECT_EQ(x.w->report(), y.w->report());
}

} // namespace
} // namespace schedlab
