// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics on hand-computed samples. Expected values were computed
 * independently with python3 (statistics module; Student-t tails by numeric
 * integration of the t density, or with mpmath 1.3's betainc at 30 digits),
 * come from printed t tables or are closed forms of the t distribution; the
 * computations are quoted next to each case. Student's t is Boost.Math's: these
 * cases check that stats.cc calls it for the right tail, with the right df, and
 * what it returns outside its domain.
 */
#include "analysis/stats.h"

#include <boost/math/distributions/normal.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace schedlab {
namespace {

// python3: a = [0.30, 0.32, 0.28, 0.31, 0.29]; statistics.mean(a) = 0.3,
// stdev(a) = 0.015811388300841892, pstdev(a) = 0.014142135623730947,
// harmonic_mean(a) = 0.29933229348961377
const std::vector<double> a = {0.30, 0.32, 0.28, 0.31, 0.29};
const std::vector<double> b = {0.25, 0.26, 0.24, 0.27, 0.23};

TEST(sample_statistics, means_and_deviations_of_a_hand_computed_sample)
{
    EXPECT_NEAR(amean(a), 0.3, 1e-15);
    EXPECT_NEAR(stddev_sample(a), 0.015811388300841892, 1e-15);
    EXPECT_NEAR(stddev_population(a), 0.014142135623730947, 1e-15);
    EXPECT_NEAR(hmean(a), 0.29933229348961377, 1e-15);
    // sqrt(sum((1/x - 1/H)^2) * H^4 / n)
    EXPECT_NEAR(hstddev(a), 0.01414369453230607, 1e-14);
    EXPECT_NEAR(coeff_var(stddev_sample(a), amean(a)), 5.270462766947297, 1e-12);
    EXPECT_DOUBLE_EQ(min_of(a), 0.28);
    EXPECT_DOUBLE_EQ(max_of(a), 0.32);
    EXPECT_DOUBLE_EQ(median(a), 0.30);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{3, 1, 2, 4}), 2.5);
}

TEST(sample_statistics, degenerate_samples)
{
    EXPECT_EQ(stddev_sample(std::vector<double>{7}), 0);
    EXPECT_TRUE(std::isnan(hmean(std::vector<double>{1, 0, 2})));
    EXPECT_TRUE(std::isnan(hmean(std::vector<double>{})));
    EXPECT_EQ(coeff_var(1, 0), 0);
}

TEST(best_mean, takes_the_best_p_percent_best_first)
{
    const std::vector<double> x = {5, 1, 4, 2, 3};
    // floor(5 * 95 / 100) = 4 samples: ascending [1,2,3,4] -> 2.5; descending [5,4,3,2] -> 3.5
    EXPECT_DOUBLE_EQ(best_mean(x, 95, false, false), 2.5);
    EXPECT_DOUBLE_EQ(best_mean(x, 95, true, false), 3.5);
    EXPECT_DOUBLE_EQ(best_mean(x, 50, false, false), 1.5);
    EXPECT_DOUBLE_EQ(best_mean(x, 10, false, false), 1.0); // at least one sample
    // harmonic mean of [5, 4]: 2 / (1/5 + 1/4) = 40/9
    EXPECT_DOUBLE_EQ(best_mean(x, 40, true, true), 40.0 / 9.0);
}

TEST(student_t_sf, matches_printed_t_table_values)
{
    // One-tailed critical values: t(0.05, 5) = 2.015, t(0.05, 10) = 1.812,
    // t(0.025, 10) = 2.228, t(0.025, 1) = 12.706 (3 significant digits in tables).
    EXPECT_NEAR(student_t_sf(2.015, 5), 0.05, 2e-5);
    EXPECT_NEAR(student_t_sf(1.812, 10), 0.05, 5e-5);
    EXPECT_NEAR(student_t_sf(2.228, 10), 0.025, 1e-5);
    EXPECT_NEAR(student_t_sf(12.706, 1), 0.025, 1e-5);
    EXPECT_NEAR(student_t_sf(0, 7), 0.5, 1e-15);
    EXPECT_NEAR(student_t_sf(-2.228, 10), 0.975, 1e-5);
    // Fractional df (Welch), by numeric integration of the density: 0.19066862678, 0.01982511733;
    // mpmath: betainc(df/2, 1/2, 0, df/(df+t^2), regularized=True)/2 = 0.190668626781722769,
    // 0.0198251173328002358
    EXPECT_NEAR(student_t_sf(1.0, 3.5), 0.190668626781722769, 1e-14);
    EXPECT_NEAR(student_t_sf(2.5, 7.3), 0.0198251173328002358, 1e-15);
}

