// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * A/B comparison of stored runs: per metric, load and arm the benchmark's
 * statistic, spread and the comparison against the baseline (the first
 * arm) in each of the three LKML conventions (docs/compare.md, "The tables").
 * Numbers only: report/ turns a comparison into text or HTML.
 */
#include "analysis/stats.h"
#include "experiment/run.h"

#include <cmath>
#include <string>
#include <vector>

namespace schedlab {

/// Which mmtests significance rule stars a mean row.
enum class significance_rule {
    ci,    ///< since 2024-11: the mean +- 1.96 s intervals do not overlap
    ttest, ///< 2018-10..2024-11: two-sample t-test, p < 0.10
};

/// The statistic a table reports for a metric.
enum class mean_kind { amean, hmean };

struct sample_stats {
    std::vector<double> samples; ///< in run order
    double amean = 0, hmean = 0, median = 0, min = 0, max = 0;
    double stddev_sample = 0;     ///< n - 1
    double stddev_population = 0; ///< n
};

/// One arm at one load, and how it compares with the baseline arm at that load.
struct arm_cell {
    sample_stats s;

    // mmtests compare-kernels (Amean rows for lower-better metrics, Hmean for higher-better)
    double mm_mean = 0;     ///< Amean or Hmean
    double mm_stddev = 0;   ///< Stddev (sample) or HStddev
    double mm_coeffvar = 0; ///< 100 * mm_stddev / mm_mean
    double mm_best95 = 0;   ///< BAmean-95 / BHmean-95
    double mm_pct_min = 0, mm_pct_mean = 0, mm_pct_stddev = 0, mm_pct_coeffvar = 0,
           mm_pct_max = 0, mm_pct_best95 = 0; ///< the "(  x.xx%)" columns, positive = better
    bool significant = false; ///< star the mean row (never the baseline)
    ci_test_result ci;        ///< mmtests 2024+ rule
    t_test_result mm_ttest;   ///< mmtests 2018-2024 rule
    t_test_result welch;      ///< Welch's t-test, alpha 0.05 (HTML and JSON)

    // AMD norm [pct imp](CV), statistic AMean
    double amd_norm = 0;
    double amd_pct_imp = 0;
    double amd_cv = 0; ///< 100 * sample stddev / mean
    /// amd_pct_imp's 95 % interval from the runs: welch_difference_interval() of the two arms'
    /// samples over the baseline's mean, in pct imp's sign (NaN for the baseline, or with
    /// fewer than 2 runs a side). The baseline mean's own spread is not in it.
    interval pct_imp_ci{std::nan(""), std::nan("")};
};

/// One arm at one load in lkp's %stddev %change %stddev table.
struct lkp_cell {
    double avg = 0;
    double stddev_pct = 0; ///< 100 * population stddev / avg
    double change = 0;     ///< %change vs base (not sign-normalised)
    bool changed = false;  ///< lkp's separation test
};

/// One row of lkp's table: a stat as lkp-tests' parser names and computes it
/// (experiment/benchmarks.h: lkp_stat_info) from each run's metric.
struct lkp_stat {
    std::string key;                          ///< e.g. "hackbench.throughput"
    std::vector<std::vector<lkp_cell>> cells; ///< [load][arm]
};

struct metric_comparison {
    std::string name; ///< e.g. "time"
    std::string unit; ///< e.g. "s"
    bool higher_is_better = false;
    mean_kind mm_kind = mean_kind::amean;
    std::vector<std::vector<arm_cell>> cells; ///< [load][arm]
};

/// Mean schedstat counter per arm at one load (the per-domain differences of /proc/schedstat
/// that sched-scoreboard and Gautham Shenoy's reports print).
struct schedstat_row {
    std::string idle_type, counter, domain, load;
    std::vector<double> mean; ///< per arm, over that arm's runs
    std::vector<double> pct_change; ///< (arm - base) / base * 100, per arm; NaN from a base of 0
};

/// One arm at one load: the scheduler's distributions summed over the cell's runs
/// (run_sched_summary's histograms at summary_histogram_sub_bits; empty when the runs carry none).
struct arm_distribution {
    histogram_buckets wakeup_latency, run_length;
    u64 wakeup_latency_max_ns = 0, run_length_max_ns = 0; ///< exact, the largest of the runs'
};

struct comparison {
    // What was compared
    std::string benchmark;    ///< the command line without the load, e.g. "perf bench sched messaging -p -l 100"
    std::string mmtests_name; ///< e.g. "hackbench-process-pipes"
    std::string amd_test;     ///< e.g. "hackbench"
    std::string lkp_testcase; ///< e.g. "hackbench"
    std::string lkp_load_param; ///< lkp's job parameter of the load, e.g. "nr_threads"
    std::string load_name;    ///< e.g. "groups"; "" if the benchmark has no load list
    int mmtests_decimals = 2;
    std::vector<std::string> arms;  ///< the first is the baseline
    std::vector<std::string> loads; ///< row keys; one "" when no load list
    std::vector<metric_comparison> metrics;
    std::vector<lkp_stat> lkp;            ///< lkp's stats, in its parser's order
    std::vector<std::string> arm_ids;     ///< per arm, lkp's commit column: arm_id()
    std::vector<schedstat_row> schedstat; ///< empty unless the runs carry schedstat counters
    std::vector<std::vector<arm_distribution>> distributions; ///< [load][arm]
    significance_rule rule = significance_rule::ci;

    // Provenance
    std::vector<run_provenance> arm_provenance; ///< of each arm's first run
    std::vector<int> runs_per_arm;              ///< minimum over loads
    std::vector<std::string> warnings;          ///< e.g. unfinished runs left out
};

/// 16 hex digits naming an arm's configuration where lkp prints a commit id: FNV-1a 64 of
/// its profile, policy, effective features and costs, and the ext policy named in the kernel
/// spec, if any (equal configurations, equal ids).
std::string arm_id(const run_provenance& p);

/// Groups runs by arm (run_result::arm_label) and load, in order of first
/// appearance. Throws config_error("results", ...) when the runs are of
/// different benchmarks or machines, or there is nothing to compare.
comparison compare_runs(const std::vector<run_result>& runs,
                        significance_rule rule = significance_rule::ci);

} // namespace schedlab
