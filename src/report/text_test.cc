// SPDX-License-Identifier: GPL-2.0-only
/*
 * The three LKML table formats, byte for byte. The mmtests and AMD
 * expectations are tables in those layouts (docs/compare.md), built from
 * samples whose statistics give the tables' numbers; the lkp rows are
 * lines of a real 0-day report (lkp-tests lib/compare.rb layout).
 */
#include "report/text.h"

#include "sim/config_error.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace schedlab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

run_result sample_run(const std::string& arm, const std::string& load, double value,
                      bool higher_is_better = false, const std::string& metric = "time")
{
    run_result r;
    r.provenance.machine = "testbox";
    r.provenance.nr_cpus = 8;
    r.provenance.kernel_spec = arm;
    r.provenance.kernel_base = "6.6";
    r.provenance.policy = "EEVDF";
    r.provenance.schedlab_version = "0.1.0";
    r.provenance.git_sha = "abc";
    r.provenance.argv = {"perf", "bench", "sched", "messaging", "-g", load, "-p"};
    r.arm = arm;
    r.load = load;
    r.finished = true;
    r.metrics = {{metric, higher_is_better ? "ops/s" : "s", value, higher_is_better}};
    return r;
}

void add(std::vector<run_result>& runs, const std::string& arm, const std::string& load,
         std::initializer_list<double> values)
{
    int i = 0;
    for (double v : values) {
        runs.push_back(sample_run(arm, load, v));
        runs.back().run_index = i++;
    }
}

/// The lines of `text` that are in the first three or start with `prefix`.
std::string header_and(const std::string& text, const std::string& prefix)
{
    std::istringstream in(text);
    std::string line, out;
    for (int n = 0; std::getline(in, line); ++n)
        if (n < 3 || line.starts_with(prefix))
            out += line + "\n";
    return out;
}

TEST(render_mmtests, amean_rows_match_the_compare_kernels_example)
{
    std::vector<run_result> runs;
    // means 0.30/0.25 (s 0.01 each: r = 0.05/(1.96*0.02) = 1.28, starred),
    // 3.50/3.57 (s 0.1: r = 0.18), 16.1/17.2 (s 0.1: r = 2.8, starred)
    add(runs, "6.18-rc1-vanilla", "1", {0.29, 0.30, 0.31});
    add(runs, "6.18-rc1-patched", "1", {0.24, 0.25, 0.26});
    add(runs, "6.18-rc1-vanilla", "48", {3.4, 3.5, 3.6});
    add(runs, "6.18-rc1-patched", "48", {3.47, 3.57, 3.67});
    add(runs, "6.18-rc1-vanilla", "296", {16.0, 16.1, 16.2});
    add(runs, "6.18-rc1-patched", "296", {17.1, 17.2, 17.3});
    const std::string text = render_mmtests(compare_runs(runs));
    EXPECT_EQ(header_and(text, "Amean"),
              "hackbench-process-pipes\n"
              "                            6.18-rc1               6.18-rc1\n"
              "                             vanilla                patched\n"
              "Amean     1        0.3000 (   0.00%)      0.2500 *  16.67%*\n"
              "Amean     48       3.5000 (   0.00%)      3.5700 (  -2.00%)\n"
              "Amean     296     16.1000 (   0.00%)     17.2000 *  -6.83%*\n");
    // the full summary block, stat column 9 wide because of BAmean-95
    EXPECT_THAT(text, HasSubstr("\nMin       1        0.2900 (   0.00%)      0.2400 (  17.24%)\n"));
    EXPECT_THAT(text, HasSubstr("\nStddev    1        0.0100 (   0.00%)      0.0100 (  "));
    EXPECT_THAT(text, HasSubstr("\nBAmean-95 296     16.0500 (   0.00%)     17.1500 (  -6.85%)\n"));
}