TEST(student_t_sf, closed_forms)
{
    // df 1 (Cauchy): P(T > t) = 1/2 - atan(t)/pi: 1/4 at t = 1, 1/6 at t = sqrt(3)
    EXPECT_NEAR(student_t_sf(1, 1), 0.25, 1e-15);
    EXPECT_NEAR(student_t_sf(std::sqrt(3.0), 1), 1.0 / 6, 1e-15);
    // df 2: P(T > t) = (1 - t / sqrt(2 + t^2)) / 2: (1 - 1/sqrt(3)) / 2 at t = 1
    EXPECT_NEAR(student_t_sf(1, 2), 0.21132486540518712, 1e-15);
    // the inverses: df 1, tan(pi (1/2 - p)) = 1 at p = 1/4; df 2, u sqrt(2 / (1 - u^2)) with
    // u = 1 - 2p: 0.8 sqrt(2 / 0.36) = 1.8856180831641267 at p = 0.1
    EXPECT_NEAR(student_t_isf(0.25, 1), 1, 1e-14);
    EXPECT_NEAR(student_t_isf(0.1, 2), 1.8856180831641267, 1e-14);
}

TEST(student_t_sf, outside_the_domain_is_nan_and_infinite_df_is_the_normal)
{
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    // Boost.Math would throw a domain_error here; the old continued fraction returned
    // 0 (df 0 or -1 at t = 1) or NaN, neither a probability of a t distribution.
    EXPECT_TRUE(std::isnan(student_t_sf(1, 0)));
    EXPECT_TRUE(std::isnan(student_t_sf(1, -1)));
    EXPECT_TRUE(std::isnan(student_t_sf(1, nan)));
    EXPECT_TRUE(std::isnan(student_t_sf(nan, 5)));
    EXPECT_EQ(student_t_sf(inf, 5), 0);
    EXPECT_EQ(student_t_sf(-inf, 5), 1);
    // df = inf: the standard normal's tail, qnorm(0.975) = 1.959963984540054
    EXPECT_NEAR(student_t_sf(1.959963984540054, inf), 0.025, 1e-15);
    EXPECT_NEAR(student_t_isf(0.025, inf), 1.959963984540054, 1e-14);
}

TEST(welch_t_test, unequal_sizes_and_variances)
{
    // a = [10,12,14,16], b = [20,21,22]: var/n = 20/3/4 and 1/3;
    // t = 5.65685424949238, df = 4.075471698113207, p = 0.0045488308
    const std::vector<double> x = {10, 12, 14, 16}, y = {20, 21, 22};
    const t_test_result r = welch_t_test(x, y);
    EXPECT_NEAR(r.t, 5.65685424949238, 1e-12);
    EXPECT_NEAR(r.df, 4.075471698113207, 1e-12);
    EXPECT_NEAR(r.p, 0.004548830830000405, 1e-8);
    EXPECT_TRUE(r.significant);
}

TEST(welch_t_test, a_sample_holding_nan_or_inf_gives_p_nan_not_significant)
{
    // a metric of a failed run: the statistics are NaN, which Boost.Math is never asked about
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> x = {10, 12, 14, 16}, y = {20, 21, std::nan("")}, z = {20, 21, inf};
    for (const std::vector<double>* s : {&y, &z}) {
        const t_test_result r = welch_t_test(x, *s);
        EXPECT_TRUE(std::isnan(r.p));
        EXPECT_FALSE(r.significant);
        const t_test_result m = mmtests_t_test(13, x, amean(*s), *s);
        EXPECT_TRUE(std::isnan(m.p));
        EXPECT_FALSE(m.significant);
        EXPECT_TRUE(std::isnan(welch_difference_interval(x, *s).lo));
    }
}

TEST(student_t_isf, matches_tables)
{
    // two-sided 95 % critical values of Student's t (any statistics table)
    EXPECT_NEAR(student_t_isf(0.025, 4), 2.776445105, 1e-8);
    EXPECT_NEAR(student_t_isf(0.025, 10), 2.228138852, 1e-8);
    EXPECT_NEAR(student_t_isf(0.05, 1), 6.313751515, 1e-8);
    // the lower tail: P(T > t) = 0.975 at minus the 0.025 point
    EXPECT_NEAR(student_t_isf(0.975, 10), -2.228138852, 1e-8);
    EXPECT_EQ(student_t_isf(0.5, 4), 0);
    // fractional df (mpmath findroot on betainc): P(T > t) = 0.025 at df 4.0755 (Welch's below)
    EXPECT_NEAR(student_t_sf(student_t_isf(0.025, 4.075471698113207), 4.075471698113207), 0.025,
                1e-15);
}

