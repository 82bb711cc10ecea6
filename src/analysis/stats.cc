// SPDX-License-Identifier: GPL-2.0-only
#include "analysis/stats.h"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace schedlab {

namespace {

std::vector<double> sorted(std::span<const double> x)
{
    std::vector<double> v(x.begin(), x.end());
    std::sort(v.begin(), v.end());
    return v;
}

double variance_sample(std::span<const double> x)
{
    if (x.size() < 2)
        return 0;
    const double m = amean(x);
    double ss = 0;
    for (double v : x)
        ss += (v - m) * (v - m);
    return ss / static_cast<double>(x.size() - 1);
}

} // namespace

double amean(std::span<const double> x)
{
    if (x.empty())
        return 0;
    double s = 0;
    for (double v : x)
        s += v;
    return s / static_cast<double>(x.size());
}

double hmean(std::span<const double> x)
{
    if (x.empty())
        return std::numeric_limits<double>::quiet_NaN();
    double s = 0;
    for (double v : x) {
        if (v <= 0)
            return std::numeric_limits<double>::quiet_NaN();
        s += 1.0 / v;
    }
    return static_cast<double>(x.size()) / s;
}

double median(std::span<const double> x)
{
    if (x.empty())
        return 0;
    const std::vector<double> v = sorted(x);
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double min_of(std::span<const double> x)
{
    return x.empty() ? 0 : *std::min_element(x.begin(), x.end());
}

double max_of(std::span<const double> x)
{
    return x.empty() ? 0 : *std::max_element(x.begin(), x.end());
}

double stddev_sample(std::span<const double> x) { return std::sqrt(variance_sample(x)); }

double stddev_population(std::span<const double> x)
{
    if (x.empty())
        return 0;
    const double m = amean(x);
    double ss = 0;
    for (double v : x)
        ss += (v - m) * (v - m);
    return std::sqrt(ss / static_cast<double>(x.size()));
}

double hstddev(std::span<const double> x)
{
    const double h = hmean(x);
    if (!std::isfinite(h))
        return std::numeric_limits<double>::quiet_NaN();
    double ss = 0;
    for (double v : x)
        ss += (1.0 / v - 1.0 / h) * (1.0 / v - 1.0 / h);
    return std::sqrt(ss * h * h * h * h / static_cast<double>(x.size()));
}

double coeff_var(double stddev, double mean) { return mean == 0 ? 0 : 100.0 * stddev / mean; }

double best_mean(std::span<const double> x, int pct, bool higher_is_better, bool harmonic)
{
    if (x.empty())
        return 0;
    std::vector<double> v = sorted(x);
    if (higher_is_better)
        std::reverse(v.begin(), v.end());
    std::size_t keep = v.size() * static_cast<std::size_t>(pct) / 100;
    keep = std::clamp<std::size_t>(keep, 1, v.size());
    const std::span<const double> best(v.data(), keep);
    return harmonic ? hmean(best) : amean(best);
}

namespace {

/*
 * Boost.Math's Student's t with errors as NaN (and overflow as +-inf) instead of
 * exceptions: the callers check their arguments first (student_t_sf, student_t_isf), and a
 * sample holding NaN or inf (a metric of a failed run) must give p = NaN, not abort a
 * comparison.
 */
/*
 * Double throughout (promote_double<false>): by default Boost.Math evaluates a double
 * distribution in long double, and its long double special functions fill their tables in
 * static initialisers, which throw overflow_error under valgrind (it computes x87 long
 * double in 64 bits), so the binary aborted before main() there (bench/cachegrind.sh).
 * Double's 53 bits are far beyond the p-values and intervals the reports print.
 */
using nan_policy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::promote_double<false>>;
using students_t = boost::math::students_t_distribution<double, nan_policy>;

} // namespace

double student_t_sf(double t, double df)
{
    if (std::isnan(t) || !(df > 0))
        return std::numeric_limits<double>::quiet_NaN();
    return boost::math::cdf(boost::math::complement(students_t(df), t));
}

t_test_result welch_t_test(std::span<const double> a, std::span<const double> b, double alpha)
{
    t_test_result r;
    const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
    if (a.size() < 2 || b.size() < 2)
        return r;
    const double va = variance_sample(a) / na, vb = variance_sample(b) / nb;
    const double diff = std::fabs(amean(a) - amean(b));
    if (va + vb == 0) {
        r.significant = diff > 0;
        r.p = diff > 0 ? 0 : 1;
        return r;
    }
    r.t = diff / std::sqrt(va + vb);
    r.df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
    r.p = 2 * student_t_sf(r.t, r.df);
    r.significant = r.p < alpha;
    return r;
}

double student_t_isf(double p, double df)
{
    if (!(p > 0 && p < 1) || !(df > 0))
        return std::numeric_limits<double>::quiet_NaN();
    return boost::math::quantile(boost::math::complement(students_t(df), p));
}

interval welch_difference_interval(std::span<const double> a, std::span<const double> b,
                                   double alpha)
{
    const double nan = std::nan("");
    if (a.size() < 2 || b.size() < 2)
        return {nan, nan};
    const double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
    const double va = variance_sample(a) / na, vb = variance_sample(b) / nb;
    const double diff = amean(b) - amean(a);
    if (va + vb == 0)
        return {diff, diff};
    const double df = (va + vb) * (va + vb) / (va * va / (na - 1) + vb * vb / (nb - 1));
    const double h = student_t_isf(alpha / 2, df) * std::sqrt(va + vb);
    return {diff - h, diff + h};
}

t_test_result mmtests_t_test(double m1, std::span<const double> a, double m2,
                             std::span<const double> b, double alpha)
{
    t_test_result r;
    if (a.empty() || b.empty())
        return r;
    const double se = std::sqrt(variance_sample(a) / static_cast<double>(a.size()) +
                                variance_sample(b) / static_cast<double>(b.size()));
    r.df = static_cast<double>(a.size() + b.size()) - 2;
    const double diff = std::fabs(m1 - m2);
    if (se == 0 || r.df <= 0) {
        r.significant = se == 0 && diff > 0;
        r.p = r.significant ? 0 : 1;
        return r;
    }
    r.t = diff / se;
    r.p = 2 * student_t_sf(r.t, r.df);
    r.significant = r.p < alpha;
    return r;
}

ci_test_result mmtests_ci_test(double m_a, double s_a, double m_b, double s_b)
{
    // qnorm(0.975) = 1.959963984540054 (R), mmtests' 1.96: the correctly rounded double, which
    // Boost's long double quantile gave; its double quantile is one ulp off (stats_test
    // checks it against Boost's)
    constexpr double qnorm_975 = 1.959963984540054;
    ci_test_result r;
    const double h = qnorm_975 * (s_a + s_b);
    r.r = h == 0 ? m_a - m_b : (m_a - m_b) / h;
    r.significant = std::fabs(r.r) > 1;
    return r;
}

double mmtests_pdiff(double base, double now)
{
    if (base == now || now == 0)
        return 0;
    if (base == 0)
        return 100;
    return now / base * 100 - 100;
}

double mmtests_pndiff(double base, double now)
{
    if (base == now)
        return 0;
    if (now == 0)
        return 100;
    if (base == 0)
        return -99;
    return 100 - now / base * 100;
}

double amd_pct_imp(double base, double now, bool higher_is_better)
{
    const double rel = (now / base - 1) * 100;
    return higher_is_better ? rel : -rel;
}

double lkp_change(double base, double now)
{
    if (base == 0)
        base = 1e-100;
    return 100.0 * (now - base) / base;
}

bool lkp_separated(std::span<const double> base, std::span<const double> now)
{
    auto trim = [](std::span<const double> x) {
        std::vector<double> v = sorted(x);
        const std::size_t drop = std::min<std::size_t>(v.size() >> 5, 3);
        return std::vector<double>(v.begin() + static_cast<long>(drop),
                                   v.end() - static_cast<long>(drop));
    };
    const std::vector<double> a = trim(base), b = trim(now);
    if (a.empty() || b.empty())
        return false;
    const double mid_a = a[a.size() / 2], mid_b = b[b.size() / 2];
    return (b.front() > mid_a && mid_b > a.back()) || (a.front() > mid_b && mid_a > b.back());
}

} // namespace schedlab