TEST(render_mmtests, the_t_test_rule_stars_what_the_interval_rule_does_not)
{
    std::vector<run_result> runs;
    // 3.5 vs 3.65, s = sqrt(0.04/5) = 0.0894 each, n 6: t = 0.15/sqrt(2*0.008/6) = 2.905,
    // df 10, p = 0.0157 < 0.10: starred by the t-test, while the interval rule's
    // r = 0.15/(1.96*0.1789) = 0.43 leaves it unstarred.
    add(runs, "base", "8", {3.4, 3.5, 3.6, 3.4, 3.5, 3.6});
    add(runs, "new", "8", {3.55, 3.65, 3.75, 3.55, 3.65, 3.75});
    const std::string ci = render_mmtests(compare_runs(runs, significance_rule::ci));
    const std::string tt = render_mmtests(compare_runs(runs, significance_rule::ttest));
    EXPECT_THAT(ci, HasSubstr("Amean     8      3.5000 (   0.00%)      3.6500 (  -4.29%)\n"));
    EXPECT_THAT(tt, HasSubstr("Amean     8      3.5000 (   0.00%)      3.6500 *  -4.29%*\n"));
}

TEST(render_mmtests, hmean_for_higher_is_better_metrics)
{
    std::vector<run_result> runs;
    for (double v : {100.0, 200.0})
        runs.push_back(sample_run("a", "1", v, true, "ops"));
    for (double v : {150.0, 150.0})
        runs.push_back(sample_run("b", "1", v, true, "ops"));
    const std::string text = render_mmtests(compare_runs(runs));
    // Hmean(100, 200) = 133.33; 150 vs 133.33: pdiff = +12.50 (higher is better)
    EXPECT_THAT(text, HasSubstr("Hmean     1    133.3333 (   0.00%)    150.0000 (  12.50%)\n"));
    EXPECT_THAT(text, HasSubstr("BHmean-95 1"));
}

TEST(mmtests_split_name, version_then_the_rest)
{
    EXPECT_EQ(mmtests_split_name("6.18-rc1-vanilla"), std::make_pair(std::string("6.18-rc1"),
                                                                    std::string("vanilla")));
    EXPECT_EQ(mmtests_split_name("6.6-patched"), std::make_pair(std::string("6.6"),
                                                               std::string("patched")));
    EXPECT_EQ(mmtests_split_name("6.6+NO_RUN_TO_PARITY"),
              std::make_pair(std::string("6.6"), std::string("NO_RUN_TO_PARITY")));
    EXPECT_EQ(mmtests_split_name("6.6"), std::make_pair(std::string("6.6"), std::string("")));
}

TEST(render_amd, matches_the_posted_block_including_the_negative_zero_baseline)
{
    std::vector<run_result> runs;
    // CV = 100 * sample stddev / mean with samples m-d, m, m+d: stddev = d
    add(runs, "tip", "1", {0.975, 1.0, 1.025});        // mean 1.00, CV 2.50
    add(runs, "patched", "1", {0.9329, 0.95, 0.9671}); // mean 0.95, CV 1.80
    add(runs, "tip", "16", {1.976, 2.0, 2.024});       // mean 2.00, CV 1.20
    add(runs, "patched", "16", {2.0286, 2.1, 2.1714}); // mean 2.10, CV 3.40
    EXPECT_EQ(render_amd(compare_runs(runs)),
              "==================================================================\n"
              "Test          : hackbench\n"
              "Units         : Normalized time in seconds\n"
              "Interpretation: Lower is better\n"
              "Statistic     : AMean\n"
              "==================================================================\n"
              "Case:           tip[pct imp](CV)    patched[pct imp](CV)\n"
              " 1-groups     1.00 [ -0.00]( 2.50)     0.95 [  5.00]( 1.80)\n"
              "16-groups     1.00 [ -0.00]( 1.20)     1.05 [ -5.00]( 3.40)\n");
}

TEST(render_amd, higher_is_better_baseline_prints_positive_zero)
{
    std::vector<run_result> runs;
    for (double v : {99.0, 100.0, 101.0})
        runs.push_back(sample_run("tip", "4", v, true, "throughput"));
    for (double v : {110.0, 110.0, 110.0})
        runs.push_back(sample_run("new", "4", v, true, "throughput"));
    const std::string text = render_amd(compare_runs(runs));
    EXPECT_THAT(text, HasSubstr("Interpretation: Higher is better\n"));
    EXPECT_THAT(text, HasSubstr(" 4-groups     1.00 [  0.00]( 1.00)     1.10 [ 10.00]( 0.00)\n"));
}

