// SPDX-License-Identifier: GPL-2.0-only
#pragma once
/*
 * Sample statistics and significance tests, as the LKML comparison tables
 * define them (docs/compare.md, "The tables"): mmtests' Amean/Hmean/BAmean rows,
 * its two significance rules, AMD's pct imp and lkp's %change and
 * "changed" separation test. Pure functions over samples; no formatting.
 * Student's t tail and quantile are Boost.Math's (students_t_distribution),
 * mmtests' qnorm(0.975) its normal_distribution quantile.
 */
#include <span>
#include <vector>

namespace schedlab {

/// Arithmetic mean; 0 for no samples.
double amean(std::span<const double> x);
/// Harmonic mean n / sum(1/x); NaN if a sample is <= 0 or there are none.
double hmean(std::span<const double> x);
/// Median (mean of the two middle samples for even n); 0 for no samples.
double median(std::span<const double> x);
double min_of(std::span<const double> x);
double max_of(std::span<const double> x);
/// Sample standard deviation (divides by n - 1); 0 for fewer than 2 samples.
double stddev_sample(std::span<const double> x);
/// Population standard deviation (divides by n), as numpy's default and lkp use.
double stddev_population(std::span<const double> x);
/// mmtests' HStddev for harmonic means: sqrt(sum (1/x - 1/H)^2 * H^4 / n).
double hstddev(std::span<const double> x);
/// Coefficient of variation in percent: 100 * stddev / mean (0 when mean is 0).
double coeff_var(double stddev, double mean);
/*
 * mmtests' BAmean-P / BHmean-P: the mean of the best P percent of the samples
 * (sorted best-first: ascending when lower is better), at least one sample.
 */
double best_mean(std::span<const double> x, int pct, bool higher_is_better, bool harmonic);

/*
 * P(T > t) for Student's t with df degrees of freedom: df may be fractional (Welch)
 * or +inf (the standard normal); t = +-inf gives 0 and 1. NaN when t is NaN or df is
 * not > 0. Boost.Math: cdf(complement(students_t_distribution(df), t)).
 */
double student_t_sf(double t, double df);

struct t_test_result {
    double t = 0;  ///< |m1 - m2| / SE
    double df = 0;
    double p = 1;  ///< two-sided
    bool significant = false;
};

/// Welch's unequal-variance t-test (Welch-Satterthwaite df), two-sided; significant iff p < alpha.
t_test_result welch_t_test(std::span<const double> a, std::span<const double> b, double alpha = 0.05);

/*
 * The t with P(T > t) = p for Student's t with df > 0 degrees of freedom (fractional, or
 * +inf), 0 < p < 1 (t < 0 for p > 0.5); NaN for p outside (0, 1), df not > 0 or NaN.
 * Boost.Math: quantile(complement(students_t_distribution(df), p)).
 */
double student_t_isf(double p, double df);

struct interval {
    double lo = 0, hi = 0; ///< NaN when there is no interval (fewer than 2 samples a side)
};

/*
 * The (1 - alpha) confidence interval of mean(b) - mean(a) with Welch's
 * standard error and Welch-Satterthwaite df: the interval welch_t_test tests.
 * Zero spread on both sides: the difference itself.
 */
interval welch_difference_interval(std::span<const double> a, std::span<const double> b,
                                   double alpha = 0.05);

/*
 * mmtests 2018-10..2024-11 (Matt Fleming): SE = sqrt(s1^2/n1 + s2^2/n2),
 * t = |m1 - m2| / SE with the given means (Amean or Hmean row), df = n1 + n2 - 2,
 * two-sided p; significant iff p < alpha (default 0.10). Zero variance in
 * both: significant iff the means differ.
 */
t_test_result mmtests_t_test(double m1, std::span<const double> a, double m2,
                             std::span<const double> b, double alpha = 0.10);

struct ci_test_result {
    double r = 0; ///< (m_a - m_b) / (h_a + h_b), h = qnorm(0.975) * s
    bool significant = false;
};

/*
 * mmtests since 2024-11-28 (Jan Kara): each mean gets the interval
 * m +- 1.96 s (s the sample stddev, not divided by sqrt(n)); significant iff
 * the intervals do not overlap, |r| > 1. Zero spread: r is the raw difference.
 */
ci_test_result mmtests_ci_test(double m_a, double s_a, double m_b, double s_b);

/// mmtests pdiff (higher is better): new/base*100 - 100; 0 if equal or new = 0, 100 if base = 0.
double mmtests_pdiff(double base, double now);
/// mmtests pndiff (lower is better): 100 - new/base*100; 0 if equal, 100 if new = 0, -99 if base = 0.
double mmtests_pndiff(double base, double now);

/*
 * AMD's pct imp, positive = better. Lower is better: the negation of
 * (new/base - 1) * 100, which is why the baseline column prints "-0.00";
 * higher is better: (new/base - 1) * 100.
 */
double amd_pct_imp(double base, double now, bool higher_is_better);

/// lkp %change: 100 * (new - base) / base, base 0 replaced by 1e-100 (not sign-normalised).
double lkp_change(double base, double now);
/*
 * lkp's "changed" test: sort both sets, drop n >> 5 (at most 3) samples from
 * each end, then the sets are separated iff min(B) > mid(A) and mid(B) > max(A),
 * or the mirror case; mid is the middle element of the trimmed set.
 */
bool lkp_separated(std::span<const double> base, std::span<const double> now);

} // namespace schedlab
