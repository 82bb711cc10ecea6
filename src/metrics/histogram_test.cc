// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/histogram.h"

#include <gtest/gtest.h>

namespace schedlab {
namespace {

TEST(log_histogram, small_values_are_exact)
{
    log_histogram h;
    for (u64 v = 1; v <= 100; ++v)
        h.add(v);
    EXPECT_EQ(h.percentile(50), 50u);
    EXPECT_EQ(h.percentile(99), 99u);
    EXPECT_EQ(h.percentile(100), 100u);
    EXPECT_EQ(h.max(), 100u);
    EXPECT_DOUBLE_EQ(h.mean(), 50.5);
}

TEST(log_histogram, large_values_keep_a_small_relative_error)
{
    log_histogram h;
    for (u64 v = 1; v <= 100000; ++v)
        h.add(v * 1000);
    for (double p : {50.0, 90.0, 99.0, 99.9}) {
        const double exact = p / 100.0 * 100000 * 1000;
        EXPECT_NEAR(static_cast<double>(h.percentile(p)) / exact, 1.0, 0.01) << p;
    }
}

TEST(log_histogram, merge_equals_adding_everything_to_one)
{
    log_histogram a, b, all;
    for (u64 v = 0; v < 5000; ++v) {
        (v % 3 ? a : b).add(v * 37);
        all.add(v * 37);
    }
    a.merge(b);
    EXPECT_EQ(a.count(), all.count());
    for (double p : {1.0, 50.0, 99.0})
        EXPECT_EQ(a.percentile(p), all.percentile(p));
}

TEST(log_histogram, empty_histogram_reports_zero)
{
    log_histogram h;
    EXPECT_EQ(h.percentile(99), 0u);
    EXPECT_EQ(h.count(), 0u);
}

TEST(log_histogram, coarse_buckets_keep_every_count_and_rebuild_the_coarse_histogram)
{
    log_histogram fine, coarse(4);
    for (u64 v = 0; v < 20000; ++v) {
        fine.add(v * v % 7919 * 131);
        coarse.add(v * v % 7919 * 131);
    }
    const histogram_buckets b = fine.buckets(4);
    u64 total = 0;
    log_histogram rebuilt(4);
    for (std::size_t i = 0; i < b.size(); ++i) {
        total += b[i].second;
        if (i > 0) {
            EXPECT_LT(b[i - 1].first, b[i].first);
        }
        // the bucket's lowest value is a coarse bucket boundary and its end the next one
        EXPECT_GT(log_histogram::bucket_end(b[i].first, 4), b[i].first);
        if (i + 1 < b.size()) {
            EXPECT_LE(log_histogram::bucket_end(b[i].first, 4), b[i + 1].first);
        }
        rebuilt.add(b[i].first, b[i].second);
    }
    EXPECT_EQ(total, fine.count());
    for (double p : {1.0, 50.0, 90.0, 99.0, 100.0})
        EXPECT_EQ(rebuilt.percentile(p), coarse.percentile(p)) << p;
    EXPECT_EQ(log_histogram::bucket_end(5, 4), 6u);      // exact below 16
    EXPECT_EQ(log_histogram::bucket_end(1000, 4), 1024u); // [992, 1024): 16 buckets per octave
    EXPECT_EQ(log_histogram::bucket_end(~0ULL, 4), ~0ULL);
}

} // namespace
} // namespace schedlab