TEST(lkp_row, matches_lines_of_a_real_0day_report)
{
    // From a 2025 kernel test robot report (hackbench, lkp-icl-2sp2):
    EXPECT_EQ(lkp_row({433157, 406447}, {0.4, 1.1}, {-6.2}, "hackbench.throughput"),
              "    433157            -6.2%     406447        hackbench.throughput");
    EXPECT_EQ(lkp_row({5457, 7146}, {6.3, 11.9}, {30.9}, "perf-c2c.DRAM.remote"),
              "      5457 \u00b1  6%     +30.9%       7146 \u00b1 11%  perf-c2c.DRAM.remote");
    EXPECT_EQ(lkp_row({143.13, 153.65}, {0.1, 0.2}, {7.3}, "hackbench.time.elapsed_time"),
              "    143.13            +7.3%     153.65        hackbench.time.elapsed_time");
    EXPECT_EQ(lkp_row({2.019e+08, 2.489e+08}, {1, 1}, {23.3},
                      "hackbench.time.voluntary_context_switches"),
              " 2.019e+08           +23.3%  2.489e+08        hackbench.time.voluntary_context_switches");
    // a key ending in '%' gets the absolute change
    EXPECT_EQ(lkp_row({0.41, 0.44}, {2.5, 1}, {0.03}, "perf-stat.i.branch-miss-rate%"),
              "      0.41 \u00b1  2%      +0.0        0.44        perf-stat.i.branch-miss-rate%");
    EXPECT_EQ(lkp_row({15076, 33360}, {48.2, 35.0}, {121.3}, "proc-vmstat.numa_pages_migrated"),
              "     15076 \u00b1 48%    +121.3%      33360 \u00b1 35%  proc-vmstat.numa_pages_migrated");
}

TEST(render_lkp, one_group_per_load_with_the_lkp_header_commit_ids_and_hackbench_throughput)
{
    std::vector<run_result> runs;
    add(runs, "6.6", "4", {50.0, 50.0});
    add(runs, "6.6+NO_RUN_TO_PARITY", "4", {45.0, 45.0});
    for (run_result& r : runs)
        r.provenance.features = r.arm == "6.6" ? "RUN_TO_PARITY" : "NO_RUN_TO_PARITY";
    const comparison c = compare_runs(runs);
    ASSERT_EQ(c.arm_ids.size(), 2u);
    const std::string base = arm_id(runs[0].provenance), arm = arm_id(runs[2].provenance);
    EXPECT_EQ(base.size(), 16u);
    EXPECT_NE(base, arm);
    // lkp-tests programs/hackbench/parse: (4 groups * 40 tasks * 100 messages * 100 bytes)
    // >> 10 = 1562 KB, over 50 s and 45 s: 31.24 and 34.71 KB/s, +11.1 %.
    EXPECT_EQ(render_lkp(c),
              std::string(89, '=') + "\n"
              "nr_threads/testcase:\n"
              "  4/hackbench\n"
              "\n"
              "commit: \n"
              "  " + base + " (\"6.6\")\n"
              "  " + arm + " (\"6.6+NO_RUN_TO_PARITY\")\n"
              "\n" +
              base + "            " + arm + " \n"
              "---------------- --------------------------- \n"
              "         %stddev     %change         %stddev\n"
              "             \\          |                \\  \n"
              "     31.24           +11.1%      34.71        hackbench.throughput\n"
              "\n");
}

TEST(arm_id, names_the_configuration_not_the_label)
{
    run_result a = sample_run("x", "1", 1), b = sample_run("y", "1", 1);
    EXPECT_EQ(arm_id(a.provenance), arm_id(b.provenance)); // same profile, features and costs
    b.provenance.costs = {{"context_switch", 1500}};
    EXPECT_NE(arm_id(a.provenance), arm_id(b.provenance));
    b = sample_run("y", "1", 1);
    b.provenance.policy = "CFS";
    EXPECT_NE(arm_id(a.provenance), arm_id(b.provenance));
}