TEST(student_t_isf, outside_the_domain_is_nan)
{
    // Boost.Math would throw (p outside [0, 1], df <= 0) or overflow (p 0 or 1); the old
    // bisection returned 1.1e12 for p <= 0 and 3e-61 for p >= 0.5, NaN p or df.
    for (double p : {0.0, 1.0, -0.1, 1.5, std::nan("")})
        EXPECT_TRUE(std::isnan(student_t_isf(p, 4))) << p;
    for (double df : {0.0, -2.0, std::nan("")})
        EXPECT_TRUE(std::isnan(student_t_isf(0.025, df))) << df;
}

TEST(welch_difference_interval, its_ends_are_where_welchs_test_reaches_alpha)
{
    const std::vector<double> x = {10, 12, 14, 16}, y = {20, 21, 22};
    const interval ci = welch_difference_interval(x, y);
    // diff 8, SE sqrt(2), df 4.0755: the ends are 8 -+ t * SE with P(|T| > t) = 0.05
    EXPECT_NEAR((ci.lo + ci.hi) / 2, 8, 1e-9);
    const double t = (ci.hi - 8) / std::sqrt(2.0);
    EXPECT_NEAR(2 * student_t_sf(t, 4.075471698113207), 0.05, 1e-9);
    EXPECT_GT(t, 2.7); // a little wider than df 4.08's normal bound
    EXPECT_LT(t, 2.78);
    EXPECT_TRUE(std::isnan(welch_difference_interval(std::vector<double>{1}, y).lo));
    const interval same =
        welch_difference_interval(std::vector<double>{5, 5}, std::vector<double>{7, 7});
    EXPECT_EQ(same.lo, 2);
    EXPECT_EQ(same.hi, 2);
}

TEST(mmtests_t_test, uses_n1_plus_n2_minus_2_degrees_of_freedom_and_p_below_ten_percent)
{
    const std::vector<double> x = {10, 12, 14, 16}, y = {20, 21, 22};
    // same t as Welch, df = 5: p = 0.002398854
    const t_test_result r = mmtests_t_test(13, x, 21, y);
    EXPECT_EQ(r.df, 5);
    EXPECT_NEAR(r.p, 0.002398854046880578, 1e-8);
    EXPECT_TRUE(r.significant);

    // [1,2,3] vs [1.5,2.5,3.5]: t = 0.5/sqrt(2/3) = 0.6124, df 4, p = 0.5734 -> not starred
    const std::vector<double> u = {1, 2, 3}, v = {1.5, 2.5, 3.5};
    const t_test_result n = mmtests_t_test(2, u, 2.5, v);
    EXPECT_NEAR(n.p, 0.5733922538261707, 1e-8);
    EXPECT_FALSE(n.significant);

    // a vs b above: t = 5, df = 8, p = 2 * 0.000526413
    EXPECT_NEAR(mmtests_t_test(amean(a), a, amean(b), b).p, 0.001052825793367414, 1e-8);

    // zero variance: significant iff the means differ
    const std::vector<double> c1 = {2, 2}, c2 = {3, 3};
    EXPECT_TRUE(mmtests_t_test(2, c1, 3, c2).significant);
    EXPECT_FALSE(mmtests_t_test(2, c1, 2, c1).significant);
}

