// SPDX-License-Identifier: GPL-2.0-only
#include "sim/rng.h"

#include <gtest/gtest.h>

#include <cmath>

namespace schedlab {
namespace {

TEST(rng_stream, same_seed_and_name_give_the_same_sequence)
{
    rng_stream a(42, "workload/x"), b(42, "workload/x");
    for (int i = 0; i < 1000; ++i)
        ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(rng_stream, different_names_or_seeds_give_different_sequences)
{
    rng_stream a(42, "a"), b(42, "b"), c(43, "a");
    EXPECT_NE(a.next_u64(), b.next_u64());
    rng_stream a2(42, "a");
    EXPECT_NE(a2.next_u64(), c.next_u64());
}

// Golden values: the sequence must not change between platforms, compilers or
// releases, since results are compared across machines. They were recorded from
// this implementation (x86-64, g++ 12); change them only with a deliberate,
// documented change of every seeded result.
TEST(rng_stream, sequence_is_pinned)
{
    rng_stream a(1, "pinned");
    EXPECT_EQ(a.next_u64(), 0x0e9828ac4b6737d3ULL);
    EXPECT_EQ(a.next_u64(), 0x95723ad10da03792ULL);
    EXPECT_EQ(fnv1a64("abc"), 0xe71fa2190541574bULL); // published FNV-1a 64 test vector
}

TEST(rng_stream, below_stays_in_range_and_is_roughly_uniform)
{
    rng_stream r(3, "uniform");
    int counts[10] = {};
    for (int i = 0; i < 100000; ++i) {
        const u64 v = r.below(10);
        ASSERT_LT(v, 10u);
        ++counts[v];
    }
    for (int c : counts)
        EXPECT_NEAR(c, 10000, 600);
}

TEST(rng_stream, exponential_has_the_requested_mean)
{
    rng_stream r(5, "exp");
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i)
        sum += static_cast<double>(r.exponential(1000));
    EXPECT_NEAR(sum / n, 1000.0, 15.0);
}

TEST(rng_stream, jitter_stays_within_its_band)
{
    rng_stream r(9, "jitter");
    bool varied = false;
    for (int i = 0; i < 10000; ++i) {
        const sim_dur v = r.jitter(10000, 5);
        ASSERT_GE(v, 9500);
        ASSERT_LE(v, 10500);
        varied |= v != 10000;
    }
    EXPECT_TRUE(varied);
    EXPECT_EQ(r.jitter(10000, 0), 10000);
}

// jitter() is v * ppm / 10^6 truncated toward zero, the ppm drawn by range(): the same
// as the 128-bit product for short and long durations, negative factors (pct > 100)
// and durations whose product does not fit in 64 bits.
TEST(rng_stream, jitter_is_the_exact_product_at_any_size)
{
    const sim_dur vs[] = {1, 7, 999, 123456, 987654321, 4'611'686'018'427LL, 4'700'000'000'000LL,
                          1'000'000'000'000'000LL, -5, -987654321};
    const u32 pcts[] = {1, 5, 30, 100, 250};
    rng_stream r(3, "jitter-exact"), ref(3, "jitter-exact");
    for (int round = 0; round < 200; ++round)
        for (const sim_dur v : vs)
            for (const u32 pct : pcts) {
                const s64 spread = static_cast<s64>(pct) * 10000;
                const s64 ppm = 1000000 + ref.range(-spread, spread);
                const auto want = static_cast<sim_dur>((static_cast<__int128>(v) * ppm) / 1000000);
                ASSERT_EQ(r.jitter(v, pct), want) << "v " << v << " pct " << pct;
            }
}

} // namespace
} // namespace schedlab