TEST(render_lkp, uses_the_stats_lkp_reports_under_lkps_names)
{
    // netperf: lkp's Throughput_tps is the mean per instance, Throughput_total_tps the sum.
    std::vector<run_result> runs;
    for (const char* arm : {"a", "b"}) {
        run_result r = sample_run(arm, "8", 0);
        r.provenance.argv = {"netperf", "-t", "TCP_RR", "--instances", "8"};
        r.metrics = {{"trans/s", "trans/s", arm[0] == 'a' ? 80000.0 : 88000.0, true},
                     {"trans/s/instance", "trans/s", arm[0] == 'a' ? 10000.0 : 11000.0, true}};
        runs.push_back(r);
    }
    std::string text = render_lkp(compare_runs(runs));
    EXPECT_THAT(text, HasSubstr("nr_threads/testcase:\n  8/netperf\n"));
    EXPECT_THAT(text, HasSubstr("     10000           +10.0%      11000        netperf.Throughput_tps\n"
                                "     80000           +10.0%      88000        netperf.Throughput_total_tps\n"));
    // perf bench sched pipe: lkp reads perf's integer ops/sec; usecs/op is not an lkp stat.
    runs.clear();
    for (const char* arm : {"a", "b"}) {
        run_result r = sample_run(arm, "100000", 0);
        r.provenance.argv = {"perf", "bench", "sched", "pipe", "-l", "100000"};
        r.metrics = {{"usecs/op", "us", 5.0, false}, {"ops/sec", "ops/s", 199999.7, true}};
        runs.push_back(r);
    }
    text = render_lkp(compare_runs(runs));
    EXPECT_THAT(text, HasSubstr("loops/testcase:\n  100000/perf-bench-sched-pipe\n"));
    EXPECT_THAT(text, HasSubstr("    199999            +0.0%     199999        "
                                "perf-bench-sched-pipe.ops_per_sec\n"));
    EXPECT_THAT(text, Not(HasSubstr("usecs")));
}

TEST(render_schedstat, one_table_per_idle_type_and_counter)
{
    std::vector<run_result> runs = {sample_run("off", "64", 1), sample_run("on", "64", 1)};
    runs[0].schedstat = std::vector<schedstat_counter>{{"MC", "newly_idle", "lb_count", 181406},
                                                       {"DIE", "newly_idle", "lb_count", 1288}};
    runs[1].schedstat = std::vector<schedstat_counter>{{"MC", "newly_idle", "lb_count", 133978},
                                                       {"DIE", "newly_idle", "lb_count", 59596}};
    const comparison c = compare_runs(runs);
    ASSERT_EQ(c.schedstat.size(), 2u);
    // (59596 - 1288) / 1288 = +4527.02 %
    EXPECT_NEAR(c.schedstat[1].pct_change[1], 4527.0186, 1e-3);
    EXPECT_EQ(render_schedstat(c),
              "schedstat newly_idle lb_count: mean per run, summed over CPUs\n"
              "domain  groups             off              on\n"
              "MC          64        181406.0        133978.0 ( -26.14%)\n"
              "DIE         64          1288.0         59596.0 (+4527.02%)\n");
    EXPECT_EQ(render_schedstat(compare_runs({sample_run("a", "1", 1)})), "");
}

TEST(compare_runs, pct_imp_has_an_interval_from_the_runs_in_its_sign)
{
    std::vector<run_result> runs;
    add(runs, "base", "4", {10.0, 11.0, 12.0});
    add(runs, "new", "4", {8.0, 9.0, 10.0}); // lower is better: 2 s faster = +18.18 %
    const comparison c = compare_runs(runs);
    const arm_cell& cell = c.metrics[0].cells[0][1];
    EXPECT_NEAR(cell.amd_pct_imp, 200.0 / 11, 1e-9);
    EXPECT_NEAR((cell.pct_imp_ci.lo + cell.pct_imp_ci.hi) / 2, 200.0 / 11, 1e-9);
    // Welch: SE sqrt(1/3 + 1/3), df 4: t 2.776 -> +-1.603 s = +-14.57 % of 11 s
    EXPECT_NEAR(cell.pct_imp_ci.hi - cell.pct_imp_ci.lo,
                2 * 2.776445105 * std::sqrt(2.0 / 3) / 11 * 100, 1e-6);
    EXPECT_TRUE(std::isnan(c.metrics[0].cells[0][0].pct_imp_ci.lo)); // none for the baseline
}