TEST(mmtests_ci_test, stars_only_when_the_1_96_sigma_bands_do_not_overlap)
{
    // r = 0.05 / (1.959964 * 0.02) = 1.27554 -> starred
    ci_test_result r = mmtests_ci_test(0.30, 0.01, 0.25, 0.01);
    EXPECT_NEAR(r.r, 1.275533642311635, 1e-9);
    EXPECT_TRUE(r.significant);
    // sample stddevs of a and b (0.0158114 each): r = 0.05 / 0.0619795 = 0.80672 -> not starred
    r = mmtests_ci_test(amean(a), stddev_sample(a), amean(b), stddev_sample(b));
    EXPECT_NEAR(r.r, 0.806718, 1e-6);
    EXPECT_FALSE(r.significant);
    // zero spread: r is the raw difference
    EXPECT_DOUBLE_EQ(mmtests_ci_test(3, 0, 2.5, 0).r, 0.5);
    EXPECT_FALSE(mmtests_ci_test(3, 0, 2.5, 0).significant);
    EXPECT_TRUE(mmtests_ci_test(5, 0, 3, 0).significant);
    // h is qnorm(0.975) * s to the last bit of R's qnorm(0.975) = 1.959963984540054
    EXPECT_EQ(mmtests_ci_test(1.959963984540054, 1, 0, 0).r, 1.0);
    // the constant against Boost's quantile, in double as stats.cc evaluates (one ulp apart)
    using double_policy =
        boost::math::policies::policy<boost::math::policies::promote_double<false>>;
    EXPECT_NEAR(
        boost::math::quantile(boost::math::normal_distribution<double, double_policy>(), 0.975),
        1.959963984540054, 1e-15);
}

TEST(mmtests_pdiff, positive_always_means_better)
{
    EXPECT_NEAR(mmtests_pndiff(0.30, 0.25), 16.666666666666657, 1e-12); // time down: better
    EXPECT_NEAR(mmtests_pndiff(16.1, 17.2), -6.832298136645946, 1e-12);
    EXPECT_NEAR(mmtests_pdiff(100, 110), 10, 1e-12); // throughput up: better
    EXPECT_NEAR(mmtests_pdiff(100, 90), -10, 1e-12);
    // edge cases
    EXPECT_EQ(mmtests_pdiff(5, 5), 0);
    EXPECT_EQ(mmtests_pdiff(5, 0), 0);
    EXPECT_EQ(mmtests_pdiff(0, 5), 100);
    EXPECT_EQ(mmtests_pndiff(5, 5), 0);
    EXPECT_EQ(mmtests_pndiff(5, 0), 100);
    EXPECT_EQ(mmtests_pndiff(0, 5), -99);
}

TEST(amd_pct_imp, sign_conventions_and_the_negative_zero_baseline)
{
    EXPECT_NEAR(amd_pct_imp(1.0, 0.95, false), 5.0, 1e-12);
    EXPECT_NEAR(amd_pct_imp(1.0, 1.05, false), -5.0, 1e-12);
    EXPECT_NEAR(amd_pct_imp(100, 110, true), 10.0, 1e-12);
    // the baseline against itself: -0.0 for lower-better, +0.0 for higher-better
    EXPECT_EQ(amd_pct_imp(0.7, 0.7, false), 0.0);
    EXPECT_TRUE(std::signbit(amd_pct_imp(0.7, 0.7, false)));
    EXPECT_FALSE(std::signbit(amd_pct_imp(0.7, 0.7, true)));
}

TEST(lkp_change, is_not_sign_normalised)
{
    EXPECT_NEAR(lkp_change(50, 45), -10.0, 1e-12);
    EXPECT_NEAR(lkp_change(1200000, 1500000), 25.0, 1e-12);
    EXPECT_GT(lkp_change(0, 1), 1e90); // base 0 is replaced by 1e-100
}

TEST(lkp_separated, needs_both_sets_past_each_others_median)
{
    const std::vector<double> base = {1, 2, 3, 4, 5};
    EXPECT_TRUE(lkp_separated(base, std::vector<double>{6, 7, 8, 9, 10}));
    // min(B) 4 > mid(A) 3 and mid(B) 6 > max(A) 5: overlapping ranges can still be "changed"
    EXPECT_TRUE(lkp_separated(base, std::vector<double>{4, 5, 6, 7, 8}));
    EXPECT_FALSE(lkp_separated(base, std::vector<double>{3, 5, 6, 7, 8})); // min(B) = mid(A)
    EXPECT_TRUE(lkp_separated(std::vector<double>{6, 7, 8, 9, 10}, base)); // mirror case
    // 32 samples: one dropped at each end, so one outlier does not hide the change
    std::vector<double> lo, hi;
    for (int i = 0; i < 32; ++i) {
        lo.push_back(10 + i * 0.01);
        hi.push_back(20 + i * 0.01);
    }
    hi[0] = 0; // an outlier far below the base set
    EXPECT_TRUE(lkp_separated(lo, hi));
    hi[1] = 0; // two outliers: only one is dropped
    EXPECT_FALSE(lkp_separated(lo, hi));
}

} // namespace
} // namespace schedlab