TEST(compare_runs, refuses_to_mix_benchmarks_or_machines)
{
    std::vector<run_result> runs = {sample_run("a", "1", 1), sample_run("b", "1", 1)};
    runs[1].provenance.argv = {"perf", "bench", "sched", "pipe"};
    EXPECT_THROW(compare_runs(runs), config_error);
    runs[1] = sample_run("b", "2", 1);
    runs[1].provenance.machine = "otherbox";
    EXPECT_THROW(compare_runs(runs), config_error);
    runs[1] = sample_run("b", "2", 1);
    runs[1].finished = false;
    const comparison c = compare_runs(runs);
    ASSERT_EQ(c.warnings.size(), 1u);
    EXPECT_THAT(c.warnings[0], HasSubstr("did not finish"));
}

// Issue 16, item 19: the AMD header drifted right of its columns for a long arm name, the
// schedstat diff printed (+0.00%) for 0 -> 1, and amd/lkp output carried the mmtests line.
TEST(render_amd, a_long_arm_name_widens_its_column_under_its_heading)
{
    std::vector<run_result> runs;
    add(runs, "tip", "1", {0.975, 1.0, 1.025});
    add(runs, "tip-2023-08+shared_runq_v3", "1", {0.9329, 0.95, 0.9671});
    add(runs, "v4", "1", {0.975, 1.0, 1.025});
    const std::string text = render_amd(compare_runs(runs));
    EXPECT_THAT(text, HasSubstr("Case:           tip[pct imp](CV)    "
                                "tip-2023-08+shared_runq_v3[pct imp](CV)    v4[pct imp](CV)\n"
                                " 1-groups     1.00 [ -0.00]( 2.50)                   "
                                "0.95 [  5.00]( 1.80)     1.00 [ -0.00]( 2.50)\n"));
    // The long heading overhangs its column by the 4 spaces of the posted layout, no more.
    const auto head_end = text.find("shared_runq_v3[pct imp](CV)") + 27;
    const auto row = text.find(" 1-groups");
    const auto row_end = text.find("( 1.80)", row) + 7 - row;
    EXPECT_GE(head_end - text.find("Case:"), row_end);
    EXPECT_LE(head_end - text.find("Case:"), row_end + 4);
}

TEST(render_schedstat, a_change_from_zero_has_no_percentage)
{
    std::vector<run_result> runs = {sample_run("off", "64", 1), sample_run("on", "64", 1)};
    runs[0].schedstat = std::vector<schedstat_counter>{{"MC", "idle", "alb_count", 0}};
    runs[1].schedstat = std::vector<schedstat_counter>{{"MC", "idle", "alb_count", 1}};
    EXPECT_THAT(render_schedstat(compare_runs(runs)),
                HasSubstr("MC          64             0.0             1.0  (     new)\n"));
}

TEST(render_provenance, names_the_significance_rule_only_for_the_mmtests_table)
{
    const comparison c = compare_runs({sample_run("a", "1", 1), sample_run("b", "1", 2)});
    EXPECT_THAT(render_provenance(c), HasSubstr("# significance: mmtests 2024+ rule"));
    EXPECT_THAT(render_provenance(c, false), Not(HasSubstr("significance")));
}
// Issue 16, item 16: a table never prints nan (a metric that is 0 in every run has no CV and
// no percentage change).
TEST(render_tables, a_metric_of_zero_prints_dashes_not_nan)
{
    std::vector<run_result> runs;
    add(runs, "tip", "1", {0, 0, 0});
    add(runs, "new", "1", {0, 0, 0});
    const comparison c = compare_runs(runs);
    for (const std::string& t : {render_mmtests(c), render_amd(c), render_lkp(c)}) {
        EXPECT_THAT(t, Not(HasSubstr("nan"))) << t;
        EXPECT_THAT(t, Not(HasSubstr("inf"))) << t;
    }
    EXPECT_THAT(render_amd(c), HasSubstr(" 1-groups        - [     -]( 0.00)"));
}
} // namespace
} // namespace schedlab
